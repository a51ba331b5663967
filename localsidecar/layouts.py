"""Draft conditions as sequence-id plans over the draft's KV cache.

Sequence 0 is what the draft drafts from; sequence 1 holds prefix + suffix for
the hashtag phase. A token attends to the cells of its first sequence id, so
cells decoded with ids {0, 1} are seen by both, cells of {1} only are hidden
from sequence 0 (DESIGN fact 2). Positions inside a sequence must stay
consecutive (fact 1): a gap is made only afterwards, with seq_add.

Index space: "committed index" i is a token's index in the bare prompt + the
summary (the target's positions). In the draft, index i >= len(A) sits at
position i + shift.
"""

from __future__ import annotations

from dataclasses import dataclass

from .backend import Context
from .prompts import PromptTokens

SUMMARY_SEQ = 0
SIDECAR_SEQ = 1

MODES = ("rebased", "masked", "visible", "deferred", "baseline")
HASHTAG_MODES = ("rebased", "masked", "visible", "deferred")
REVEALS = ("shifted", "overlap")

MODE_HELP = {
    "rebased": "suffix hidden; summary at the target's positions (overlapping the suffix) - exact baseline alpha",
    "masked": "suffix hidden; summary n positions later (tail emulated: computed unshifted, then moved)",
    "visible": "suffix attended (compound prompt); summary n positions later",
    "deferred": "no suffix during the summary; the hashtag request is a new user turn after it",
    "baseline": "no suffix, no hashtags: the reference alpha",
}


@dataclass
class DraftLayout:
    """Where the draft's summary lives after prefill."""

    mode: str
    shift: int        # draft position = committed index + shift, for index >= len(A)
    n_cached: int     # committed tokens held by the draft cache (the last one never is)
    a: int            # len(A)
    n: int            # len(N)


def prefill_draft(ctx: Context, p: PromptTokens, mode: str, *, reserve: int) -> DraftLayout:
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
        raise ValueError(f"unknown draft mode {mode!r}")
    A, N, T = p.prefix, p.suffix, p.tail
    a, n = len(A), len(N)
    head_t = T[:-1]
    ctx.clear()
    # Every layout decodes the same segments (A, then N, then T[:-1]) as
    # separate batches: CPU results depend on batch shapes (DESIGN fact 10),
    # and equal shapes are what make rebased and baseline bit-identical.
    shared = (SUMMARY_SEQ,) if mode in ("baseline", "deferred", "visible") else (SUMMARY_SEQ, SIDECAR_SEQ)
    ctx.decode_tokens(A, 0, shared, logits="none")
    shift = 0
    if mode == "visible":
        ctx.decode_tokens(N, a, (SUMMARY_SEQ,), logits="none")
        shift = n
    elif mode in ("rebased", "masked"):
        hold = len(head_t) + max(0, reserve)
        # placeholder cells [a, a + hold) for sequence 0; their content is never read
        ctx.decode_tokens([p.tail[-1]] * hold, a, (SUMMARY_SEQ,), logits="none")
        # the suffix only in the sidecar sequence: hidden from sequence 0,
        # in cells after the placeholder block
        ctx.decode_tokens(N, a, (SIDECAR_SEQ,), logits="none")
        # frees [a, a + hold) and moves the cache head back to cell a
        ctx.seq_rm(SUMMARY_SEQ, a, -1)
    ctx.decode_tokens(head_t, a + shift, (SUMMARY_SEQ,), logits="none")
    if mode == "masked":
        # emulation (DESIGN fact 5): T[:-1] was computed at unshifted
        # positions; move its cells (sequence 0 only) by +n. Everything
        # decoded from here on sits at its true shifted position.
        ctx.seq_add(SUMMARY_SEQ, a, a + len(head_t), n)
        shift = n
    return DraftLayout(mode=mode, shift=shift, n_cached=a + len(head_t), a=a, n=n)


def prefill_target(ctx: Context, p: PromptTokens) -> None:
    """Clear the target cache and decode bare[:-1] in sequence 0, in the same
    segments as the draft (A, then T[:-1])."""
    ctx.clear()
    ctx.decode_tokens(p.prefix, 0, (SUMMARY_SEQ,), logits="none")
    ctx.decode_tokens(p.tail[:-1], len(p.prefix), (SUMMARY_SEQ,), logits="none")


def reveal_for_hashtags(ctx: Context, layout: DraftLayout, p: PromptTokens, reveal: str = "shifted") -> tuple[int, list[int]]:
    """Make the hashtag instruction visible to the summary's continuation.

    Precondition: sequence 0 holds exactly the bare prompt + summary (no EOG).
    Returns (sequence id to generate in, tokens to decode before generating).
    """
    if layout.mode == "baseline":
        raise ValueError("baseline has no hashtag phase")
    if layout.mode == "visible":
        return SUMMARY_SEQ, p.hashtag_lead
    if layout.mode == "deferred":
        return SUMMARY_SEQ, p.deferred_turn
    a = layout.a
    if layout.mode == "rebased" and reveal == "shifted":
        # tail + summary cells belong to sequence 0 only: moving them moves no
        # shared cell, and sequence 1 then reads prefix, suffix, tail, summary.
        ctx.seq_add(SUMMARY_SEQ, a, -1, layout.n)
        layout.shift = layout.n
    elif reveal not in REVEALS:
        raise ValueError(f"unknown reveal {reveal!r}")
    ctx.seq_cp(SUMMARY_SEQ, SIDECAR_SEQ, a, -1)
    return SIDECAR_SEQ, p.hashtag_lead
