"""Draft conditions as sequence-id plans over the draft's KV cache.

Sequence 0 is what the draft drafts from; sequence 1 holds prefix + suffix for
the hashtag phase. A token attends to the cells of its first sequence id, so
cells decoded with ids {0, 1} are seen by both, cells of {1} only are hidden
from sequence 0 (docs/DESIGN.md, Attention follows the first sequence id).
Positions inside a sequence must stay consecutive (docs/DESIGN.md,
Consecutive positions): a gap is made only afterwards, with seq_add.

Index space: "committed index" i is a token's index in the bare prompt + the
summary (the target's positions). In the draft, index i >= len(A) sits at
position i + shift.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum, StrEnum

from localsidecar.backend import ConfigError, Context, Logits
from localsidecar.decoding.prompts import PromptTokens


class Seq(IntEnum):
    """The draft's (and the lab's) sequence ids; the target uses SUMMARY only."""

    SUMMARY = 0  # what the draft drafts from: prompt (suffix hidden or not) + summary
    SIDECAR = 1  # prefix + hidden suffix; sees the summary only after the reveal


class Mode(StrEnum):
    """Draft conditions (layouts of the draft's KV cache); see MODE_HELP."""

    REBASED = "rebased"
    MASKED = "masked"
    VISIBLE = "visible"
    DEFERRED = "deferred"
    BASELINE = "baseline"


class Reveal(StrEnum):
    """How the summary is laid out for sequence SIDECAR at the hashtag reveal."""

    SHIFTED = "shifted"  # tail + summary moved +n: prefix, suffix, tail, summary
    OVERLAP = "overlap"  # left at the target's positions, overlapping the suffix


MODES = tuple(m.value for m in Mode)
HASHTAG_MODES = tuple(m.value for m in Mode if m is not Mode.BASELINE)
REVEALS = tuple(r.value for r in Reveal)

MODE_HELP = {
    "rebased": "suffix hidden; summary at the target's positions (overlapping the suffix) - exact baseline alpha",
    "masked": "suffix hidden; summary n positions later (tail emulated: computed unshifted, then moved)",
    "visible": "suffix attended (compound prompt); summary n positions later",
    "deferred": "no suffix during the summary; the hashtag request is a new user turn after it",
    "baseline": "no suffix, no hashtags: the reference alpha",
}


@dataclass
class DraftLayout:
    """Where the draft's summary lives, and how much of it the draft cache holds.

    Only its methods change `n_cached` and `shift`. Invariant: sequence 0 of
    the draft cache holds committed[:n_cached] (the tokens the target
    committed, then, inside a round, the draft's own proposals), committed
    index i at position i + shift for i >= a, and nothing after them.
    """

    mode: Mode
    shift: int  # draft position = committed index + shift, for index >= len(A)
    n_cached: int  # tokens held by sequence 0 (between rounds never the last committed one)
    a: int  # len(A)
    n: int  # len(N)

    def catch_up(self, ctx: Context, committed: list[int], logits: Logits = Logits.LAST) -> int:
        """Decode committed[n_cached:] in one batch (the tokens committed since
        the draft last decoded); returns how many that was."""
        todo = committed[self.n_cached :]
        if todo:
            ctx.decode_tokens(todo, self.n_cached + self.shift, (Seq.SUMMARY,), logits)
        self.n_cached = len(committed)
        return len(todo)

    def push(self, ctx: Context, token: int) -> None:
        """Decode one proposal after what the cache holds (logits for the next)."""
        ctx.decode_tokens([token], self.n_cached + self.shift, (Seq.SUMMARY,), Logits.LAST)
        self.n_cached += 1

    def rollback(self, ctx: Context, keep: int) -> None:
        """Keep at most the first `keep` tokens: drop every cell of sequence 0
        after them (rejected proposals; the last committed token)."""
        self.n_cached = min(self.n_cached, keep)
        ctx.seq_rm(Seq.SUMMARY, self.n_cached + self.shift, -1)

    def shift_summary(self, ctx: Context, delta: int) -> None:
        """Move tail + summary (sequence 0's cells from a on) by `delta` positions."""
        ctx.seq_add(Seq.SUMMARY, self.a, -1, delta)
        self.shift += delta


def prefill_draft(ctx: Context, p: PromptTokens, mode: Mode | str, *, reserve: int) -> DraftLayout:
    """Clear the draft cache and lay out the prompt for `mode`.

    Invariant afterwards: sequence 0 holds bare[:-1] (all but the last token,
    which the first speculative round decodes) in the mode's layout.

    `reserve`: how many more cells sequence 0 will take after prefill (the
    summary plus one draft beyond it). llama.cpp's CPU results depend on the
    KV cell indices a sequence occupies, not only on its positions: with the
    hidden suffix's cells between prefix and summary, rebased logits left a
    fresh baseline context after 7-35 summary tokens and drifted up to 1.4.
    So in rebased and masked the suffix is decoded after a placeholder block
    of len(T) - 1 + reserve cells, which is then freed: tail and summary take
    exactly the cells they take in a suffix-free context (up to `reserve`).
    """
    if mode not in MODES:
        raise ConfigError(f"unknown draft mode {mode!r}")
    mode = Mode(mode)
    A, N, T = p.prefix, p.suffix, p.tail
    a, n = len(A), len(N)
    head_t = T[:-1]
    ctx.clear()
    # Every layout decodes the same segments (A, then N, then T[:-1]) as
    # separate batches: CPU results depend on batch shapes (docs/DESIGN.md,
    # Batch shape changes results), and equal shapes are what make rebased
    # and baseline bit-identical.
    shared = (
        (Seq.SUMMARY,) if mode in (Mode.BASELINE, Mode.DEFERRED, Mode.VISIBLE) else (Seq.SUMMARY, Seq.SIDECAR)
    )
    ctx.decode_tokens(A, 0, shared, Logits.NONE)
    shift = 0
    if mode is Mode.VISIBLE:
        ctx.decode_tokens(N, a, (Seq.SUMMARY,), Logits.NONE)
        shift = n
    elif mode in (Mode.REBASED, Mode.MASKED):
        hold = len(head_t) + max(0, reserve)
        # placeholder cells [a, a + hold) for sequence 0; their content is never read
        ctx.decode_tokens([p.tail[-1]] * hold, a, (Seq.SUMMARY,), Logits.NONE)
        # the suffix only in the sidecar sequence: hidden from sequence 0,
        # in cells after the placeholder block
        ctx.decode_tokens(N, a, (Seq.SIDECAR,), Logits.NONE)
        # frees [a, a + hold) and moves the cache head back to cell a
        ctx.seq_rm(Seq.SUMMARY, a, -1)
    ctx.decode_tokens(head_t, a + shift, (Seq.SUMMARY,), Logits.NONE)
    if mode is Mode.MASKED:
        # emulation (docs/DESIGN.md, Masked emulation): T[:-1] was computed
        # at unshifted positions; move its cells (sequence 0 only) by +n.
        # Everything decoded from here on sits at its true shifted position.
        ctx.seq_add(Seq.SUMMARY, a, a + len(head_t), n)
        shift = n
    return DraftLayout(mode=mode, shift=shift, n_cached=a + len(head_t), a=a, n=n)


# Layouts a draft can take from the target's cache (layout_from_target): the
# summary's cells do not attend the suffix in them, as in the target's.
FROM_TARGET_MODES = (Mode.REBASED, Mode.DEFERRED)


def layout_from_target(
    ctx: Context, target: Context, p: PromptTokens, mode: Mode | str
) -> DraftLayout | None:
    """Lay out the draft cache `ctx` from the target's sequence 0 (bare
    prompt + summary as the target decoded them, saved with
    Context.seq_state only once the mode can use it) instead of prefilling: a draft that drafted nothing (auto) reads no prompt in
    the hashtag phase. The cells carry the target's K/V rows, not the
    draft's own; loading needs the same layer count, row sizes and cache
    types (a pair derived by quantization has them; docs/DESIGN.md, Target
    cells for the hashtag phase). None when the mode has
    the suffix attended or llama.cpp refuses the state (then prefill_draft).

    Invariant afterwards, as after prefill_draft (shift 0): sequence 0 holds
    committed[:n_cached] at the target's positions; in rebased, sequence 1
    holds prefix + suffix, the suffix decoded by the draft attending the
    prefix (shared cells) and hidden from sequence 0."""
    mode = Mode(mode)
    if mode not in FROM_TARGET_MODES:
        return None
    state = target.seq_state(Seq.SUMMARY)
    ctx.clear()
    if not ctx.load_seq_state(state, Seq.SUMMARY):
        ctx.clear()
        return None
    held = ctx.pos_max(Seq.SUMMARY) + 1
    a, n = len(p.prefix), len(p.suffix)
    if mode is Mode.REBASED:
        ctx.seq_cp(Seq.SUMMARY, Seq.SIDECAR, 0, a)
        ctx.decode_tokens(p.suffix, a, (Seq.SIDECAR,), Logits.NONE)
    return DraftLayout(mode=mode, shift=0, n_cached=held, a=a, n=n)


class LazyLayout:
    """A draft layout prefilled the first time it is needed (`get`).

    With --draft-max auto the policy may let the target decode alone for a
    whole summary; then the draft reads the prompt only for what needs it
    next (the hashtag phase), and not at all in modes without one. Until
    `get` the draft cache is untouched; `prefill_s` is what the prefill took.
    """

    def __init__(self, prefill: Callable[[], DraftLayout]):
        self._prefill = prefill
        self.layout: DraftLayout | None = None
        self.prefill_s = 0.0

    @classmethod
    def ready(cls, layout: DraftLayout) -> LazyLayout:
        """An already prefilled layout (the fixed --draft-max path)."""
        lazy = cls(lambda: layout)
        lazy.layout = layout
        return lazy

    @property
    def prefilled(self) -> bool:
        return self.layout is not None

    def adopt(self, make: Callable[[], DraftLayout | None]) -> bool:
        """Take the layout `make` builds instead of prefilling (None: it
        could not); its seconds count as prefill_s. False when a layout
        exists already or `make` gave none."""
        if self.layout is not None:
            return False
        t0 = time.perf_counter()
        self.layout = make()
        self.prefill_s = time.perf_counter() - t0
        return self.layout is not None

    def get(self) -> DraftLayout:
        if self.layout is None:
            t0 = time.perf_counter()
            self.layout = self._prefill()
            self.prefill_s = time.perf_counter() - t0
        return self.layout


def prefill_target(ctx: Context, p: PromptTokens) -> None:
    """Clear the target cache and decode bare[:-1] in sequence 0, in the same
    segments as the draft (A, then T[:-1])."""
    ctx.clear()
    ctx.decode_tokens(p.prefix, 0, (Seq.SUMMARY,), Logits.NONE)
    ctx.decode_tokens(p.tail[:-1], len(p.prefix), (Seq.SUMMARY,), Logits.NONE)


def rewind_target(ctx: Context, p: PromptTokens) -> bool:
    """Trim the target's sequence 0 back to what prefill_target leaves
    (bare[:-1]) when it holds the whole prompt and more; False when it does
    not (then prefill_target). llama.cpp moves its slot search back to the
    first freed cell, so the tokens decoded next land in the cells a fresh
    prefill gives them: the same logits (tests/test_layouts.py)."""
    n = len(p.bare) - 1
    if ctx.pos_min(Seq.SUMMARY) != 0 or ctx.pos_max(Seq.SUMMARY) < n - 1:
        return False
    ctx.seq_rm(Seq.SUMMARY, n)
    return ctx.pos_max(Seq.SUMMARY) == n - 1


def decode_rows(ctx: Context, tokens: list[int], pos0: int, seq: int = Seq.SUMMARY):
    """Decode `tokens` in chunks of n_batch (the same chunking on every path),
    logits for all; yields (offset, float32 view of the rows)."""
    for s in range(0, len(tokens), ctx.n_batch):
        chunk = tokens[s : s + ctx.n_batch]
        ctx.decode_tokens(chunk, pos0 + s, (seq,), Logits.ALL)
        yield s, ctx.logits_rows()


def reveal_for_hashtags(
    ctx: Context, layout: DraftLayout, p: PromptTokens, reveal: Reveal | str = Reveal.SHIFTED
) -> tuple[int, list[int]]:
    """Make the hashtag instruction visible to the summary's continuation.

    Precondition: sequence 0 holds exactly the bare prompt + summary (no EOG).
    Returns (sequence id to generate in, tokens to decode before generating).
    """
    if layout.mode == Mode.BASELINE:
        raise ValueError("baseline has no hashtag phase")
    if layout.mode == Mode.VISIBLE:
        return Seq.SUMMARY, p.hashtag_lead
    if layout.mode == Mode.DEFERRED:
        return Seq.SUMMARY, p.deferred_turn
    a = layout.a
    if layout.mode == Mode.REBASED and reveal == Reveal.SHIFTED:
        # tail + summary cells belong to sequence 0 only: moving them moves no
        # shared cell (docs/DESIGN.md, Unified cache shares cells), and
        # sequence 1 then reads prefix, suffix, tail, summary.
        layout.shift_summary(ctx, layout.n)
    elif reveal not in REVEALS:
        raise ConfigError(f"unknown reveal {reveal!r}")
    ctx.seq_cp(Seq.SUMMARY, Seq.SIDECAR, a, -1)
    return Seq.SIDECAR, p.hashtag_lead
