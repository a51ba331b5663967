"""Picking tags from the document's short candidate list: the model walks a
token trie of every whole output instead of a GBNF grammar.

With the phrase style the output can only be one of a few dozen strings:
`["#A", "#B", "#C"]` for distinct candidates A, B, C of the offer (at most
5 * 4 * 3 = 60). Tokenizing each string gives a trie whose inner nodes are
of two kinds:

- forced (one child): the token is known without the model; forced runs are
  decoded together, in one batch, when the next choice needs their logits;
- a choice (several children): the model's logits after everything before
  it pick the child (greedy: the best, lowest id on ties; else a tempered
  draw among the children).

Invariants: a choice reads logits of exactly the tokens before it (all of
them decoded at consecutive positions of `seq`); the tokens after the last
choice are never decoded (no logits of theirs are ever read), so afterwards
`seq` ends at the last choice's predecessor. The price is one decode per
choice (about `want` + shared-prefix choices) instead of one per token, and
no grammar over the vocabulary. Unlike the grammar, the trie holds only each
string's own tokenization and no repeated item (docs/DESIGN.md, Picking
tags from a token trie).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from localsidecar.backend import Context, Model, choose_among, require_finite
from localsidecar.hashtags.generation import HashtagOutput, TagPhase, TagPlan
from localsidecar.hashtags.sampling import TagSampling


def output_text(items: Sequence[str]) -> str:
    """The one JSON spelling of a tag list: ["#A", "#B"] (display forms without '#')."""
    return json.dumps(["#" + t for t in items], ensure_ascii=False)


@dataclass
class TrieNode:
    children: dict[int, TrieNode] = field(default_factory=dict)
    items: tuple[str, ...] | None = None  # at a leaf: the candidates this output names


def token_trie(model: Model, texts: Sequence[str], want: int, max_tokens: int) -> TrieNode:
    """The trie of output_text(p) tokens for every ordered choice p of `want`
    distinct `texts`; an output longer than max_tokens is left out. A
    tokenization that is a prefix of another's ends where it ends (a leaf
    with children is never walked past). No output fits: a root without
    children."""
    if not 1 <= want <= len(texts):
        raise ValueError(f"cannot pick {want} of {len(texts)} candidates")
    root = TrieNode()
    for items in itertools.permutations(texts, want):
        toks = model.tokenize(output_text(items))
        if len(toks) > max_tokens:
            continue
        node = root
        for t in toks:
            node = node.children.setdefault(t, TrieNode())
        node.items = items
    return root


@dataclass(frozen=True)
class Pick:
    """tokens: the output's tokens; items: the candidates it names, in order;
    choices: how many times the model chose (one decode each)."""

    tokens: list[int]
    items: tuple[str, ...]
    choices: int


def walk(
    ctx: Context,
    seq: int,
    lead: Sequence[int],
    root: TrieNode,
    *,
    temperature: float = 0.0,
    rng: np.random.Generator | None = None,
    penalty: float = 1.0,
    is_content: Callable[[int], bool] = lambda t: True,
) -> Pick:
    """Decode `lead` after the end of `seq`, then walk `root` (see the module
    docstring). penalty: a repetition penalty on content tokens already in the
    output (logit / penalty if positive, * penalty if not), as GrammarSampler."""
    if not lead:
        raise ValueError("the hashtag phase needs a lead-in to decode before the first choice")
    if temperature > 0 and rng is None:
        raise ValueError("a tempered pick needs a random generator")
    pos = ctx.pos_max(seq) + 1
    pending = list(lead)
    out: list[int] = []
    seen: set[int] = set()
    node, choices = root, 0
    while node.children and node.items is None:
        if len(node.children) == 1:
            tok, node = next(iter(node.children.items()))
        else:
            ctx.decode_tokens(pending, pos, (seq,), "last")
            pos += len(pending)
            pending = []
            tok = _choose(ctx.logits(-1), sorted(node.children), seen, penalty, temperature, rng)
            node = node.children[tok]
            choices += 1
        out.append(tok)
        pending.append(tok)
        if is_content(tok):
            seen.add(tok)
    return Pick(out, node.items or (), choices)


def _choose(
    logits: np.ndarray,
    ids: list[int],
    seen: set[int],
    penalty: float,
    temperature: float,
    rng: np.random.Generator | None,
) -> int:
    ids_a = np.asarray(ids, dtype=np.int64)
    x = logits[ids_a].astype(np.float64)
    if penalty != 1.0:
        hit = np.isin(ids_a, np.fromiter(seen, dtype=np.int64, count=len(seen)))
        x = np.where(hit, np.where(x > 0, x / penalty, x * penalty), x)
    require_finite(x)
    return choose_among(ids_a, x, temperature, rng if temperature > 0 else None)


def pick_hashtags(
    ctx: Context,
    model: Model,
    seq: int,
    lead: list[int],
    texts: Sequence[str],
    want: int,
    sampling: TagSampling = TagSampling(),
    started: float | None = None,
) -> tuple[Pick, float]:
    """Pick `want` of the candidate `texts` (display forms without '#') with
    the model after `lead`, fewer when no output of `want` fits
    sampling.max_tokens (none at all, and nothing decoded, when not even one
    fits): returns the pick and the seconds since `started` (default: now)."""
    t0 = time.perf_counter() if started is None else started
    root = TrieNode()
    while want >= 1 and not root.children:  # the token budget may leave room for fewer
        root = token_trie(model, texts, want, sampling.max_tokens)
        want -= 1
    if not root.children:
        return Pick([], (), 0), time.perf_counter() - t0
    tempered = sampling.temperature > 0
    pick = walk(
        ctx,
        seq,
        lead,
        root,
        temperature=sampling.temperature,
        rng=np.random.default_rng(int(sampling.seed) & 0xFFFFFFFF) if tempered else None,
        penalty=sampling.penalty,
        is_content=sampling.counts(model),
    )
    return pick, time.perf_counter() - t0


def pick_from_plan(phase: TagPhase, plan: TagPlan, sampling: TagSampling = TagSampling()) -> HashtagOutput:
    """The phrase style's phase with the trie picker (hashtags.picking):
    plan.want distinct candidates of the offer, then plan.finish. The output
    is always a valid JSON array; `tokens` counts its tokens, decoded or not."""
    if not plan.candidates:
        raise ValueError("the trie picker needs the plan's candidates")
    texts = [c.text for c in plan.candidates]
    pick, wall = pick_hashtags(
        phase.ctx, phase.model, phase.seq, phase.lead, texts, plan.want, sampling, phase.started
    )
    items = ["#" + t for t in pick.items]
    raw = phase.model.detokenize(pick.tokens)  # output_text(pick.items), as tokenized
    return HashtagOutput(plan.finish(items), raw, True, len(pick.tokens), wall, items)


__all__ = ["Pick", "TrieNode", "output_text", "pick_from_plan", "pick_hashtags", "token_trie", "walk"]
