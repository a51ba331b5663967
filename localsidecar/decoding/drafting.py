"""The draft side of a round, shared by `run`'s SpeculativeDecoder and the
llama-cpp-python GGUFDraft: one loop that proposes up to a policy's length
(policy.FixedLength for a fixed k, policy.DraftPolicy for "auto"), the
counters of both, and the feedback a verified round gives the policy.

The loop needs a caught-up draft: the draft context's last logits are those
after the last committed token. It decodes every proposal but the last (to
propose the next one) through the caller's `push`, so the caller's record of
what the draft cache holds (DraftLayout.n_cached, GGUFDraft._held) grows one
token per decode and stays exact when a decode fails.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from localsidecar.backend import Context
from localsidecar.decoding.distributions import softmax
from localsidecar.decoding.numbers import DocumentNumbers, Run, allowed_logits, best_token, run_after
from localsidecar.decoding.policy import Plan

# Below this many drafted tokens a rate over them is marked (report, JSON
# `few_drafted`): 20 Bernoulli trials put a 95% interval of about ±0.2 on it.
FEW_DRAFTED = 20
# A speedup over target-only (run --compare, quant) is "not meaningful" when
# fewer than this share of the rounds drafted, or fewer than FEW_DRAFTED
# tokens: the two runs then do the same work and differ by load noise.
MEANINGFUL_DRAFTING = 0.1


@dataclass
class SpecStats:
    """Counters of one summary (run) or since a GGUFDraft was created.

    n_drafted: draft tokens proposed; n_accept: of those, accepted (the bonus
    token the target adds each round is not counted); rounds: loop rounds,
    each one target call on [last] + that round's proposals (k_hist sums to
    it; a GGUFDraft call is a round); target_calls: every llama_decode call
    the target made for the summary, the prompt's batches included (run);
    alpha_sum / alpha_n: sum and count of the online overlap sum_v min(p, q)
    over drafted positions (run); k_hist: rounds by tokens drafted in them
    (0: the target alone); verify_s_by_batch: seconds and count of target
    calls by batch size (a GGUFDraft measures the time from returning its
    proposals to its next call); draft_s / verify_s: seconds drafting / in
    target calls and acceptance; catchup_s / catchup_tokens: the batches that
    bring the draft up to the committed tokens at the start of a drafting
    round (one token or two after a drafting round, the whole lag after
    rounds that did not draft; a GGUFDraft's new input), apart from draft_s;
    catchup_reused: committed tokens the draft cache already held at those
    catch-ups.
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
    catchup_reused: int = 0
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

    @property
    def speedup_meaningful(self) -> bool:
        """Enough drafting for a speedup over target-only to say something (MEANINGFUL_DRAFTING)."""
        drafting = (self.rounds - self.k_hist.get(0, 0)) / self.rounds if self.rounds else 0.0
        return drafting >= MEANINGFUL_DRAFTING and not self.few_drafted

    # GGUFDraft's names (docs/python-api.md)
    calls = property(lambda self: self.rounds, doc="times Llama asked a GGUFDraft for proposals")
    proposed = property(lambda self: self.n_drafted)
    accepted = property(lambda self: self.n_accept)
    decoded = property(lambda self: self.catchup_tokens, doc="input tokens a GGUFDraft decoded")
    reused = property(lambda self: self.catchup_reused, doc="input tokens a GGUFDraft found cached")

    def as_dict(self) -> dict[str, Any]:
        """A GGUFDraft's summary; draft_s + catchup_s is all its decoding time."""
        keys = (
            "calls",
            "proposed",
            "accepted",
            "acceptance_rate",
            "decoded",
            "reused",
            "draft_s",
            "catchup_s",
        )
        return {k: getattr(self, k) for k in keys}

    def verify_ms(self) -> dict[int, float]:
        """Mean ms of a target call by batch size: V(b) of the cost model."""
        return {b: 1000 * s / n for b, (s, n) in sorted(self.verify_s_by_batch.items())}

    def add_catch_up(self, decoded: int, reused: int, seconds: float) -> None:
        self.catchup_tokens += decoded
        self.catchup_reused += reused
        self.catchup_s += seconds

    def add_round(self, k: int, verify_s: float | None = None) -> None:
        """A round that drafted k tokens; verify_s: its target call, when known."""
        self.rounds += 1
        self.k_hist[k] += 1
        self.n_drafted += k
        if verify_s is not None:
            self.add_verify(k + 1, verify_s)

    def add_verify(self, batch: int, seconds: float) -> None:
        self.verify_s += seconds
        cell = self.verify_s_by_batch.setdefault(batch, [0.0, 0])
        cell[0] += seconds
        cell[1] += 1


class LengthPolicy(Protocol):
    """What the loop asks of a draft-length policy (policy.FixedLength, policy.DraftPolicy)."""

    cap: int
    reads_confidence: bool

    def plan(self) -> Plan: ...
    def record_draft_step(self, n_tokens: int, seconds: float) -> None: ...
    def record_verify(self, batch: int, seconds: float) -> None: ...
    def record_round(self, confidences: list[float], n_accepted: int) -> None: ...
    def include(self, i: int, p_before: float, confidence: float, plan: Plan) -> float | None: ...
    def extend(self, i: int, p_i: float, plan: Plan) -> bool: ...


@dataclass(kw_only=True)
class Proposals:
    """One round's draft: tokens, the draft's probability of each, and (when
    kept) the distribution q each came from."""

    tokens: list[int] = field(default_factory=list)
    confidences: list[float] = field(default_factory=list)
    dists: list[np.ndarray] = field(default_factory=list)


class Drafter:
    """Proposes tokens from a draft context: the argmax of its logits over the
    first n_common ids at temperature 0, else a sample of softmax(logits / T)
    drawn with `rng`; no proposal once the draft's top probability falls
    below p_min or the token would be a `stop` token. keep_dists: keep every
    q (the decoder's acceptance needs them); without it q is computed only
    where p_min or the policy reads it. numbers: the document-numbers
    constraint (decoding.numbers), None for free numbers."""

    def __init__(
        self,
        ctx: Context,
        n_common: int,
        *,
        p_min: float = 0.0,
        temperature: float = 0.0,
        rng: np.random.Generator | None = None,
        stop: Callable[[int], bool] | None = None,
        keep_dists: bool = True,
        numbers: DocumentNumbers | None = None,
    ):
        if temperature != 0 and rng is None:
            raise ValueError("sampling (temperature > 0) needs an rng")
        self.ctx, self.n_common, self.p_min, self.temperature = ctx, n_common, p_min, temperature
        self.rng, self.stop, self.keep_dists, self.numbers = rng, stop, keep_dists, numbers

    def propose(self, need_q: bool, run: Run = None) -> tuple[int, float, np.ndarray | None] | None:
        """The next token, the draft's probability of it (1.0 when q was not
        needed) and q; None where drafting stops. With `numbers` the choice
        and q are those of the constrained distribution at state `run`, as the
        decoder's target side (so rejection sampling stays exact)."""
        logits = self.ctx.logits(-1)[: self.n_common]
        num = self.numbers
        top = best_token(num, logits, run)
        if not (need_q or self.keep_dists or self.p_min > 0):
            return None if self.stop is not None and self.stop(top) else (top, 1.0, None)
        q = softmax(allowed_logits(num, logits, run), self.temperature or 1.0)
        if q[top] < self.p_min:
            return None
        tok = top if self.temperature == 0 else int(self.rng.choice(q.shape[0], p=q))
        if self.stop is not None and self.stop(tok):
            return None
        return tok, float(q[tok]), q if self.keep_dists else None

    def draft(
        self,
        policy: LengthPolicy,
        plan: Plan,
        limit: int,
        push: Callable[[int], None],
        catch_up: tuple[int, float],
        out: Proposals | None = None,
        run: Run = None,
    ) -> Proposals:
        """Up to `limit` proposals (at most policy.cap) into `out`. The policy
        decides, token by token, whether a proposal is worth verifying
        (include) and whether it is worth a draft decode to propose the next
        (extend); `push(token)` decodes one. Every draft step's time goes to
        the policy, the catch-up batch (tokens, seconds) counting in the
        first; a catch-up longer than cap + 1 tokens reads a prompt, not a
        round, and is not a step. `out` is filled as the loop goes, so a
        caller sees what was proposed when a decode raises. `run`: the numbers
        state after the committed tokens (with `numbers`)."""
        out = Proposals() if out is None else out
        need_q = policy.reads_confidence
        n, t0 = catch_up[0], time.perf_counter() - catch_up[1]
        p_all: float | None = 1.0
        for i in range(1, min(limit, policy.cap) + 1):
            got = self.propose(need_q, run)
            if n <= policy.cap + 1:
                policy.record_draft_step(n, time.perf_counter() - t0)
            if got is None:
                break
            tok, conf, q = got
            if (p_all := policy.include(i, p_all, conf, plan)) is None:
                break
            out.tokens.append(tok)
            out.confidences.append(conf)
            if q is not None:
                out.dists.append(q)
            run = run_after(self.numbers, run, tok)
            if i == limit or not policy.extend(i, p_all, plan):
                break
            t0, n = time.perf_counter(), 1
            push(tok)
        return out


def settle(
    stats: SpecStats, policy: LengthPolicy, proposals: Proposals, n_accepted: int, verify_s: float
) -> None:
    """A verified round: its acceptance and target time into the counters and
    the policy (which learns from them under "auto")."""
    stats.n_accept += n_accepted
    batch = len(proposals.tokens) + 1
    policy.record_verify(batch, verify_s)
    policy.record_round(proposals.confidences, n_accepted)
