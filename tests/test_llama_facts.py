"""The llama.cpp facts the code relies on (docs/DESIGN.md), each measured on
the embedded draft model through the backend.

These tests assert llama.cpp's behaviour, not ours: when one fails after a
llama-cpp-python upgrade, the section of docs/DESIGN.md it names, and the code
built around it, need another look. Each decodes about a hundred tokens at most.

Numerical noise (cell placement, batch shape, thread count, mixed batches) is
a property of the kernels a build runs on a CPU: some hosts compute these bit
for bit. So those tests assert only what the code relies on (exact where it
takes a precaution, within noise elsewhere) and record which case held
(`record_property`, in the JUnit XML; `scripts/host_facts.py` prints them).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from localsidecar.backend import Context, DecodeError, facts
from localsidecar.decoding.layouts import Seq

from .helpers import ROOT

pytestmark = pytest.mark.slow  # every test here runs the models (seconds to minutes)

PREFIX = 16
TAIL = 64  # tokens decoded after the prefix: in batches this long, the drifts below were measured


@pytest.fixture(scope="module")
def tokens(engine, example_texts) -> tuple[list[int], list[int], list[int]]:
    """(prefix, a hidden suffix, a tail): token ids of real text."""
    prefix = engine.draft.tokenize(example_texts["bakery"])[:PREFIX]
    suffix = engine.draft.tokenize(" After the summary, write three hashtags as a JSON array of strings.")
    tail = engine.draft.tokenize(example_texts["river"])[:TAIL]
    assert len(prefix) == PREFIX and len(tail) == TAIL and len(suffix) > 10
    return prefix, suffix, tail


@pytest.fixture()
def ctx(engine):
    c = Context(engine.draft, 1024, n_seq_max=2, kv_unified=True, n_threads=1)
    yield c
    c.close()


def tail_logits(
    ctx: Context, tail: list[int], pos0: int, seq: int = Seq.SUMMARY, one_by_one: bool = False
) -> np.ndarray:
    if not one_by_one:
        return facts.tail_logits(ctx, tail, pos0, seq)
    rows = []
    for i, tok in enumerate(tail):
        ctx.decode_tokens([tok], pos0 + i, (seq,), "last")
        rows.append(np.array(ctx.logits(-1)))
    return np.stack(rows)


# docs/DESIGN.md, Consecutive positions
def test_positions_inside_a_sequence_stay_consecutive(ctx, tokens):
    prefix = tokens[0][:8]
    ctx.decode_tokens(prefix, 0, (Seq.SUMMARY,), "none")
    with pytest.raises(DecodeError) as err:
        ctx.decode_tokens([prefix[0]], len(prefix) + 3, (Seq.SUMMARY,), "last")  # a gap of three positions
    assert err.value.code == -1 and "consecutive" in str(err.value)
    ctx.decode_tokens([prefix[0]], len(prefix), (Seq.SUMMARY,), "last")  # max position + 1 decodes
    ctx.decode_tokens(prefix[:2], 500, (Seq.SIDECAR,), "last")  # a sequence without cells starts anywhere
    # a gap made afterwards with seq_add is allowed; decoding continues after the moved cells
    ctx.seq_add(Seq.SUMMARY, 4, -1, 10)
    assert ctx.pos_max(Seq.SUMMARY) == len(prefix) + 10
    ctx.decode_tokens([prefix[1]], len(prefix) + 11, (Seq.SUMMARY,), "last")


# docs/DESIGN.md, Attention follows the first sequence id
def test_cells_of_another_sequence_are_invisible(ctx, tokens):
    prefix, suffix, tail = tokens
    other = list(reversed(suffix))  # same length, other text

    def logits(hidden: list[int], attended: bool) -> np.ndarray:
        ctx.clear()
        ctx.decode_tokens(prefix, 0, (Seq.SUMMARY, Seq.SIDECAR), "none")
        ctx.decode_tokens(
            hidden, len(prefix), (Seq.SUMMARY, Seq.SIDECAR) if attended else (Seq.SIDECAR,), "none"
        )
        return tail_logits(ctx, tail[:8], len(prefix) + (len(hidden) if attended else 0))

    assert np.array_equal(logits(suffix, attended=False), logits(other, attended=False))
    assert np.max(np.abs(logits(suffix, attended=True) - logits(other, attended=True))) > 1e-2


# docs/DESIGN.md, Unified cache shares cells
@pytest.mark.parametrize("unified", [True, False])
def test_seq_add_moves_shared_cells_for_every_sequence_in_a_unified_cache(engine, tokens, unified):
    c = Context(engine.draft, 256, n_seq_max=2, kv_unified=unified, n_threads=1)
    try:
        c.decode_tokens(tokens[0][:6], 0, (Seq.SUMMARY,), "none")
        c.seq_cp(Seq.SUMMARY, Seq.SIDECAR)
        c.seq_add(Seq.SUMMARY, 0, -1, 10)
        assert c.pos_max(Seq.SUMMARY) == 15
        # unified: SIDECAR holds the same cells, so they moved for it too; split: it holds a copy
        assert c.pos_max(Seq.SIDECAR) == (15 if unified else 5)
    finally:
        c.close()


# docs/DESIGN.md, Cell placement changes results
def test_other_cells_change_logits_at_most_by_noise_and_reserved_cells_make_them_exact(
    engine, tokens, record_property
):
    prefix, suffix, tail = tokens
    # same tokens, positions and attended cells: only the cell indices differ
    inline = facts.cell_placement(engine.draft, prefix, suffix, tail)
    record_property("cell placement", inline.describe())  # host-dependent: exact on some, ~1 logit on others
    assert inline.within_noise(agree=0.9)
    # what the code relies on (layouts.prefill_draft): the reserved block makes it exact on every host
    reserved = facts.cell_placement(engine.draft, prefix, suffix, tail, reserve=True)
    assert reserved.exact, reserved.describe()


# docs/DESIGN.md, Batch shape changes results
def test_one_token_at_a_time_and_one_batch_agree_within_noise(engine, tokens, record_property):
    prefix, _, tail = tokens
    cmp = facts.batch_shape(engine.draft, prefix, tail)
    record_property("batch shape", cmp.describe())
    assert cmp.within_noise(agree=0.9)


# docs/DESIGN.md, Batch shape changes results (the thread count)
def test_the_thread_count_changes_results_at_most_by_noise(engine, example_texts, record_property):
    toks = engine.draft.tokenize(example_texts["bakery"] + "\n\n" + example_texts["river"])
    below, past = facts.thread_count(engine.draft, toks)  # single tokens in cells 248..263 at 1 and 2 threads
    record_property("threads, cells < 256", below.describe())
    record_property("threads, cells >= 256", past.describe())
    assert below.within_noise() and past.within_noise()


def _rows_by_threads(engine, example_texts, flash_attn: bool) -> dict[int, np.ndarray]:
    """Logits at 1 and 2 threads: single tokens at positions 248..263 (cells
    248..263), a batch of 5 tokens, then single tokens again."""
    text = example_texts["bakery"] + "\n\n" + example_texts["river"]
    toks = engine.draft.tokenize(text)
    start, n = 248, 16
    rows = {}
    for threads in (1, 2):
        c = Context(engine.draft, 512, n_threads=threads, flash_attn=flash_attn)
        try:
            c.decode_tokens(toks[:start], 0, (Seq.SUMMARY,), "none")
            single = tail_logits(c, toks[start : start + n], start, one_by_one=True)
            batch = tail_logits(c, toks[start + n : start + n + 5], start + n)
            after = tail_logits(c, toks[start + n + 5 : start + n + 12], start + n + 5, one_by_one=True)
            rows[threads] = np.concatenate([single, batch, after])
        finally:
            c.close()
    return rows


def test_without_flash_attention_the_thread_count_changes_nothing(engine, example_texts):
    rows = _rows_by_threads(engine, example_texts, flash_attn=False)  # what every Context uses
    assert np.array_equal(rows[1], rows[2])


# docs/DESIGN.md, Mixed-sequence batches
@pytest.mark.parametrize("unified", [True, False])
def test_two_sequences_in_one_batch_stay_within_noise(engine, tokens, unified, record_property):
    prefix, _, tail = tokens
    cmp = facts.mixed_batch(engine.draft, prefix, tail, unified)
    record_property(f"mixed batch, {'unified' if unified else 'split'} cache", cmp.describe())
    # the code never mixes sequences in a batch; were it to, the change is noise, not another model
    assert cmp.within_noise(agree=0.85)


# docs/DESIGN.md, Log callback lifetime
def test_llama_log_is_silent_by_default_and_the_callback_survives_collection(pair_paths):
    code = (
        "import gc, sys\n"
        "from localsidecar import backend\n"
        "backend.set_verbose(False); gc.collect()\n"
        "m = backend.Model(sys.argv[1]); m.close()\n"
        "sys.stderr.write('MARK\\n'); sys.stderr.flush()\n"
        "backend.set_verbose(True); gc.collect()\n"
        "m = backend.Model(sys.argv[1]); m.close()\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(pair_paths[1])],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr[-2000:]  # a collected callback crashes the process instead
    quiet, verbose = r.stderr.split("MARK\n")
    assert quiet == ""
    assert "llama_model_loader" in verbose  # llama.cpp's own log, once verbose
