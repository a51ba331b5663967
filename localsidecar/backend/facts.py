"""The host's numeric facts (docs/DESIGN.md): does llama.cpp's result depend
on where the KV cells lie, on the batch shape, on the thread count past 256
cells, on mixing sequences in one batch? Each is a property of the kernels a
build runs on a CPU (and of the buffer types the weights went to), not of
llama.cpp: one host computes these bit for bit, another drifts by a logit.
The project's code is correct either way (it never relies on the drift, and
where it needs exactness it decodes identical segments in identical cells).

Used by tests/test_llama_facts.py (which asserts only what the code relies
on) and by scripts/host_facts.py (one table for a bug report).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .context import Context
from .model import Model

A, B = 0, 1  # two sequence ids (the project's SUMMARY and SIDECAR)


@dataclass
class Comparison:
    """Two logit tables of the same tokens computed two ways. exact: bit for
    bit equal; max_abs: largest |difference|; agree: share of rows with the
    same argmax."""

    exact: bool
    max_abs: float
    agree: float

    @classmethod
    def of(cls, x: np.ndarray, y: np.ndarray) -> Comparison:
        if x.shape != y.shape:
            raise ValueError(f"shapes differ: {x.shape} vs {y.shape}")
        return cls(
            bool(np.array_equal(x, y)),
            float(np.max(np.abs(x - y))) if x.size else 0.0,
            float(np.mean(x.argmax(1) == y.argmax(1))) if x.size else 1.0,
        )

    def within_noise(self, agree: float = 0.9, max_abs: float = 3.0) -> bool:
        """Exact, or a drift too small to be another model: most argmaxes agree."""
        return self.exact or (self.agree >= agree and self.max_abs < max_abs)

    def describe(self) -> str:
        return (
            "exact"
            if self.exact
            else f"differs: max |Δ| {self.max_abs:.3g}, argmax agreement {self.agree:.2f}"
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def tail_logits(
    ctx: Context, tail: Sequence[int], pos0: int, seq: int = A, one_by_one: bool = False
) -> np.ndarray:
    if not one_by_one:
        ctx.decode_tokens(list(tail), pos0, (seq,), "all")
        return np.array(ctx.logits_rows())
    rows = []
    for i, tok in enumerate(tail):
        ctx.decode_tokens([tok], pos0 + i, (seq,), "last")
        rows.append(np.array(ctx.logits(-1)))
    return np.stack(rows)


def cell_placement(
    model: Model, prefix: Sequence[int], hidden: Sequence[int], tail: Sequence[int], *, reserve: bool = False
) -> Comparison:
    """The tail after `prefix` with `hidden`'s cells (another sequence) lying
    between them, against the same tail in a fresh context: same tokens,
    positions and attended cells, other cell indices. reserve: the precaution
    of layouts.prefill_draft (hidden decoded after a placeholder block that is
    then freed, so the tail takes the cells it takes in a fresh context)."""
    rows = []
    for with_hidden in (True, False):
        c = Context(model, 1024, n_seq_max=2, kv_unified=True, n_threads=1)
        try:
            c.decode_tokens(list(prefix), 0, (A, B), "none")
            if with_hidden and reserve:
                c.decode_tokens([tail[0]] * len(tail), len(prefix), (A,), "none")
                c.decode_tokens(list(hidden), len(prefix), (B,), "none")
                c.seq_rm(A, len(prefix), -1)
            elif with_hidden:
                c.decode_tokens(list(hidden), len(prefix), (B,), "none")
            rows.append(tail_logits(c, tail, len(prefix)))
        finally:
            c.close()
    return Comparison.of(*rows)


def batch_shape(model: Model, prefix: Sequence[int], tail: Sequence[int]) -> Comparison:
    """The tail as one batch against one token at a time."""
    c = Context(model, 1024, n_threads=1)
    try:
        c.decode_tokens(list(prefix), 0, (A,), "none")
        batched = tail_logits(c, tail, len(prefix))
        c.seq_rm(A, len(prefix), -1)
        single = tail_logits(c, tail, len(prefix), one_by_one=True)
    finally:
        c.close()
    return Comparison.of(batched, single)


def thread_count(
    model: Model, tokens: Sequence[int], start: int = 248, n: int = 16
) -> tuple[Comparison, Comparison]:
    """Single tokens in cells start..start+n-1 at 1 and at 2 threads: the
    comparison of the cells below 256, and of those from 256 on."""
    if len(tokens) < start + n:
        raise ValueError(f"need {start + n} tokens, got {len(tokens)}")
    rows = {}
    for threads in (1, 2):
        c = Context(model, 512, n_threads=threads)
        try:
            c.decode_tokens(list(tokens[:start]), 0, (A,), "none")
            rows[threads] = tail_logits(c, tokens[start : start + n], start, one_by_one=True)
        finally:
            c.close()
    below = 256 - start
    return Comparison.of(rows[1][:below], rows[2][:below]), Comparison.of(rows[1][below:], rows[2][below:])


def mixed_batch(model: Model, prefix: Sequence[int], tail: Sequence[int], unified: bool) -> Comparison:
    """Two sequences' tails over a shared prefix in one batch, against each
    decoded alone."""
    half = len(tail) // 2
    a, b = list(tail[:half]), list(tail[half:])
    c = Context(model, 1024, n_seq_max=2, kv_unified=unified, n_threads=1)
    try:

        def prefill() -> None:
            c.clear()
            c.decode_tokens(list(prefix), 0, (A,), "none")
            c.seq_cp(A, B)

        prefill()
        c.decode_plan(
            [(t, len(prefix) + i, (A,), True) for i, t in enumerate(a)]
            + [(t, len(prefix) + i, (B,), True) for i, t in enumerate(b)]
        )
        mixed = np.array(c.logits_rows())
        prefill()
        alone_a = tail_logits(c, a, len(prefix), A)
        prefill()
        alone_b = tail_logits(c, b, len(prefix), B)
    finally:
        c.close()
    return Comparison.of(mixed, np.concatenate([alone_a, alone_b]))


TEXT = (
    "The bakery on Mill Street opened at six, as it had every morning for forty years. Its owner, a "
    "retired engineer, kept a notebook of every loaf: flour, water, the temperature of the room, and how "
    "the crust sounded when tapped. On Saturday the river clean-up drew forty volunteers, who pulled "
    "tyres, a shopping trolley and two hundred kilograms of plastic from the banks before noon. The "
    "council promised bins at both bridges and a second clean-up in spring. Meanwhile the library "
    "extended its opening hours, the school choir rehearsed for the winter concert, and the football "
    "club repainted the stand with paint the hardware shop gave at cost. Residents said the town felt "
    "busier than it had in years, and the bakery sold out of rye bread by nine. A survey of the river "
    "counted herons, kingfishers and an otter, the first seen there since the mill closed. The "
    "volunteers planted willows along the path, and children from the school painted signs asking "
    "walkers to keep dogs on leads near the nesting birds. The mayor thanked everyone, the baker brought "
    "coffee and rolls, and the organisers set a date for the next clean-up, a Saturday in April."
)
HIDDEN = " After the summary, write three hashtags as a JSON array of strings."
PREFIX, TAIL = 16, 64  # in batches this long the drifts of docs/DESIGN.md were measured


def measure(model: Model) -> dict[str, Comparison]:
    """Every fact on `model`, on built-in text."""
    toks = model.tokenize(TEXT)
    toks = (toks * (1 + 270 // max(1, len(toks))))[:270]
    prefix, tail, hidden = toks[:PREFIX], toks[PREFIX + 40 : PREFIX + 40 + TAIL], model.tokenize(HIDDEN)
    below, past = thread_count(model, toks)
    return {
        "cell placement": cell_placement(model, prefix, hidden, tail),
        "cell placement, cells reserved": cell_placement(model, prefix, hidden, tail, reserve=True),
        "batch shape": batch_shape(model, prefix, tail),
        "threads 1 vs 2, cells < 256": below,
        "threads 1 vs 2, cells >= 256": past,
        "mixed batch, unified cache": mixed_batch(model, prefix, tail, True),
        "mixed batch, split cache": mixed_batch(model, prefix, tail, False),
    }
