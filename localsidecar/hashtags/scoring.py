"""Picking tags by scoring every offered candidate whole (the default picker).

The model reads the lead-in after the summary, then each candidate's tokens
as the first item of the JSON array (`["#Candidate",`); its log-probability
of those tokens, per token (the mean over the candidate's own tokens, after
those all candidates share), is what it thinks of the candidate in this
document. A candidate's score is ln(salience) + MODEL_WEIGHT * that mean:
the model reorders the salience ranking where it is sure, and the ranking
keeps it from tags a 135M model likes anywhere (short, common strings). The
sum would punish a name for its length (`#MartinONeill`, 4 tokens, against
`#Agent`); per token, the model agrees with blind judges' labels more often
than the ranking alone (docs/hashtags.md). The tags
are the best `want` by score, distinct by meaning (TagPlan.finish).

Invariants: the lead and the candidates' shared first tokens are decoded once
at the end of `seq`; each candidate's own tokens (all but the last, whose
logits nobody reads) are decoded after them and removed again, so every
candidate is read in the same context and `seq` ends with the lead and the
shared tokens. One decode per candidate with more than one token of its
own, plus one: the price grows with the offer, not with the output.
docs/DESIGN.md, Scoring candidates with the model, has the measured effect.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from localsidecar.backend import Context, Model, choose_among, require_finite
from localsidecar.hashtags.candidates import Candidate
from localsidecar.hashtags.generation import HashtagOutput, TagPhase, TagPlan
from localsidecar.hashtags.picking import output_text
from localsidecar.hashtags.sampling import TagSampling

# on the mean log-probability per token: tuned on two blind judgements' labels (docs/hashtags.md)
MODEL_WEIGHT = 0.2


@dataclass(frozen=True)
class Scored:
    """One candidate as the model read it: logprob, the sum of its tokens'
    log-probabilities as the first item; tokens, how many it has after those
    all candidates share; score, ln(salience) + MODEL_WEIGHT * logprob / tokens."""

    candidate: Candidate
    logprob: float
    score: float
    tokens: int


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    require_finite(x)
    m = x.max()
    return x - m - math.log(float(np.exp(x - m).sum()))


def first_item_tokens(model: Model, text: str) -> list[int]:
    """The tokens of `["#text",`: the array's opening and `text` as its first item, closed."""
    return model.tokenize("[" + json.dumps("#" + text, ensure_ascii=False) + ",")


def score_candidates(
    ctx: Context, model: Model, seq: int, lead: Sequence[int], cands: Sequence[Candidate]
) -> list[Scored]:
    """Every candidate's Scored, in the order given (see the module docstring)."""
    if not lead:
        raise ValueError("the hashtag phase needs a lead-in to decode before the candidates")
    toks = [first_item_tokens(model, c.text) for c in cands]
    shared = 0
    while all(len(t) > shared + 1 for t in toks) and len({t[shared] for t in toks}) == 1:
        shared += 1
    pos = ctx.pos_max(seq) + 1
    ctx.decode_tokens([*lead, *toks[0][:shared]], pos, (seq,), "last")
    first = _log_softmax(ctx.logits(-1))
    pos += len(lead) + shared
    out = []
    for c, t in zip(cands, toks):
        own = t[shared:]
        logprob = float(first[own[0]])
        if len(own) > 1:
            ctx.decode_tokens(own[:-1], pos, (seq,), "all")
            for j, nxt in enumerate(own[1:]):
                logprob += float(_log_softmax(ctx.logits(j))[nxt])
            ctx.seq_rm(seq, pos, -1)
        mean = logprob / len(own)
        out.append(Scored(c, logprob, math.log(max(c.score, 1e-9)) + MODEL_WEIGHT * mean, len(own)))
    return out


def ranked_by_score(scored: Sequence[Scored], sampling: TagSampling) -> list[Candidate]:
    """Best first (ties: salience order); with a temperature, successive
    seeded draws from softmax(score / temperature) without replacement."""
    if sampling.temperature <= 0:
        order = sorted(range(len(scored)), key=lambda i: (-scored[i].score, i))
        return [scored[i].candidate for i in order]
    rng = np.random.default_rng(int(sampling.seed) & 0xFFFFFFFF)
    left = list(range(len(scored)))
    out = []
    while left:
        ids = np.asarray(left, dtype=np.int64)
        i = choose_among(ids, np.array([scored[k].score for k in left]), sampling.temperature, rng)
        out.append(scored[i].candidate)
        left.remove(i)
    return out


def pick_by_score(phase: TagPhase, plan: TagPlan, sampling: TagSampling = TagSampling()) -> HashtagOutput:
    """The phrase style's phase with the score picker: every offered
    candidate scored, the best plan.want distinct ones kept (TagPlan.finish),
    fewer when their JSON array exceeds sampling.max_tokens. The output is
    always a valid JSON array; `tokens` counts its tokens (none decoded)."""
    if not plan.candidates:
        raise ValueError("the score picker needs the plan's candidates")
    model = phase.model
    scored = score_candidates(phase.ctx, model, phase.seq, phase.lead, plan.candidates)
    order = ranked_by_score(scored, sampling)
    tags = plan.finish(["#" + c.text for c in order])
    items = [t[1:] for t in tags]
    while items and len(model.tokenize(output_text(items))) > sampling.max_tokens:
        items.pop()
    raw = output_text(items)
    n = len(model.tokenize(raw)) if items else 0
    tags = ["#" + t for t in items]
    return HashtagOutput(tags, raw, True, n, time.perf_counter() - phase.started, tags)


__all__ = [
    "MODEL_WEIGHT",
    "Scored",
    "first_item_tokens",
    "pick_by_score",
    "ranked_by_score",
    "score_candidates",
]
