"""The draft-length policy and the thread tuner as pure functions, on given costs."""

from __future__ import annotations

import random

import pytest

from localsidecar.backend.hardware import LoadProbe, ThreadTuner, threads_for_free_cores
from localsidecar.decoding.policy import Acceptance, CostTable, DraftPolicy, Plan, best_k, expected_tokens

CAP = 8


def _policy(
    draft_cost: float, verify, alpha: float, *, rounds: int = 40, seed: int = 0, cap: int = CAP
) -> DraftPolicy:
    """A policy that measured a draft step of `draft_cost`, target calls of
    verify(b) and acceptance `alpha` at every position (outcomes drawn)."""
    pol = DraftPolicy(cap)
    for b in range(1, cap + 2):
        pol.record_verify(b, verify(b))
    pol.record_draft_step(1, draft_cost)
    _feed(pol, alpha, rounds, k=cap, rng=random.Random(seed))
    return pol


def _feed(pol: DraftPolicy, alpha: float, rounds: int, *, k: int, rng: random.Random) -> None:
    for _ in range(rounds):
        j = 0
        while j < k and rng.random() < alpha:
            j += 1
        pol.record_round([0.9] * k, j)


def test_expected_tokens_and_best_k_arithmetic():
    assert expected_tokens([0.5, 0.5]) == [1.0, 1.5, 1.75]
    k, rate, rates = best_k([1.0, 1.0], 0.1, [1.0, 1.0, 1.0])
    assert k == 2 and rate == pytest.approx(3 / 1.2) and rates == pytest.approx([1.0, 2 / 1.1, 3 / 1.2])
    # equal rates: the shorter draft
    assert best_k([0.0], 0.0, [1.0, 1.0])[0] == 0


def test_cheap_draft_flat_verify_good_acceptance_drafts_long():
    pol = _policy(0.05, lambda b: 1.0, 0.8)
    plan = pol.plan()
    assert not plan.probe and plan.k >= 4
    assert plan.rate > 2.0  # > 2 tokens per target-call time: what a good pair gets


def test_draft_at_0_7_of_a_target_token_and_linear_verify_never_drafts():
    pol = _policy(0.7, lambda b: float(b), 0.8)
    plans = [pol.plan() for _ in range(200)]
    assert all(p.k == 0 for p in plans if not p.probe)
    # even perfect acceptance loses at these costs: it only probes at the longest gap
    assert sum(p.probe for p in plans) == 0
    assert plans[0].rate == pytest.approx(1.0)


def test_collapse_lowers_k_and_probes_bring_it_back():
    pol = _policy(0.05, lambda b: 1.0 + 0.02 * b, 0.85)
    k_good = pol.plan().k
    assert k_good >= 4
    rng = random.Random(1)
    # acceptance collapses: every draft token rejected
    ks = []
    for _ in range(60):
        plan = pol.plan()
        if not plan.probe:
            ks.append(plan.k)
        if plan.k:
            pol.record_round([0.9] * plan.k, 0)
    assert ks[0] == k_good and ks[-1] == 0 and ks == sorted(ks, reverse=True)
    # recovery: acceptance 0.9 again; only probes can notice (k = 0 drafts nothing)
    history = []
    for _ in range(200):
        plan = pol.plan()
        history.append((plan.k, plan.probe))
        if plan.k:
            _feed(pol, 0.9, 1, k=plan.k, rng=rng)
    first_probe = next(i for i, (_, probe) in enumerate(history) if probe)
    back = next(i for i, (k, probe) in enumerate(history) if k and not probe)
    assert history[:first_probe] == [(0, False)] * first_probe and first_probe < back < 100
    assert history[-1][0] >= 4 and not history[-1][1]


def test_probe_gap_doubles_while_probes_change_nothing():
    pol = _policy(0.3, lambda b: 1.0 + 0.3 * (b - 1), 0.0)
    assert pol.plan().k == 0
    probes = [i for i in range(300) if pol.plan().probe]
    gaps = [b - a for a, b in zip(probes, probes[1:])]
    assert gaps[:3] == [2 * pol.probe_after + 1, 4 * pol.probe_after + 1, 8 * pol.probe_after + 1]


def test_first_rounds_measure_before_planning():
    pol = DraftPolicy(CAP)
    assert pol.plan().k == 0  # nothing measured: the target alone gives V(1)
    pol.record_verify(1, 0.01)
    plan = pol.plan()
    assert plan.k == 1 and plan.probe  # then one drafted token gives V(2), c_d and acceptance
    assert DraftPolicy(0).plan().k == 0  # cap 0: never drafts


def test_in_round_rules_follow_confidence_and_costs():
    cheap = _policy(0.02, lambda b: 1.0, 0.9)
    plan = cheap.plan()
    p1 = cheap.include(1, 1.0, 0.95, plan)
    assert p1 is not None and p1 > 0.5
    assert cheap.extend(1, p1, plan)
    assert not cheap.extend(CAP, p1, plan)  # the cap
    # a verify batch that costs a whole target call more per token: an unsure token is not worth it
    steep = _policy(0.02, lambda b: 1.0 + 0.5 * (b - 1), 0.9)
    plan = steep.plan()
    assert plan.k >= 1
    steep.acc.observe([0.05] * 3, 0)  # tokens the draft was unsure of were rejected
    assert steep.include(1, 1.0, 0.05, plan) is None
    assert steep.include(1, 1.0, 0.95, plan) is not None


def test_acceptance_counts_only_tried_positions():
    acc = Acceptance(decay=1.0, prior_weight=1.0)
    acc.observe([0.9, 0.9, 0.9, 0.9], 1)  # 1st accepted, 2nd rejected, 3rd and 4th never tried
    a = acc.by_position(4)
    assert a[0] == pytest.approx((1 + 0.5) / 2) and a[1] == pytest.approx((0 + a[0]) / 2)
    assert a[2] == pytest.approx(a[1]) and a[3] == pytest.approx(a[1])  # untried: the previous position's
    assert acc.given_confidence(0.9) == pytest.approx((1 + 0.95) / 3)


def test_cost_table_interpolates_and_extrapolates():
    t = CostTable()
    assert t.get(3) is None
    t.add(1, 1.0)
    assert t.get(4) == pytest.approx(4.0)  # one size known: proportional (pessimistic)
    t.add(3, 2.0)
    assert t.get(2) == pytest.approx(1.5) and t.get(5) == pytest.approx(3.0)
    for s in (2.0, 9.0, 2.2):
        t.add(3, s)
    assert t.get(3) == pytest.approx(2.1)  # running median: one slow outlier moves it little


# --- threads ----------------------------------------------------------------------------


def test_threads_for_free_cores():
    assert threads_for_free_cores(2, 0.1, 2) == 2
    assert threads_for_free_cores(2, 1.0, 2) == 1  # one busy process on 2 cores
    assert threads_for_free_cores(2, 2.0, 2) == 1  # never 0
    assert threads_for_free_cores(4, 4.0, 8) == 2  # 8 hyperthreads of 4 cores, half busy
    assert threads_for_free_cores(4, None, 8) == 4  # unknown: every core


def _simulate(tuner: ThreadTuner, seconds_at, n: int) -> list[int]:
    used = []
    for _ in range(n):
        t = tuner.threads
        used.append(t)
        tuner.record(1, seconds_at(t))
    return used


def test_tuner_moves_to_fewer_threads_under_load_and_back_when_it_ends():
    tuner = ThreadTuner(start=4, max_threads=4)
    loaded = {1: 0.040, 2: 0.025, 3: 0.060, 4: 0.090}.get  # another process holds two cores
    used = _simulate(tuner, loaded, 600)
    assert used[-1] == 2 and tuner.current == 2
    assert used[-100:].count(2) >= 90  # trials cost little once settled
    idle = {1: 0.040, 2: 0.022, 3: 0.016, 4: 0.012}.get
    used = _simulate(tuner, idle, 600)
    assert tuner.current == 4 and used[-1] == 4


def test_tuner_keeps_its_count_on_equal_timings_and_trials_get_rare():
    tuner = ThreadTuner(start=2, max_threads=2)
    used = _simulate(tuner, lambda t: 0.01, 2000)
    assert tuner.current == 2 and tuner.moves == []
    assert used.count(1) <= 8 * tuner.trial  # the interval doubled after each losing trial


def test_a_clearly_slower_count_is_tried_for_one_or_two_decodes_only():
    """Busy processes on 2 cores: 2 threads take 1.5 or 2 times as long as 1.
    The tuner stays at 1 and spends few decodes finding that out again."""
    tuner = ThreadTuner(start=1, max_threads=2)
    used = _simulate(tuner, {1: 0.020, 2: 0.040}.get, 1000)
    assert tuner.current == 1 and tuner.moves == []
    assert used.count(2) == 5  # one-decode trials at 32, 97, 226, 483, 996
    tuner = ThreadTuner(start=1, max_threads=2)
    used = _simulate(tuner, {1: 0.020, 2: 0.030}.get, 1000)
    assert tuner.current == 1 and used.count(2) == 8  # two-decode trials at 32, 98, 228, 486
    # a close loss (3% slower) is still tried for the full trial length
    tuner = ThreadTuner(start=1, max_threads=2)
    used = _simulate(tuner, {1: 0.020, 2: 0.0206}.get, 40)
    assert used.count(2) == tuner.trial


def test_a_held_tuner_tries_nothing_and_drops_the_trial_under_way():
    """run --compare holds the tuners: a trial due every `interval` decodes
    would hit the same side of every pair when a pair lasts that long."""
    tuner = ThreadTuner(start=1, max_threads=2)
    faster_at_2 = {1: 0.020, 2: 0.010}.get
    used = _simulate(tuner, faster_at_2, tuner.interval)
    assert tuner.candidate == 2 and used[-1] == 1  # decode 33 would be a trial's first
    with tuner.hold():
        assert tuner.threads == 1 and tuner.candidate is None
        assert _simulate(tuner, faster_at_2, 500) == [1] * 500
    assert tuner.held is False and tuner.current == 1
    used = _simulate(tuner, faster_at_2, 2 * tuner.interval)
    assert tuner.current == 2 and used[-1] == 2  # released: the next trial moves it


def test_load_probe_reads_busy_time_of_other_processes(tmp_path):
    stat = tmp_path / "stat"

    def write(busy_ticks: int) -> None:
        stat.write_text(
            f"cpu  0 0 0 0 0 0 0 0\ncpu0 {busy_ticks} 0 0 1000 0 0 0 0\ncpu1 0 0 0 1000 0 0 0 0\n"
        )

    write(0)
    probe = LoadProbe(cpus=[0, 1], stat=stat)
    write(30)  # 0.3 CPU-seconds busy (100 ticks per second on Linux)
    others = probe.others_busy(min_window=0.4)
    assert 0.3 <= others <= 0.76
    assert LoadProbe(cpus=[0], stat=tmp_path / "missing").others_busy() is None


def test_fixed_costs_make_the_plans_depend_on_acceptance_alone():
    """With a CostModel, timings are ignored: two policies that see the same
    rounds but very different step times plan the same lengths."""
    from localsidecar.decoding.policy import CostModel

    rng = random.Random(3)
    timings = [(rng.choice([1, 2, 4]), rng.uniform(0.001, 5.0)) for _ in range(200)]
    outcomes = [rng.random() < 0.7 for _ in range(200)]
    plans = []
    for scale in (1.0, 50.0):
        pol = DraftPolicy(CAP, costs=CostModel(draft_step=0.05))
        seq = []
        for (b, s), hit in zip(timings, outcomes):
            plan = pol.plan()
            seq.append((plan.k, plan.probe))
            pol.record_verify(b, s * scale)
            pol.record_draft_step(1, s * scale)
            if plan.k:
                pol.record_round([0.9] * plan.k, plan.k if hit else 0)
        plans.append(seq)
    assert plans[0] == plans[1]
    assert plans[0][0] == (1, True) and max(k for k, _ in plans[0]) >= 2  # a cheap draft drafts several


def test_a_draft_of_nearly_its_targets_bytes_never_drafts_nor_probes():
    from localsidecar.decoding.policy import CostModel

    costs = CostModel.for_pair(98_362_432, 91_726_912)  # the embedded Q4_1 target and its Q4_0 draft
    assert costs.draft_step == 0.9325 and "0.9325" in costs.id
    pol = DraftPolicy(CAP, costs=costs)
    assert all(pol.plan().k == 0 for _ in range(1000))
    small = CostModel.for_pair(1_000_000_000, 100_000_000)  # a draft a tenth of its target
    assert small.draft_step == 0.1 and DraftPolicy(CAP, costs=small).plan() == Plan(k=1, rate=1.0, probe=True)


def test_why_a_policy_drafts_nothing_names_the_cost_models_numbers():
    """The one line a run that drafted nothing shows: the best draft length if
    the target accepted every drafted token, and its rate against the target
    alone; None exactly when some draft length could beat the target."""
    from localsidecar.decoding.policy import CostModel

    costs = CostModel.for_pair(98_362_432, 91_726_912)  # the embedded pair
    k, rate = costs.best_case(CAP)
    assert k == 1 and rate == pytest.approx(2 / (0.9325 + 1.5))  # (k + 1) / (k c_d + V(k + 1))
    assert DraftPolicy(CAP, costs=costs).why_idle() == (
        "a drafted token costs 0.93 of a target token and verifying 2 tokens costs 1.5× one, so even with "
        "every drafted token accepted speculation would run at ≈0.82× the target alone"
    )
    assert DraftPolicy(0, costs=costs).why_idle() == "--draft-max-cap is 0"
    for step in [i / 100 for i in range(1, 120)]:  # the line exactly when acceptance could not help
        pol = DraftPolicy(CAP, costs=CostModel(step))
        assert (pol.why_idle() is None) == pol._could_win(), step
    assert CostModel(0.1).best_case(CAP)[0] == CAP  # a cheap draft's best case drafts the most
