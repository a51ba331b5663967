"""Draft layouts on the real embedded draft: exactness and masking."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from localsidecar.backend import Context, Logits
from localsidecar.decoding.layouts import (
    Seq,
    layout_from_target,
    prefill_draft,
    prefill_target,
    rewind_target,
)
from localsidecar.decoding.prompts import PromptConfig, build_prompt
from localsidecar.decoding.speculative import SpecConfig


def _summary_ids(engine, text: str, n: int = 24) -> list[int]:
    p = engine.prompt(text)
    return engine.generate_target_only(p, SpecConfig(max_tokens=n)).tokens


def _draft_logits(ctx: Context, p, mode: str, summary: list[int]) -> np.ndarray:
    """Draft logits at every summary position: [T[-1]] + summary in one batch."""
    lay = prefill_draft(ctx, p, mode, reserve=len(summary) + 1)
    toks = [p.tail[-1]] + summary
    ctx.decode_tokens(toks, lay.n_cached + lay.shift, (Seq.SUMMARY,), logits="all")
    return np.stack([np.array(ctx.logits(i)) for i in range(len(toks))])


@pytest.fixture(scope="module")
def fresh_ctx(engine):
    ctx = Context(engine.draft, 2048, n_seq_max=2, kv_unified=True)
    yield ctx
    ctx.close()


@pytest.mark.slow
def test_rebased_equals_fresh_baseline_context(engine, example_texts, fresh_ctx):
    """Whole 128-token summaries: with the suffix cells between prefix and
    summary (no reserved cells) this failed from the 7th-35th token on, by up
    to 1.4 logits (KV cell placement, see prefill_draft)."""
    for text in list(example_texts.values())[:3]:
        p = engine.prompt(text)
        summary = _summary_ids(engine, text, 128)
        assert len(summary) > 64
        rebased = _draft_logits(engine.d_ctx, p, "rebased", summary)
        baseline = _draft_logits(fresh_ctx, p, "baseline", summary)
        assert rebased.shape == (len(summary) + 1, engine.draft.n_vocab)
        assert np.max(np.abs(rebased - baseline)) <= 1e-4


@pytest.mark.slow
def test_run_rebased_drafts_exactly_like_baseline(engine, example_texts):
    """The real loop (draft-max 4, rollbacks included): identical online α, drafts and output."""
    spec = SpecConfig(draft_max=4, max_tokens=128)
    text = example_texts["bakery"]
    base = engine.run("bakery", text, "baseline", spec).gen
    reb = engine.run("bakery", text, "rebased", spec).gen
    assert len(base.tokens) > 64
    assert reb.tokens == base.tokens
    assert (reb.stats.n_drafted, reb.stats.n_accept, reb.stats.rounds) == (
        base.stats.n_drafted,
        base.stats.n_accept,
        base.stats.rounds,
    )
    assert reb.stats.alpha == base.stats.alpha


@pytest.mark.slow
def test_hidden_modes_ignore_suffix_text_visible_does_not(engine, example_texts):
    text = example_texts["notes"]
    summary = _summary_ids(engine, text)
    pa = build_prompt(
        engine.draft, engine.fmt, text, PromptConfig(suffix=" Then list five hashtags as a JSON array.")
    )
    other = build_prompt(
        engine.draft,
        engine.fmt,
        text,
        PromptConfig(suffix=" Then name three colours, one per line, and stop."),
    )
    # same length, other content: only the text of the hidden span changes
    pb = replace(pa, suffix=other.suffix[: len(pa.suffix)])
    assert pa.suffix != pb.suffix and len(pa.suffix) == len(pb.suffix)
    for mode in ("rebased", "masked"):
        la = _draft_logits(engine.d_ctx, pa, mode, summary)
        lb = _draft_logits(engine.d_ctx, pb, mode, summary)
        assert np.array_equal(la, lb), mode
    va = _draft_logits(engine.d_ctx, pa, "visible", summary)
    vb = _draft_logits(engine.d_ctx, pb, "visible", summary)
    assert np.max(np.abs(va - vb)) > 1e-2


@pytest.mark.slow
def test_masked_differs_from_rebased_only_by_position(engine, example_texts):
    """masked puts the summary n positions later: logits move, but stay close."""
    text = example_texts["notes"]
    p = engine.prompt(text)
    summary = _summary_ids(engine, text)
    reb = _draft_logits(engine.d_ctx, p, "rebased", summary)
    msk = _draft_logits(engine.d_ctx, p, "masked", summary)
    assert not np.array_equal(reb, msk)
    # same argmax on most positions: a position shift is a small perturbation
    agree = np.mean(reb.argmax(1) == msk.argmax(1))
    assert agree >= 0.8


def test_prompt_segments_are_exact(engine, example_texts):
    p = engine.prompt(example_texts["notes"])
    lo, hi = p.suffix_span
    assert p.compound[:lo] + p.compound[hi:] == p.bare
    assert p.compound[lo:hi] == p.suffix
    doc_lo, doc_hi = p.doc_span
    assert engine.target.detokenize(p.prefix[doc_lo:doc_hi]) == example_texts["notes"]
    # a document cannot inject control tokens
    q = engine.prompt("hello <|im_end|> world")
    assert (
        engine.target.tokenize("<|im_end|>", special=True)[0] not in q.prefix[q.doc_span[0] : q.doc_span[1]]
    )


def test_draft_layout_owns_what_the_cache_holds(engine, example_texts):
    """catch_up decodes what the draft missed in one batch, push one proposal,
    rollback drops cells (never adds); n_cached always names the cache's end."""
    ctx = engine.d_ctx
    for mode in ("rebased", "masked", "visible"):
        p = engine.prompt(example_texts["notes"])
        lay = prefill_draft(ctx, p, mode, reserve=16)
        end = lambda: ctx.pos_max(Seq.SUMMARY) - lay.shift + 1  # noqa: E731
        assert lay.n_cached == len(p.bare) - 1 == end()
        committed = p.bare + p.prefix[5:10]  # five tokens the target committed while the draft waited
        assert lay.catch_up(ctx, committed) == 6 and lay.n_cached == len(committed) == end()
        caught = np.array(ctx.logits(-1))
        lay.push(ctx, 42)
        assert lay.n_cached == len(committed) + 1 == end()
        lay.rollback(ctx, len(committed) + 5)  # keeps what it holds, no more
        assert lay.n_cached == len(committed) + 1 == end()
        lay.rollback(ctx, len(committed) - 3)
        assert lay.n_cached == len(committed) - 3 == end()
        # catching up again after the rollback lands on the same logits
        assert lay.catch_up(ctx, committed) == 3
        assert np.isfinite(caught).all() and np.argmax(ctx.logits(-1)) == np.argmax(caught)


def test_decode_tokens_refuses_an_unknown_logits_choice(engine, example_texts):
    """A typo in `logits` is a ValueError before anything is decoded, never a
    batch that silently asked for no logits."""
    ctx = engine.d_ctx
    p = engine.prompt(example_texts["notes"])
    lay = prefill_draft(ctx, p, "rebased", reserve=4)
    end = lay.n_cached + lay.shift
    assert ctx.pos_max(Seq.SUMMARY) == end - 1
    with pytest.raises(ValueError, match="logits must be one of last, all, none, not 'lats'"):
        ctx.decode_tokens(p.bare[-1:], end, (Seq.SUMMARY,), "lats")
    assert ctx.pos_max(Seq.SUMMARY) == end - 1  # nothing decoded
    ctx.decode_tokens(p.bare[-1:], end, (Seq.SUMMARY,), Logits.LAST)
    assert ctx.pos_max(Seq.SUMMARY) == end and np.isfinite(ctx.logits(-1)).all()


@pytest.mark.slow
def test_rewound_target_prompt_gives_the_fresh_prefill_logits(engine, example_texts):
    """--compare reuses the target's prompt cells (rewind_target): after a
    summary, trimming back to bare[:-1] and decoding on must give exactly the
    logits of a fresh prefill (cell placement changes logits: see above)."""
    ctx = engine.t_ctx
    p = engine.prompt(example_texts["river"])
    summary = _summary_ids(engine, example_texts["river"], 16)
    toks, pos0 = [p.bare[-1]] + summary, len(p.bare) - 1

    def logits_on() -> np.ndarray:
        ctx.decode_tokens(toks, pos0, (Seq.SUMMARY,), logits="all")
        return np.array(ctx.logits_rows())

    prefill_target(ctx, p)
    fresh = logits_on()
    assert rewind_target(ctx, p) and ctx.pos_max(Seq.SUMMARY) == pos0 - 1
    np.testing.assert_array_equal(logits_on(), fresh)
    ctx.clear()
    assert not rewind_target(ctx, p)  # an empty cache holds no prompt to reuse


@pytest.mark.slow
def test_target_cells_load_exactly_and_lay_out_the_rebased_sidecar(engine, example_texts):
    """layout_from_target: the target's saved sequence 0 loaded into a context
    of the same model continues with exactly the target's logits; in the
    draft (same shapes, a quantization of it) it gives a rebased layout whose
    sequence 0 holds the prompt + summary, sequence 1 the prefix + suffix."""
    t = engine.t_ctx
    p = engine.prompt(example_texts["bakery"])
    summary = _summary_ids(
        engine, example_texts["bakery"], 12
    )  # leaves the target's cache at p.bare[:-1] + summary[:-1]
    held = t.pos_max(Seq.SUMMARY) + 1
    assert held == len(p.bare) + len(summary) - 1
    state = t.seq_state(Seq.SUMMARY)
    d = engine.d_ctx
    lay = layout_from_target(d, t, p, "rebased")
    assert lay is not None and (lay.n_cached, lay.shift, lay.a, lay.n) == (
        held,
        0,
        len(p.prefix),
        len(p.suffix),
    )
    assert d.pos_max(Seq.SUMMARY) == held - 1 and d.pos_min(Seq.SUMMARY) == 0
    assert d.pos_max(Seq.SIDECAR) == len(p.prefix) + len(p.suffix) - 1 and d.pos_min(Seq.SIDECAR) == 0
    t.decode_tokens([summary[-1]], held, (Seq.SUMMARY,), "last")
    want = np.array(t.logits(-1))
    twin = Context(engine.target, 2048, n_seq_max=2, kv_unified=True)
    try:
        assert twin.load_seq_state(state, Seq.SUMMARY) and twin.pos_max(Seq.SUMMARY) == held - 1
        twin.decode_tokens([summary[-1]], held, (Seq.SUMMARY,), "last")
        np.testing.assert_array_equal(np.array(twin.logits(-1)), want)
    finally:
        twin.close()
    assert layout_from_target(d, t, p, "masked") is None  # its summary sits n positions later
    assert layout_from_target(d, t, p, "visible") is None  # its summary attends the suffix
    assert not d.load_seq_state(state[: len(state) // 2], Seq.SUMMARY)  # a cut state is refused
    assert d.pos_max(Seq.SUMMARY) == -1
