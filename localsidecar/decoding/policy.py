"""`--draft-max auto`: the draft length of each round, chosen from costs and
the acceptance seen so far (DraftPolicy); a fixed `--draft-max k` is the
policy FixedLength. Both answer the questions of drafting.Drafter's loop.

Pure Python: the speculative loop feeds it the acceptance outcomes of every
round (and, without a fixed CostModel, its own step timings) and asks it
what to do next. The engine always passes a CostModel: the costs are then
fixed for the document, so every decision depends on the tokens alone and a
rerun gives the same rounds, hence the same batches and output (docs/DESIGN.md,
Batch shape changes results). Timed costs (no CostModel) adapt to the machine
but change from run to run; only the policy's unit tests use them.

Cost model of one round that drafts k tokens:

    C(k) = k * c_d + V(k + 1)        (C(0) = V(1): the target alone)
    E(k) = 1 + sum_{i=1..k} prod_{j=1..i} a_j

c_d: seconds of one draft step (its decode plus reading its distribution;
the catch-up batch that opens a round counts as its first step); V(b):
seconds of one target call on b tokens, logits and acceptance included;
a_j: the chance that draft token j is accepted once tokens 1..j-1 were.
With a CostModel, c_d and V(b) are in units of V(1), the target's one-token call.
E(k) / C(k) is the predicted tokens per second; the plan takes the k in
0..cap that maximizes it (Dinkelbach: that best rate R* is also the price of
a second in the stopping rules below). Every cost is a running median of the
loop's own timings, by batch size, or the CostModel's fixed values.

Inside a round the draft's own confidence (its probability c of the token it
proposes) refines a_j: token i joins the batch while its expected gain
P_i - R* * (V(i + 1) - V(i)) stays positive, P_i = prod_{j<=i} a(c_j), and the
draft decodes it to propose token i + 1 only while drafting on can still
gain (expected extra tokens - R* * extra seconds > 0 for some further length).

While the plan says 0 the draft does not decode; every `probe_after` such
rounds it drafts one token anyway (a probe) to refresh acceptance and costs,
and the gap doubles after each probe that does not change the plan (up to
`probe_max`), so a pair whose acceptance recovers gets back to drafting.
When even a draft the target always accepted would lose at the measured
costs (a draft nearly as slow as its target), acceptance cannot change the
plan: it probes only every `probe_max` rounds, for the costs.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

AUTO = "auto"


class CostTable:
    """Running median of the seconds a step takes, by batch size; sizes never
    measured are interpolated between measured ones, extrapolated above the
    largest along the slope of the two largest (at least flat), and, with a
    single size measured, taken as proportional to the batch size (a
    pessimistic start that probes replace with measurements)."""

    def __init__(self, window: int = 15):
        self.window = window
        self._samples: dict[int, deque] = {}
        self._est: dict[int, float] = {}

    def add(self, size: int, seconds: float) -> None:
        d = self._samples.setdefault(size, deque(maxlen=self.window))
        d.append(seconds)
        s = sorted(d)
        m = len(s) // 2
        self._est[size] = s[m] if len(s) % 2 else 0.5 * (s[m - 1] + s[m])

    def measured(self) -> dict[int, float]:
        return dict(sorted(self._est.items()))

    def __contains__(self, size: int) -> bool:
        return size in self._est

    def get(self, size: int) -> float | None:
        est = self._est
        if size in est:
            return est[size]
        if not est:
            return None
        sizes = sorted(est)
        if size < sizes[0]:
            return est[sizes[0]]
        if size > sizes[-1]:
            top = sizes[-1]
            if len(sizes) == 1:
                return est[top] * size / top
            prev = sizes[-2]
            slope = max(0.0, (est[top] - est[prev]) / (top - prev))
            return est[top] + slope * (size - top)
        hi = next(s for s in sizes if s > size)
        lo = max(s for s in sizes if s < size)
        w = (size - lo) / (hi - lo)
        return est[lo] * (1 - w) + est[hi] * w


# V(b) / V(1) - 1 per extra token of a target call, measured on a 2-core CPU
# with the embedded SmolLM2-135M target (0.5 to 0.7 for b = 2..9; one thread,
# 300 cells): llama.cpp's CPU kernels for a few tokens cost nearly per token.
VERIFY_SLOPE = 0.5


@dataclass(frozen=True)
class CostModel:
    """Fixed costs in units of one target call on one token: a draft step
    costs `draft_step`, a target call on b tokens 1 + slope * (b - 1).
    for_pair derives draft_step from the models' weight bytes (a decode
    reads every weight once), so it depends on the files only."""

    draft_step: float
    verify_slope: float = VERIFY_SLOPE

    @classmethod
    def for_pair(cls, target_bytes: int, draft_bytes: int) -> CostModel:
        return cls(round(draft_bytes / target_bytes, 4) if target_bytes > 0 else 1.0)

    def verify(self, batch: int) -> float:
        return 1.0 + self.verify_slope * (batch - 1)

    @property
    def id(self) -> str:
        """What the decisions depend on besides the tokens (records carry it)."""
        return f"bytes-ratio {self.draft_step:g}, verify slope {self.verify_slope:g}"

    def best_case(self, cap: int) -> tuple[int, float]:
        """The draft length k in 1..cap with the best rate if the target accepted
        every drafted token, and that rate relative to the target alone:
        (k + 1) / (k * draft_step + verify(k + 1)), the target's V(1) being 1."""
        rates = {k: (k + 1) / (k * self.draft_step + self.verify(k + 1)) for k in range(1, max(1, cap) + 1)}
        k = max(rates, key=lambda i: (rates[i], -i))
        return k, rates[k]

    def why_not_worth_it(self, cap: int) -> str | None:
        """One line with the numbers when no draft length in 1..cap beats the
        target alone even with every drafted token accepted (None otherwise)."""
        k, rate = self.best_case(cap)
        if rate > 1.0:
            return None
        return (
            f"a drafted token costs {self.draft_step:.2f} of a target token and verifying {k + 1} tokens "
            f"costs {self.verify(k + 1):.1f}× one, so even with every drafted token accepted speculation "
            f"would run at ≈{rate:.2f}× the target alone"
        )


class Acceptance:
    """Exponentially decayed acceptance counts (each observation weighs `decay`
    times the previous one), by draft position and by confidence bin.

    Position j's estimate shrinks toward position j-1's (position 1 toward
    `prior`) with `prior_weight` pseudo-observations; a confidence bin's
    toward its own middle: a draft that says 0.9 is believed until measured.
    """

    def __init__(self, decay: float = 0.9, prior: float = 0.5, prior_weight: float = 1.0, bins: int = 10):
        self.decay, self.prior, self.prior_weight, self.bins = decay, prior, prior_weight, bins
        self._pos: list[list[float]] = []  # [accepted, tried] per position
        self._conf = [[0.0, 0.0] for _ in range(bins)]

    def observe(self, confidences: list[float], n_accepted: int) -> None:
        """One verified round: the draft's confidence in each token it proposed
        and how many of them (a prefix) the target accepted. Tokens after the
        first rejection were never tried and teach nothing."""
        for i, c in enumerate(confidences[: n_accepted + 1]):
            hit = 1.0 if i < n_accepted else 0.0
            while len(self._pos) <= i:
                self._pos.append([0.0, 0.0])
            for cell in (self._pos[i], self._conf[self._bin(c)]):
                cell[0] = self.decay * cell[0] + hit
                cell[1] = self.decay * cell[1] + 1.0

    def _bin(self, c: float) -> int:
        return min(self.bins - 1, max(0, int(c * self.bins)))

    def by_position(self, k: int) -> list[float]:
        """Estimated a_1..a_k."""
        out, prior, w = [], self.prior, self.prior_weight
        for i in range(k):
            acc, n = self._pos[i] if i < len(self._pos) else (0.0, 0.0)
            prior = (acc + w * prior) / (n + w)
            out.append(prior)
        return out

    def given_confidence(self, c: float) -> float:
        b = self._bin(c)
        acc, n = self._conf[b]
        w = self.prior_weight
        return (acc + w * (b + 0.5) / self.bins) / (n + w)

    def tried(self) -> float:
        """Decayed count of observations at position 1."""
        return self._pos[0][1] if self._pos else 0.0


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What to do this round. k: most tokens to draft (0: the target alone);
    rate: R*, the best predicted tokens per second (None before any
    measurement); probe: drafting one token only to refresh the estimates."""

    k: int
    rate: float | None
    probe: bool = False


def expected_tokens(accept: list[float]) -> list[float]:
    """E(0..k) for acceptance chances a_1..a_k: 1 + sum of the prefix products."""
    out, e, run = [1.0], 1.0, 1.0
    for a in accept:
        run *= a
        e += run
        out.append(e)
    return out


def best_k(accept: list[float], draft_s: float, verify_s: list[float]) -> tuple[int, float, list[float]]:
    """The k in 0..len(accept) maximizing E(k) / C(k), that best rate, and the
    rate of every k. verify_s[b - 1] is V(b), for b = 1..len(accept) + 1."""
    es = expected_tokens(accept)
    rates = [es[k] / (k * draft_s + verify_s[k]) for k in range(len(es))]
    k = max(range(len(rates)), key=lambda i: (rates[i], -i))
    return k, rates[k], rates


class FixedLength:
    """A fixed draft length as a policy: every round drafts k tokens (the
    drafting loop stops earlier only below p_min or at a stop token). It
    learns nothing, so its record_* calls do nothing."""

    reads_confidence = False  # include() ignores the draft's confidence

    def __init__(self, k: int):
        self.k = self.cap = max(0, int(k))

    def plan(self) -> Plan:
        return Plan(k=self.k, rate=None)

    def record_draft_step(self, n_tokens: int, seconds: float) -> None:
        pass

    def record_verify(self, batch: int, seconds: float) -> None:
        pass

    def record_round(self, confidences: list[float], n_accepted: int) -> None:
        pass

    def include(self, i: int, p_before: float, confidence: float, plan: Plan) -> float:
        return p_before

    def extend(self, i: int, p_i: float, plan: Plan) -> bool:
        return i < self.k

    def describe(self) -> str:
        return f"policy: fixed k={self.k}"


class DraftPolicy:
    """Chooses k before each round and stops drafting mid-round (see the
    module docstring). With `costs` the cost tables hold its fixed values and
    timings are ignored; the Engine makes a new policy per document, so a
    document's rounds do not depend on the documents before it."""

    reads_confidence = True  # include() weighs the draft's probability of each token

    def __init__(
        self, cap: int, *, probe_after: int = 8, probe_max: int = 256, costs: CostModel | None = None
    ):
        self.cap = max(0, int(cap))
        self.costs = costs
        self.draft = CostTable()  # seconds per draft step, by tokens decoded in it
        self.verify = CostTable()  # seconds per target call, by batch size
        if costs is not None:
            self.draft.add(1, costs.draft_step)
            for b in range(1, self.cap + 2):
                self.verify.add(b, costs.verify(b))
        self.acc = Acceptance()
        self.probe_after, self.probe_max = probe_after, probe_max
        self._gap = probe_after  # k = 0 rounds before the next probe
        self._idle = 0  # consecutive rounds the plan said 0
        self.last: Plan | None = None
        self.rates: list[float] = []  # predicted rate of each k at the last plan

    # --- observations -------------------------------------------------------------

    def record_draft_step(self, n_tokens: int, seconds: float) -> None:
        if self.costs is None:
            self.draft.add(n_tokens, seconds)

    def record_verify(self, batch: int, seconds: float) -> None:
        if self.costs is None:
            self.verify.add(batch, seconds)

    def record_round(self, confidences: list[float], n_accepted: int) -> None:
        if confidences:
            self.acc.observe(confidences, n_accepted)

    # --- decisions ------------------------------------------------------------------

    def draft_cost(self) -> float | None:
        return self.draft.get(1)

    def _verify_costs(self) -> list[float]:
        return [self.verify.get(b) for b in range(1, self.cap + 2)]

    def plan(self) -> Plan:
        """Called once before each round."""
        self.last = self._plan()
        return self.last

    def _plan(self) -> Plan:
        if self.cap == 0:
            return Plan(k=0, rate=None)
        if 1 not in self.verify:
            return Plan(k=0, rate=None)  # measure the target alone first
        c_d = self.draft_cost()
        if self.costs is not None and not self._could_win():
            return Plan(k=0, rate=1.0 / self.verify.get(1))  # fixed costs: no acceptance makes drafting pay
        if c_d is None or 2 not in self.verify or self.acc.tried() == 0:
            return Plan(k=1, rate=1.0 / self.verify.get(1), probe=True)
        verify = self._verify_costs()
        k, rate, self.rates = best_k(self.acc.by_position(self.cap), c_d, verify)
        if k > 0:
            self._idle, self._gap = 0, self.probe_after
            return Plan(k=k, rate=rate)
        self._idle += 1
        # when even a draft the target always accepted would lose, only a change
        # of costs can make drafting pay: probe at the longest gap
        could_win = self._could_win()
        if self._idle > (self._gap if could_win else self.probe_max):
            self._idle = 0
            if could_win:
                self._gap = min(2 * self._gap, self.probe_max)
            return Plan(k=1, rate=rate, probe=True)
        return Plan(k=0, rate=rate)

    def _could_win(self) -> bool:
        """Would a draft the target always accepted beat the target alone?"""
        return best_k([1.0] * self.cap, self.draft_cost(), self._verify_costs())[0] > 0

    def include(self, i: int, p_before: float, confidence: float, plan: Plan) -> float | None:
        """Token i (1-based) proposed with `confidence`; p_before: the chance
        that tokens 1..i-1 are all accepted. Returns P_i, the chance that
        1..i are, when adding token i to the batch is worth its verify cost;
        None when the round should stop before it."""
        p = p_before * self.acc.given_confidence(confidence)
        if plan.probe or plan.rate is None:
            return p
        extra = self.verify.get(i + 1) - self.verify.get(i)
        return p if p - plan.rate * extra > 0 else None

    def extend(self, i: int, p_i: float, plan: Plan) -> bool:
        """After including token i with P_i: is decoding it in the draft, to
        propose more, worth it? True while some further length m has a
        positive expected gain: P_i * (a_{i+1} + a_{i+1}a_{i+2} + ...)
        - R* * (m * c_d + V(i+1+m) - V(i+1))."""
        if plan.probe or plan.rate is None or i >= self.cap:
            return False
        c_d = self.draft_cost()
        accept = self.acc.by_position(self.cap)[i:]
        v0 = self.verify.get(i + 1)
        gain_tokens, run = 0.0, p_i
        for m, a in enumerate(accept, start=1):
            run *= a
            gain_tokens += run
            cost = m * c_d + self.verify.get(i + 1 + m) - v0
            if gain_tokens - plan.rate * cost > 0:
                return True
        return False

    def why_idle(self) -> str | None:
        """Why this policy drafts nothing, in words with its numbers (--draft-max-cap
        0, or fixed costs under which no acceptance makes drafting pay); None
        when acceptance could have made it draft."""
        if self.cap == 0:
            return "--draft-max-cap is 0"
        return self.costs.why_not_worth_it(self.cap) if self.costs is not None else None

    def describe(self) -> str:
        """One line for --verbose: the plan, its predicted rates and the cost model."""
        p = self.last
        if p is None:
            return "policy: no plan yet"
        c_d = self.draft_cost()
        head = f"policy: k={p.k}{' (probe)' if p.probe else ''}"
        rates = " ".join(f"{k}:{r:.1f}" for k, r in enumerate(self.rates[:5]))
        acc = " ".join(f"{a:.2f}" for a in self.acc.by_position(min(self.cap, 4)))
        if self.costs is not None:
            return (
                f"{head}; predicted tokens per target-token time by k {rates or '-'}; acceptance by position "
                f"{acc or '-'}; fixed costs ({self.costs.id})"
            )
        verify = " ".join(f"{b}:{1000 * s:.1f}" for b, s in list(self.verify.measured().items())[:6])
        draft = f"{1000 * c_d:.1f}" if c_d is not None else "-"
        return (
            f"{head}; predicted tok/s by k {rates or '-'}; acceptance by position {acc or '-'}; "
            f"draft ms/token {draft}; verify ms by batch {verify or '-'}"
        )
