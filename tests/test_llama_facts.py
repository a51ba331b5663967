"""The llama.cpp facts the code relies on (docs/DESIGN.md), each measured on
the embedded draft model through the backend.

These tests assert llama.cpp's behaviour, not ours: when one fails after a
llama-cpp-python upgrade, the section of docs/DESIGN.md it names, and the code
built around it, need another look. Each decodes about a hundred tokens at most.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from localsidecar.backend import Context, DecodeError
from localsidecar.layouts import Seq

from .conftest import ROOT

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


def tail_logits(ctx: Context, tail: list[int], pos0: int, seq: int = Seq.SUMMARY, one_by_one: bool = False) -> np.ndarray:
    if not one_by_one:
        ctx.decode_tokens(tail, pos0, (seq,), "all")
        return np.array(ctx.logits_rows())
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
        ctx.decode_tokens(hidden, len(prefix), (Seq.SUMMARY, Seq.SIDECAR) if attended else (Seq.SIDECAR,), "none")
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
def test_the_same_positions_in_other_cells_give_other_logits(engine, ctx, tokens):
    prefix, suffix, tail = tokens
    ctx.decode_tokens(prefix, 0, (Seq.SUMMARY, Seq.SIDECAR), "none")
    ctx.decode_tokens(suffix, len(prefix), (Seq.SIDECAR,), "none")  # cells between prefix and tail
    inline = tail_logits(ctx, tail, len(prefix))
    fresh = Context(engine.draft, 1024, n_seq_max=2, kv_unified=True, n_threads=1)
    try:
        fresh.decode_tokens(prefix, 0, (Seq.SUMMARY, Seq.SIDECAR), "none")
        alone = tail_logits(fresh, tail, len(prefix))
    finally:
        fresh.close()
    # same tokens, positions and attended cells: only the cell indices differ
    assert inline.shape == alone.shape and not np.array_equal(inline, alone)
    assert np.mean(inline.argmax(1) == alone.argmax(1)) >= 0.9  # numerical noise, not another model


# docs/DESIGN.md, Batch shape changes results
def test_one_token_at_a_time_differs_from_one_batch(ctx, tokens):
    prefix, _, tail = tokens
    ctx.decode_tokens(prefix, 0, (Seq.SUMMARY,), "none")
    batched = tail_logits(ctx, tail, len(prefix))
    ctx.seq_rm(Seq.SUMMARY, len(prefix), -1)
    single = tail_logits(ctx, tail, len(prefix), one_by_one=True)
    assert not np.array_equal(batched, single)
    assert np.max(np.abs(batched - single)) < 2.0 and np.mean(batched.argmax(1) == single.argmax(1)) >= 0.9


# docs/DESIGN.md, Batch shape changes results (the thread count)
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


def test_the_thread_count_changes_flash_attention_results_past_256_cells(engine, example_texts):
    rows = _rows_by_threads(engine, example_texts, flash_attn=True)
    below = 256 - 248
    assert np.array_equal(rows[1][:below], rows[2][:below])  # up to 256 cells: the same at any thread count
    assert not np.array_equal(rows[1][below:], rows[2][below:])


def test_without_flash_attention_the_thread_count_changes_nothing(engine, example_texts):
    rows = _rows_by_threads(engine, example_texts, flash_attn=False)  # what every Context uses
    assert np.array_equal(rows[1], rows[2])


# docs/DESIGN.md, Mixed-sequence batches
@pytest.mark.parametrize("unified,flash_attn", [(True, True), (False, True), (True, False)])
def test_two_sequences_in_one_batch_are_exact_only_in_split_caches_with_flash_attention(engine, tokens, unified,
                                                                                        flash_attn):
    prefix, _, tail = tokens
    a, b = tail[: TAIL // 2], tail[TAIL // 2 :]
    c = Context(engine.draft, 1024, n_seq_max=2, kv_unified=unified, n_threads=1, flash_attn=flash_attn)
    try:
        def prefill() -> None:
            c.clear()
            c.decode_tokens(prefix, 0, (Seq.SUMMARY,), "none")
            c.seq_cp(Seq.SUMMARY, Seq.SIDECAR)

        prefill()
        c.decode_plan([(t, len(prefix) + i, (Seq.SUMMARY,), True) for i, t in enumerate(a)]
                      + [(t, len(prefix) + i, (Seq.SIDECAR,), True) for i, t in enumerate(b)])
        mixed = np.array(c.logits_rows())
        prefill()
        alone_a = tail_logits(c, a, len(prefix), Seq.SUMMARY)
        prefill()
        alone_b = tail_logits(c, b, len(prefix), Seq.SIDECAR)
    finally:
        c.close()
    exact = np.array_equal(mixed, np.concatenate([alone_a, alone_b]))
    assert exact == (not unified or not flash_attn)


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
    r = subprocess.run([sys.executable, "-c", code, str(pair_paths[1])], capture_output=True, text=True,
                       timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]  # a collected callback crashes the process instead
    quiet, verbose = r.stderr.split("MARK\n")
    assert quiet == ""
    assert "llama_model_loader" in verbose  # llama.cpp's own log, once verbose
