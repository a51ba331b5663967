"""The speculative loop on the real embedded pair."""

from __future__ import annotations

import numpy as np
import pytest

from localsidecar.layouts import MODES, prefill_draft, prefill_target
from localsidecar.distributions import softmax
from localsidecar.speculative import SpecConfig, SpeculativeDecoder
from tests.helpers import check_equal_or_near_tie

MAX_TOKENS = 48


@pytest.fixture(scope="module")
def reference(engine, example_texts):
    """Target-only greedy output (one token per call) and its logits."""
    out = {}
    for name, text in list(example_texts.items())[:3]:
        p = engine.prompt(text)
        prefill_target(engine.t_ctx, p)
        pos, last, toks, logits = len(p.bare) - 1, p.bare[-1], [], []
        for _ in range(MAX_TOKENS):
            engine.t_ctx.decode_tokens([last], pos, (0,), "last")
            lg = np.array(engine.t_ctx.logits(-1))
            tok = int(lg.argmax())
            if engine.target.is_eog(tok):
                break
            toks.append(tok)
            logits.append(lg)
            pos, last = pos + 1, tok
        out[name] = (p, toks, logits)
    return out


def _check_against_reference(engine, p, ref_tokens, gen) -> None:
    # greedy output is what the target decided in its verify batches
    assert gen.tokens == gen.target_argmax
    check_equal_or_near_tie(gen.tokens, ref_tokens, lambda prefix: _one_at_a_time_logits(engine, p, prefix), MAX_TOKENS)


def _one_at_a_time_logits(engine, p, prefix_tokens):
    ctx = engine.t_ctx
    prefill_target(ctx, p)
    seq = [p.bare[-1]] + list(prefix_tokens)
    pos0 = len(p.bare) - 1
    for i, tok in enumerate(seq):
        ctx.decode_tokens([tok], pos0 + i, (0,), "last")
    return np.array(ctx.logits(-1))


@pytest.mark.parametrize("draft_max", [1, 4, 8])
def test_greedy_speculative_matches_target(engine, reference, draft_max):
    for name, (p, ref_tokens, _) in reference.items():
        for mode in MODES:
            spec = SpecConfig(draft_max=draft_max, max_tokens=MAX_TOKENS)
            prefill_target(engine.t_ctx, p)
            lay = prefill_draft(engine.d_ctx, p, mode, reserve=spec.cells_after_prompt)
            gen = SpeculativeDecoder(engine.t_ctx, engine.d_ctx, spec).generate(p.bare, lay, engine.target.is_eog)
            s = gen.stats
            assert 0 < s.n_drafted <= draft_max * s.rounds
            assert 0 <= s.n_accept <= s.n_drafted
            assert 0.0 < s.alpha <= 1.0 + 1e-6
            # every round emits its accepted tokens plus one from the target
            assert len(gen.tokens) <= s.n_accept + s.rounds
            _check_against_reference(engine, p, ref_tokens, gen)


def test_target_cache_rolled_back_exactly(engine, reference):
    """After a run the target cache holds exactly bare + summary minus the last token."""
    p, _, _ = next(iter(reference.values()))
    prefill_target(engine.t_ctx, p)
    lay = prefill_draft(engine.d_ctx, p, "rebased", reserve=64)
    gen = SpeculativeDecoder(engine.t_ctx, engine.d_ctx, SpecConfig(draft_max=8, max_tokens=20)).generate(
        p.bare, lay, engine.target.is_eog
    )
    assert gen.stopped == "max_tokens" and len(gen.tokens) == 20
    assert engine.t_ctx.pos_max(0) == len(p.bare) + len(gen.tokens) - 2
    assert engine.d_ctx.pos_max(0) == lay.n_cached + lay.shift - 1 <= len(p.bare) + 18


def test_p_min_stops_drafting(engine, reference):
    p, _, _ = next(iter(reference.values()))
    prefill_target(engine.t_ctx, p)
    lay = prefill_draft(engine.d_ctx, p, "rebased", reserve=64)
    gen_all = SpeculativeDecoder(engine.t_ctx, engine.d_ctx, SpecConfig(draft_max=8, p_min=0.0, max_tokens=32)).generate(p.bare, lay, engine.target.is_eog)
    prefill_target(engine.t_ctx, p)
    lay = prefill_draft(engine.d_ctx, p, "rebased", reserve=64)
    gen_pmin = SpeculativeDecoder(engine.t_ctx, engine.d_ctx, SpecConfig(draft_max=8, p_min=0.9, max_tokens=32)).generate(p.bare, lay, engine.target.is_eog)
    assert gen_pmin.stats.n_drafted < gen_all.stats.n_drafted
    assert gen_pmin.stats.acceptance_rate >= gen_all.stats.acceptance_rate


def _dist_pair(engine, texts):
    """p from the target on one document, q from the draft on another: two
    real distributions that differ a lot (rejection sampling must not care)."""
    (_, pa), (_, pb) = list(texts.items())[:2]
    out = []
    for ctx, text in ((engine.t_ctx, pa), (engine.d_ctx, pb)):
        p = engine.prompt(text)
        ctx.clear()
        ctx.decode_tokens(p.bare, 0, (0,), "last")
        out.append(np.array(ctx.logits(-1)))
    return out


def test_rejection_sampling_preserves_target_distribution(engine, example_texts):
    temp = 1.0
    lp, lq = _dist_pair(engine, example_texts)
    p, q = softmax(lp, temp), softmax(lq, temp)
    dec = SpeculativeDecoder(engine.t_ctx, engine.d_ctx, SpecConfig(temperature=temp, seed=1234))
    rng = np.random.default_rng(99)
    n = 20000
    drafted = rng.choice(q.shape[0], size=n, p=q)
    counts = np.zeros(p.shape[0])
    for d in drafted:
        j, nxt, _ = dec._accept([int(d)], [q], [lp, lp])
        counts[int(d) if j == 1 else nxt] += 1
    emp = counts / n
    top = np.argsort(p)[-20:]
    tv_sampled = 0.5 * np.abs(emp - p).sum()
    tv_pq = 0.5 * np.abs(p - q).sum()
    assert tv_pq > 0.3, "the test needs p and q far apart to have power"
    # sampling noise of TV over the support actually hit is ~ sqrt(k / n)
    assert tv_sampled < 0.1 < tv_pq
    # the most likely tokens within 4 standard errors each
    se = np.sqrt(p[top] * (1 - p[top]) / n)
    assert np.all(np.abs(emp[top] - p[top]) <= 4 * se + 1e-3)


def test_sampling_loop_runs_and_is_seeded(engine, reference):
    p, _, _ = next(iter(reference.values()))
    outs = []
    for _ in range(2):
        prefill_target(engine.t_ctx, p)
        lay = prefill_draft(engine.d_ctx, p, "rebased", reserve=64)
        gen = SpeculativeDecoder(engine.t_ctx, engine.d_ctx, SpecConfig(draft_max=4, temperature=0.8, seed=7, max_tokens=24)).generate(
            p.bare, lay, engine.target.is_eog
        )
        assert 0 <= gen.stats.n_accept <= gen.stats.n_drafted
        outs.append(gen.tokens)
    assert outs[0] == outs[1] and len(outs[0]) > 0
