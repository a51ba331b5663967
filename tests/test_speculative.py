"""The speculative loop on the real embedded pair."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from localsidecar.decoding.distributions import softmax
from localsidecar.decoding.layouts import (
    MODES,
    LazyLayout,
    layout_from_target,
    prefill_draft,
    prefill_target,
)
from localsidecar.decoding.policy import DraftPolicy, Plan
from localsidecar.decoding.speculative import SpecConfig, SpeculativeDecoder
from tests.helpers import check_equal_or_near_tie, one_at_a_time_logits, speculative_from_scratch

MAX_TOKENS = 32


@pytest.fixture(scope="module")
def reference(engine, example_texts):
    """Target-only greedy output (one token per call) and its logits."""
    out = {}
    for name, text in list(example_texts.items())[:2]:
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
    check_equal_or_near_tie(
        gen.tokens, ref_tokens, lambda prefix: one_at_a_time_logits(engine, p, prefix), MAX_TOKENS
    )


@pytest.mark.slow
@pytest.mark.parametrize("draft_max", [1, 8])
def test_greedy_speculative_matches_target(engine, reference, draft_max):
    for _name, (p, ref_tokens, _) in reference.items():
        for mode in MODES:
            spec = SpecConfig(draft_max=draft_max, max_tokens=MAX_TOKENS)
            gen, lay = speculative_from_scratch(engine, p, mode, spec)
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


@pytest.mark.slow
def test_p_min_stops_drafting(engine, reference):
    p, _, _ = next(iter(reference.values()))
    prefill_target(engine.t_ctx, p)
    lay = prefill_draft(engine.d_ctx, p, "rebased", reserve=64)
    gen_all = SpeculativeDecoder(
        engine.t_ctx, engine.d_ctx, SpecConfig(draft_max=8, p_min=0.0, max_tokens=32)
    ).generate(p.bare, lay, engine.target.is_eog)
    prefill_target(engine.t_ctx, p)
    lay = prefill_draft(engine.d_ctx, p, "rebased", reserve=64)
    gen_pmin = SpeculativeDecoder(
        engine.t_ctx, engine.d_ctx, SpecConfig(draft_max=8, p_min=0.9, max_tokens=32)
    ).generate(p.bare, lay, engine.target.is_eog)
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


@pytest.mark.slow
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
        acc = dec._accept([int(d)], [q], [lp, lp], None)
        counts[int(d) if acc.accepted == 1 else acc.next_token] += 1
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


@pytest.mark.slow
def test_sampling_loop_runs_and_is_seeded(engine, reference):
    p, _, _ = next(iter(reference.values()))
    outs = []
    for _ in range(2):
        prefill_target(engine.t_ctx, p)
        lay = prefill_draft(engine.d_ctx, p, "rebased", reserve=64)
        gen = SpeculativeDecoder(
            engine.t_ctx, engine.d_ctx, SpecConfig(draft_max=4, temperature=0.8, seed=7, max_tokens=24)
        ).generate(p.bare, lay, engine.target.is_eog)
        assert 0 <= gen.stats.n_accept <= gen.stats.n_drafted
        outs.append(gen.tokens)
    assert outs[0] == outs[1] and len(outs[0]) > 0


# --- fixed draft length: exactly the loop as it was ----------------------------------------


def _reference_fixed_loop(engine, p, mode: str, k: int, max_tokens: int, p_min: float = 0.0):
    """The fixed-k loop written out on the backend alone (the specification the
    integer --draft-max keeps): catch up, draft k (stop below p_min), verify
    [last] + draft in one batch, accept the greedy prefix, roll both caches back.
    Returns (tokens, drafted, accepted, rounds)."""
    t, d = engine.t_ctx, engine.d_ctx
    prefill_target(t, p)
    lay = prefill_draft(d, p, mode, reserve=1 + max_tokens + k)
    held, shift = lay.n_cached, lay.shift
    committed, out = list(p.bare), []
    drafted = accepted = rounds = 0
    while len(out) < max_tokens:
        c = len(committed)
        d.decode_tokens(committed[held:], held + shift, (0,), "last")
        props, decoded = [], 0
        for i in range(k):
            q = softmax(d.logits(-1))
            top = int(q.argmax())
            if q[top] < p_min:
                break
            props.append(top)
            if i + 1 < k:
                d.decode_tokens([top], c + i + shift, (0,), "last")
                decoded += 1
        t.decode_plan((tok, c - 1 + i, (0,), True) for i, tok in enumerate([committed[-1]] + props))
        top_t = [int(np.argmax(t.logits(i))) for i in range(len(props) + 1)]
        j = 0
        while j < len(props) and top_t[j] == props[j]:
            j += 1
        rounds, drafted, accepted = rounds + 1, drafted + len(props), accepted + j
        eog = False
        for tok in props[:j] + [top_t[j]]:
            if engine.target.is_eog(tok):
                eog = True
                break
            if len(out) == max_tokens:
                break
            out.append(tok)
        committed = list(p.bare) + out
        t.seq_rm(0, len(committed) - 1, -1)
        held = min(c + min(j, decoded), len(committed) - 1)
        d.seq_rm(0, held + shift, -1)
        if eog:
            break
    return out, drafted, accepted, rounds


@pytest.mark.slow
@pytest.mark.parametrize("k, p_min, mode", [(1, 0.0, "rebased"), (4, 0.0, "masked"), (3, 0.5, "deferred")])
def test_integer_draft_max_is_the_fixed_loop_exactly(engine, reference, k, p_min, mode):
    for p, _, _ in list(reference.values())[:2]:
        want = _reference_fixed_loop(engine, p, mode, k, 32, p_min)
        spec = SpecConfig(draft_max=k, p_min=p_min, max_tokens=32)
        gen, _ = speculative_from_scratch(engine, p, mode, spec)
        s = gen.stats
        assert (gen.tokens, s.n_drafted, s.n_accept, s.rounds) == want
        assert sum(s.k_hist.values()) == s.rounds
        if p_min == 0:
            assert dict(s.k_hist) == {k: s.rounds}  # every round drafts exactly k


# --- --draft-max auto -----------------------------------------------------------------------


class FrozenCosts(DraftPolicy):
    """A real policy whose cost model is given (a pair where drafting pays, or
    one where it never does) instead of measured: what it decides is then
    independent of this machine's load. Acceptance is still learned online."""

    def __init__(self, cap: int, draft_s: float, verify_s):
        super().__init__(cap)
        for b in range(1, cap + 2):
            super().record_verify(b, verify_s(b))
        super().record_draft_step(1, draft_s)
        self.acc.observe([0.9], 1)

    def record_draft_step(self, n_tokens, seconds):
        pass

    def record_verify(self, batch, seconds):
        pass


class Scripted(DraftPolicy):
    """Drafts exactly the lengths of `schedule` in turn (0: the target alone),
    to drive the loop through every transition: lag, catch-up, long drafts."""

    def __init__(self, schedule):
        super().__init__(max(schedule))
        self.schedule, self.i = schedule, 0

    def plan(self):
        k = self.schedule[self.i % len(self.schedule)]
        self.i += 1
        self.last = Plan(k=k, rate=1.0)
        return self.last

    def include(self, i, p_before, confidence, plan):
        return 1.0

    def extend(self, i, p_i, plan):
        return i < plan.k


def _auto(engine, p, mode, policy, max_tokens=MAX_TOKENS, cap=8):
    spec = SpecConfig(draft_max="auto", draft_max_cap=cap, max_tokens=max_tokens)
    gen, lay = speculative_from_scratch(engine, p, mode, spec, policy=policy)
    s = gen.stats
    assert sum(s.k_hist.values()) == s.rounds and s.n_drafted == sum(k * n for k, n in s.k_hist.items())
    assert sum(n for _, n in s.verify_s_by_batch.values()) == s.rounds
    return gen, lay


@pytest.mark.slow
def test_auto_is_lossless_in_every_mode(engine, reference):
    """Drafting pays (cheap draft, nearly flat verify): rounds of many lengths,
    cut short by the draft's confidence. Output: what the target decides."""
    policy = FrozenCosts(8, 0.05, lambda b: 1.0 + 0.05 * b)
    lengths = set()
    for p, ref_tokens, _ in list(reference.values())[:2]:
        for mode in MODES:
            gen, _ = _auto(engine, p, mode, policy)
            lengths |= set(gen.stats.k_hist)
            _check_against_reference(engine, p, ref_tokens, gen)
    assert len(lengths) >= 3 and max(lengths) >= 3


@pytest.mark.slow
def test_auto_with_measured_costs_is_lossless(engine, reference):
    policy = DraftPolicy(8)  # this machine's own costs, shared across documents as the Engine does
    for p, ref_tokens, _ in reference.values():
        gen, _ = _auto(engine, p, "rebased", policy)
        _check_against_reference(engine, p, ref_tokens, gen)
    assert policy.verify.get(1) > 0 and 2 in policy.verify  # it measured V(1), then probed


def _decoded_after_prefill(engine, p, mode) -> int:
    """The draft's decode_tokens counter once _auto's prefill is done (its prefill decodes
    the same tokens every time: measured by doing one)."""
    before = engine.d_ctx.stats.decode_tokens
    prefill_draft(
        engine.d_ctx, p, mode, reserve=SpecConfig(draft_max="auto", max_tokens=40).cells_after_prompt
    )
    return engine.d_ctx.stats.decode_tokens + (engine.d_ctx.stats.decode_tokens - before)


@pytest.mark.slow
def test_rounds_without_draft_then_long_drafts_catch_up_exactly(engine, reference):
    """The draft lags through k = 0 rounds and catches up in one batch."""
    schedule = [0, 0, 0, 3, 0, 1, 5, 0, 0, 2]
    for mode in ("rebased", "masked", "visible"):
        p, ref_tokens, _ = next(iter(reference.values()))
        decoded = _decoded_after_prefill(engine, p, mode)
        gen, lay = _auto(engine, p, mode, Scripted(schedule), max_tokens=40)
        s = gen.stats
        assert Counter((schedule * 10)[: s.rounds]) == s.k_hist  # every round drafted what it was told
        assert s.k_hist[0] >= 5 and s.n_drafted > 0
        # catch-up is counted apart from drafting: the draft's decodes in the loop are its catch-up
        # tokens plus one per proposal but the round's last (Scripted extends while i < k)
        pushes = sum((k - 1) * n for k, n in s.k_hist.items() if k > 0)
        assert engine.d_ctx.stats.decode_tokens - decoded == s.catchup_tokens + pushes
        assert s.catchup_tokens >= 3 + 1  # three rounds alone before the first draft: a lag of at least 4
        assert s.catchup_s > 0 and s.draft_s > 0 and s.draft_s + s.catchup_s + s.verify_s <= gen.gen_s
        assert s.draft_ms_per_token == pytest.approx(1000 * s.draft_s / s.n_drafted)
        _check_against_reference(engine, p, ref_tokens, gen)
        # between rounds the draft never holds the last committed token
        assert (
            engine.d_ctx.pos_max(0)
            == lay.n_cached + lay.shift - 1
            <= len(p.bare) + len(gen.tokens) - 2 + lay.shift
        )


@pytest.mark.slow
def test_sidecar_writes_hashtags_when_every_round_chose_k0(engine, reference, example_texts):
    """A draft nearly as slow as its target (the Engine's fixed cost model of
    the embedded pair): the policy never drafts (nor probes), yet the draft catches up before
    the hashtag phase. With cap 0 the same holds by construction. Either way
    the summary is target-only decoding, token for token."""
    name = next(iter(reference))
    _, ref_tokens, _ = reference[name]
    # the embedded pair: a Q4_0 draft of its own Q4_1 target, bytes ratio 0.93
    assert not engine.cost_model().draft_step < 0.9
    for mode, cap in (("rebased", 8), ("deferred", 0)):
        res = engine.run(
            name,
            example_texts[name],
            mode,
            SpecConfig(draft_max="auto", draft_max_cap=cap, max_tokens=MAX_TOKENS),
        )
        s = res.gen.stats
        assert dict(s.k_hist) == {0: s.rounds} and s.n_drafted == 0 and s.draft_s == 0 and s.catchup_s == 0
        assert res.gen.tokens == ref_tokens[:MAX_TOKENS]
        assert res.hashtags is not None and res.hashtags.tags, mode
        assert res.cost_table == engine.cost_model().id


@pytest.mark.slow
def test_auto_reads_the_prompt_into_the_draft_only_when_a_round_first_drafts(engine, reference):
    """A LazyLayout: three k = 0 rounds leave the draft cache untouched; the
    fourth round prefills it, catches up and drafts; the output is the
    target's; the prefill counts as prompt processing, not generation."""
    p, ref_tokens, _ = next(iter(reference.values()))
    spec = SpecConfig(draft_max="auto", draft_max_cap=5, max_tokens=40)
    prefill_target(engine.t_ctx, p)
    engine.d_ctx.clear()
    calls = engine.d_ctx.stats.decode_calls
    seen = []

    class Watch(Scripted):
        def plan(self):
            seen.append(engine.d_ctx.stats.decode_calls - calls)
            return super().plan()

    lazy = LazyLayout(lambda: prefill_draft(engine.d_ctx, p, "rebased", reserve=spec.cells_after_prompt))
    gen = SpeculativeDecoder(engine.t_ctx, engine.d_ctx, spec, policy=Watch([0, 0, 0, 3, 0, 1, 5])).generate(
        p.bare, lazy, engine.target.is_eog
    )
    assert seen[:4] == [0, 0, 0, 0] and seen[4] > 0  # nothing decoded before the first drafting round
    assert lazy.prefilled and 0 < lazy.prefill_s <= gen.prefill_s
    assert gen.stats.n_drafted > 0
    _check_against_reference(engine, p, ref_tokens, gen)
    lay = lazy.layout
    assert engine.d_ctx.pos_max(0) == lay.n_cached + lay.shift - 1


@pytest.mark.slow
def test_a_summary_that_never_drafted_takes_the_target_cells_for_its_hashtags(
    engine, reference, example_texts
):
    """Every round k = 0: in baseline the draft decodes nothing at all; in
    rebased the hashtag phase loads the target's cells (layout_from_target)
    instead of reading the prompt: the draft decodes only the suffix, the
    summary's last token, the lead and the tags. The tags are token for token
    those of the same path taken by hand after a target-only summary."""
    name = next(iter(reference))
    text = example_texts[name]
    p = engine.prompt(text)
    slow = FrozenCosts(8, 1.0, lambda b: float(b))
    spec = SpecConfig(draft_max="auto", max_tokens=MAX_TOKENS)
    engine.policy = slow
    try:
        calls = engine.d_ctx.stats.decode_calls
        base = engine.run(name, text, "baseline", spec)
        assert engine.d_ctx.stats.decode_calls == calls and base.gen.stats.n_drafted == 0
        tokens = engine.d_ctx.stats.decode_tokens
        lazy_run = engine.run(name, text, "rebased", spec)
        decoded = engine.d_ctx.stats.decode_tokens - tokens
    finally:
        engine.policy = None
    tags = lazy_run.hashtags
    assert lazy_run.gen.stats.n_drafted == 0 and tags.tags
    shown = len(lazy_run.gen.tokens)  # a whole summary of MAX_TOKENS or to EOG
    # no prompt read: the suffix, the summary's last token, the lead, the offered
    # candidates the score picker decodes once each, and the tags
    assert decoded < len(p.bare), (decoded, shown)
    gen = engine.generate_target_only(p, spec)
    assert gen.tokens == lazy_run.gen.tokens
    lay = layout_from_target(engine.d_ctx, engine.t_ctx, p, "rebased")
    by_hand = engine._hashtags(p, "rebased", LazyLayout.ready(lay), gen, "shifted", spec, lazy_run.summary)
    assert by_hand.raw == tags.raw and by_hand.tags == tags.tags


@pytest.mark.slow
def test_an_exception_mid_round_leaves_both_caches_at_the_committed_tokens(engine, reference):
    p, _, _ = next(iter(reference.values()))
    calls = []

    def eog_then_fail(tok):
        calls.append(tok)
        if len(calls) == 12:
            raise KeyboardInterrupt
        return engine.target.is_eog(tok)

    spec = SpecConfig(draft_max=4, max_tokens=40)
    prefill_target(engine.t_ctx, p)
    lay = prefill_draft(engine.d_ctx, p, "rebased", reserve=spec.cells_after_prompt)
    with pytest.raises(KeyboardInterrupt):
        SpeculativeDecoder(engine.t_ctx, engine.d_ctx, spec).generate(p.bare, lay, eog_then_fail)
    # the failing round verified [last] + 4 drafts at positions c-1..c+3; the
    # committed tokens before it are at most len(bare) + 11 - 1
    bound = len(p.bare) + len(calls) - 3
    assert engine.t_ctx.pos_max(0) <= bound
    assert engine.d_ctx.pos_max(0) == lay.n_cached + lay.shift - 1 <= bound + lay.shift
