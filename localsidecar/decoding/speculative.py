"""The speculative loop: draft, verify, accept, roll back.

Invariant (as in llama.cpp's speculative-simple): between rounds the target
cache holds exactly the committed tokens except the last one, `last`, which
the next round decodes first ("keep the last token separate"). The draft
holds a prefix of them (never the last one): it lags behind after rounds
that did not draft and never decodes its final proposal, and catches up in
one batch when it next drafts (DraftLayout.catch_up).

Acceptance (Leviathan et al. 2023): at temperature 0 accept the longest prefix
of the draft that equals the target's argmax; above 0 accept d_i with
probability min(1, p(d_i)/q(d_i)) and on rejection sample from
norm(max(0, p - q)), which leaves the output distributed exactly as p.

Draft length: a fixed `draft_max` drafts that many tokens every round (fewer
only below `p_min`); `draft_max="auto"` asks a policy.DraftPolicy each round,
which may also choose 0 (the target decodes one token alone).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from localsidecar.backend import Context
from localsidecar.decoding.defaults import DEFAULT_DRAFT_MAX_CAP, DEFAULT_MAX_TOKENS, cells_after_prompt
from localsidecar.decoding.distributions import overlap, softmax
from localsidecar.decoding.layouts import DraftLayout, LazyLayout, Seq
from localsidecar.decoding.policy import AUTO, DraftPolicy, Plan

# Below this many drafted tokens a rate over them is marked (report, JSON
# `few_drafted`): 20 Bernoulli trials put a 95% interval of about ±0.2 on it.
FEW_DRAFTED = 20


@dataclass
class SpecStats:
    """Counters of one summary.

    n_drafted: draft tokens proposed; n_accept: of those, accepted (the bonus
    token the target adds each round is not counted); rounds: loop rounds,
    each one target call on [last] + that round's proposals (k_hist sums to
    it); target_calls: every llama_decode call the target made for the
    summary, the prompt's batches included; alpha_sum / alpha_n: sum and
    count of the online overlap sum_v min(p, q) over drafted positions;
    k_hist: rounds by tokens drafted in them (0: the target alone);
    verify_s_by_batch: seconds and count of target calls by batch size;
    draft_s / verify_s: seconds drafting / in target calls and acceptance;
    catchup_s / catchup_tokens: the batches that bring the draft up to the
    committed tokens at the start of a drafting round (one token or two
    after a drafting round, the whole lag after rounds that did not draft),
    apart from draft_s.
    """

    n_drafted: int = 0
    n_accept: int = 0
    rounds: int = 0
    target_calls: int = 0
    alpha_sum: float = 0.0
    alpha_n: int = 0
    draft_s: float = 0.0
    verify_s: float = 0.0
    catchup_s: float = 0.0
    catchup_tokens: int = 0
    k_hist: Counter = field(default_factory=Counter)
    verify_s_by_batch: dict[int, list] = field(default_factory=dict)  # batch size -> [seconds, calls]

    @property
    def alpha(self) -> float | None:
        return self.alpha_sum / self.alpha_n if self.alpha_n else None

    @property
    def acceptance_rate(self) -> float | None:
        return self.n_accept / self.n_drafted if self.n_drafted else None

    @property
    def k_mean(self) -> float | None:
        return self.n_drafted / self.rounds if self.rounds else None

    @property
    def draft_ms_per_token(self) -> float | None:
        """Drafting time per drafted token, catch-up batches excluded (they
        are catchup_s): the c_d of the cost model k * c_d + V(k + 1)."""
        return 1000 * self.draft_s / self.n_drafted if self.n_drafted else None

    @property
    def few_drafted(self) -> bool:
        """Too few drafted tokens for a rate (acceptance, α, ms/token) to mean much."""
        return self.n_drafted < FEW_DRAFTED

    def verify_ms(self) -> dict[int, float]:
        """Mean ms of a target call by batch size: V(b) of the cost model."""
        return {b: 1000 * s / n for b, (s, n) in sorted(self.verify_s_by_batch.items())}

    def add_round(self, k: int, verify_s: float) -> None:
        self.rounds += 1
        self.k_hist[k] += 1
        self.verify_s += verify_s
        cell = self.verify_s_by_batch.setdefault(k + 1, [0.0, 0])
        cell[0] += verify_s
        cell[1] += 1


@dataclass(frozen=True)
class Generation:
    """Output of one summary generation (speculative or target-only), built
    once complete.

    tokens: the summary's token ids (a final end-of-generation token excluded);
    stopped: "eog", "max_tokens" or the reason a TokenHook gave; target_argmax: for each emitted token, the
    argmax of the target logits it was chosen from (greedy: equal to tokens);
    prefill_s / gen_s: seconds for the prompt and for the generation loop.
    """

    tokens: list[int]
    stopped: str
    stats: SpecStats
    target_argmax: list[int] = field(default_factory=list)
    prefill_s: float = 0.0
    gen_s: float = 0.0


@dataclass(frozen=True)
class Prefill:
    """What processing the prompt took on the target: seconds and decode calls."""

    seconds: float = 0.0
    target_calls: int = 0


# "auto": a policy picks each round's draft length from the pair's measured
# costs (policy.py); an integer drafts that many tokens every round.
# LOCALSIDECAR_DRAFT_MAX sets a user's own default.
DEFAULT_DRAFT_MAX = AUTO


# Called after each emitted summary token with the summary so far; a string
# return value stops the summary there and becomes Generation.stopped
# (the engine's sentence stop and progress: localsidecar.decoding.sentences.SentenceStop).
TokenHook = Callable[[list[int]], "str | None"]


@dataclass
class SpecConfig:
    draft_max: int | str = DEFAULT_DRAFT_MAX
    p_min: float = 0.0
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int = DEFAULT_MAX_TOKENS
    draft_max_cap: int = DEFAULT_DRAFT_MAX_CAP  # bounds "auto"

    def __post_init__(self):
        if self.draft_max != AUTO and not (isinstance(self.draft_max, int) and self.draft_max >= 1):
            raise ValueError(f"draft_max must be 'auto' or an integer >= 1, not {self.draft_max!r}")

    @property
    def auto(self) -> bool:
        return self.draft_max == AUTO

    @property
    def longest_draft(self) -> int:
        return self.draft_max_cap if self.auto else self.draft_max

    @property
    def cells_after_prompt(self) -> int:
        """KV cells a context takes after bare[:-1]: the last prompt token, the
        summary and one draft beyond it (layouts.prefill_draft's `reserve`)."""
        return cells_after_prompt(self.max_tokens, self.longest_draft)


class SpeculativeDecoder:
    """Runs the loop over a target context (sequence 0) and a draft context
    whose layout was prepared by layouts.prefill_draft. With draft_max "auto"
    `policy` chooses the draft lengths (a fresh one when None; pass the same
    policy across documents to keep its estimates); `log` receives its
    decisions now and then (--verbose)."""

    LOG_EVERY = 32  # rounds between policy lines in the log (and at every change of k)

    def __init__(
        self,
        target: Context,
        draft: Context,
        cfg: SpecConfig,
        policy: DraftPolicy | None = None,
        log: Callable[[str], None] | None = None,
    ):
        self.t = target
        self.d = draft
        self.cfg = cfg
        self.rng = np.random.default_rng(cfg.seed)
        self.n_common = min(target.n_vocab, draft.n_vocab)
        self.policy = (policy or DraftPolicy(cfg.draft_max_cap)) if cfg.auto else None
        self.log = log
        self._logged: tuple[int, int] | None = None  # (round, k) of the last log line

    # --- steps -----------------------------------------------------------------

    def _propose(self) -> tuple[int, np.ndarray] | None:
        """The draft's next token and the distribution q it came from, or None
        below p_min."""
        cfg = self.cfg
        q = softmax(self.d.logits(-1)[: self.n_common], cfg.temperature or 1.0)
        top = int(q.argmax())
        if q[top] < cfg.p_min:
            return None
        tok = top if cfg.temperature == 0 else int(self.rng.choice(q.shape[0], p=q))
        return tok, q

    def _draft(self, lay: DraftLayout) -> tuple[list[int], list[np.ndarray]]:
        """Propose draft_max tokens from a caught-up draft (fewer below
        p_min); the draft decodes all but the last proposal."""
        tokens: list[int] = []
        qs: list[np.ndarray] = []
        for i in range(self.cfg.draft_max):
            got = self._propose()
            if got is None:
                break
            tokens.append(got[0])
            qs.append(got[1])
            if i + 1 < self.cfg.draft_max:
                lay.push(self.d, got[0])
        return tokens, qs

    def _draft_auto(
        self, lay: DraftLayout, plan: Plan, catchup: tuple[int, float]
    ) -> tuple[list[int], list[np.ndarray]]:
        """Like _draft, but each step asks the policy whether the next token is
        worth verifying and whether drafting on is worth a draft decode; every
        draft step's time goes to the policy (which ignores it with fixed
        costs), the catch-up batch (tokens, seconds) counting in the first."""
        pol = self.policy
        n, t0 = catchup[0], time.perf_counter() - catchup[1]
        tokens: list[int] = []
        qs: list[np.ndarray] = []
        p_all = 1.0
        for i in range(1, pol.cap + 1):
            got = self._propose()
            pol.record_draft_step(n, time.perf_counter() - t0)
            if got is None:
                break
            tok, q = got
            p_all = pol.include(i, p_all, float(q[tok]), plan)
            if p_all is None:
                break
            tokens.append(tok)
            qs.append(q)
            if not pol.extend(i, p_all, plan):
                break
            t0, n = time.perf_counter(), 1
            lay.push(self.d, tok)
        return tokens, qs

    def _verify(self, last: int, pos: int, drafted: list[int]) -> np.ndarray:
        """One target batch [last, d1..dk] with logits for every token: a view
        of llama.cpp's rows, valid until the target's next decode (the round
        reads them before that)."""
        self.t.decode_plan((tok, pos + i, (Seq.SUMMARY,), True) for i, tok in enumerate([last] + drafted))
        return self.t.logits_rows()

    def _accept(
        self, drafted: list[int], qs: list[np.ndarray], logits: list[np.ndarray]
    ) -> tuple[int, int, list[np.ndarray]]:
        """Returns (accepted count j, the target's next token, target dists p:
        one per drafted token at temperature 0, one per row above)."""
        temp = self.cfg.temperature
        if temp == 0:
            ps = [softmax(l[: self.n_common]) for l in logits[: len(drafted)]]
            j = 0
            while j < len(drafted) and int(np.argmax(logits[j])) == drafted[j]:
                j += 1
            return j, int(np.argmax(logits[j])), ps
        ps = [softmax(l[: self.n_common], temp) for l in logits]
        for j, (tok, q) in enumerate(zip(drafted, qs)):
            p = ps[j]
            if self.rng.random() < min(1.0, float(p[tok]) / float(q[tok])):
                continue
            resid = np.maximum(p - q, 0.0)
            total = resid.sum()
            nxt = int(self.rng.choice(resid.shape[0], p=resid / total)) if total > 0 else int(p.argmax())
            return j, nxt, ps
        j = len(drafted)
        return j, int(self.rng.choice(ps[j].shape[0], p=ps[j])), ps

    # --- loop ------------------------------------------------------------------

    def _round(self, committed: list[int], lazy: LazyLayout, stats: SpecStats):
        """Draft (or not), verify, accept; returns (drafted, j, next token, logits)."""
        plan = self.policy.plan() if self.policy else None
        if plan is None or plan.k > 0:
            lay = lazy.get()  # a first prefill is timed apart (prompt processing, not drafting)
        ta = time.perf_counter()
        if plan is None or plan.k > 0:
            n_caught = lay.catch_up(self.d, committed)
            caught = time.perf_counter()
            stats.catchup_s += caught - ta
            stats.catchup_tokens += n_caught
        if plan is None:
            drafted, qs = self._draft(lay)
        elif plan.k > 0:
            drafted, qs = self._draft_auto(lay, plan, (n_caught, caught - ta))
        else:
            drafted, qs = [], []  # the target alone; the draft waits (no decode)
        tb = time.perf_counter()
        logits = self._verify(committed[-1], len(committed) - 1, drafted)
        j, nxt, ps = self._accept(drafted, qs, logits)
        verify_s = time.perf_counter() - tb
        if plan is None or plan.k > 0:
            stats.draft_s += tb - caught
        stats.add_round(len(drafted), verify_s)
        stats.n_drafted += len(drafted)
        stats.n_accept += j
        for i, q in enumerate(qs):
            stats.alpha_sum += overlap(ps[i], q)
            stats.alpha_n += 1
        if self.policy:
            self.policy.record_verify(len(drafted) + 1, verify_s)
            self.policy.record_round([float(q[t]) for t, q in zip(drafted, qs)], j)
            self._log_plan(stats.rounds, plan)
        return drafted, j, nxt, logits

    def _log_plan(self, round_no: int, plan: Plan) -> None:
        if self.log is None:
            return
        last = self._logged
        if (
            last is None
            or (plan.k != last[1] and round_no - last[0] >= 4)
            or round_no - last[0] >= self.LOG_EVERY
        ):
            self.log(f"round {round_no}: {self.policy.describe()}")
            self._logged = (round_no, plan.k)

    def _restore(self, committed: list[int], lazy: LazyLayout) -> None:
        """Both caches back to at most committed[:-1] (idempotent)."""
        self.t.seq_rm(Seq.SUMMARY, len(committed) - 1, -1)
        if lazy.prefilled:
            lazy.layout.rollback(self.d, len(committed) - 1)

    def generate(
        self,
        bare: list[int],
        lay: DraftLayout | LazyLayout,
        is_eog,
        prefill: Prefill = Prefill(),
        on_token: TokenHook | None = None,
    ) -> Generation:
        """Speculative summary of `bare` (the target's prompt). The target
        cache must hold bare[:-1] and the draft the layout `lay` (or, for a
        LazyLayout not yet prefilled, anything: it is prefilled the first
        round that drafts); afterwards both hold at most bare + summary minus
        its last token, also when a round stops early with an exception.
        A prefill inside the loop counts in prefill_s, not gen_s."""
        cfg = self.cfg
        lazy = lay if isinstance(lay, LazyLayout) else LazyLayout.ready(lay)
        was_prefilled = lazy.prefilled
        stats = SpecStats()
        committed = list(bare)
        out: list[int] = []
        argmax_out: list[int] = []
        stopped = "max_tokens"
        t1 = time.perf_counter()
        try:
            while len(out) < cfg.max_tokens:
                c = len(committed)
                drafted, j, nxt, logits = self._round(committed, lazy, stats)
                for i, tok in enumerate(drafted[:j] + [nxt]):
                    if is_eog(tok):
                        stopped = "eog"
                        break
                    if len(out) == cfg.max_tokens:
                        break
                    out.append(tok)
                    argmax_out.append(int(np.argmax(logits[i])))
                    if on_token is not None and (reason := on_token(out)):
                        stopped = reason
                        break
                committed = list(bare) + out
                # the draft keeps the accepted proposals it decoded, never the
                # last committed token
                self.t.seq_rm(Seq.SUMMARY, len(committed) - 1, -1)
                if lazy.prefilled:
                    lazy.layout.rollback(self.d, min(c + j, len(committed) - 1))
                if stopped != "max_tokens":  # eog, or the token hook stopped it
                    break
        finally:
            self._restore(committed, lazy)
            gen_s = time.perf_counter() - t1
        late = lazy.prefill_s if lazy.prefilled and not was_prefilled else 0.0
        stats.target_calls = prefill.target_calls + stats.rounds
        return Generation(out, stopped, stats, argmax_out, prefill.seconds + late, gen_s - late)


def target_only(
    target: Context,
    bare: list[int],
    cfg: SpecConfig,
    is_eog,
    prefill: Prefill = Prefill(),
    on_token: TokenHook | None = None,
) -> Generation:
    """Plain decoding with the target alone, one token per call (greedy at
    temperature 0, else sampling from softmax(logits / T) with cfg.seed).
    The target cache must hold bare[:-1]."""
    rng = np.random.default_rng(cfg.seed)
    out: list[int] = []
    stopped = "max_tokens"
    pos, last = len(bare) - 1, bare[-1]
    stats = SpecStats()
    t1 = time.perf_counter()
    while len(out) < cfg.max_tokens:
        ta = time.perf_counter()
        target.decode_tokens([last], pos, (Seq.SUMMARY,), "last")
        logits = target.logits(-1)
        if cfg.temperature == 0:
            tok = int(np.argmax(logits))
        else:
            p = softmax(logits, cfg.temperature)
            tok = int(rng.choice(p.shape[0], p=p))
        stats.add_round(0, time.perf_counter() - ta)
        if is_eog(tok):
            stopped = "eog"
            break
        out.append(tok)
        pos, last = pos + 1, tok
        if on_token is not None and (reason := on_token(out)):
            stopped = reason
            break
    gen_s = time.perf_counter() - t1
    stats.target_calls = prefill.target_calls + stats.rounds
    return Generation(out, stopped, stats, list(out) if cfg.temperature == 0 else [], prefill.seconds, gen_s)
