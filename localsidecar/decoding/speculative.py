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

Numbers (decoding/numbers.py): with a DocumentNumbers constraint every
choice of a summary token, the target's and the draft's, is made among the
tokens it allows at the summary text so far (greedy: the best allowed
logit; sampling: forbidden tokens at -inf before the softmax), so the
output equals target_only's under the same constraint, token for token.

Draft length: a fixed `draft_max` (policy.FixedLength) drafts that many
tokens every round (fewer only below `p_min`); `draft_max="auto"` asks a
policy.DraftPolicy each round, which may also choose 0 (the target decodes one
token alone). Both drive the one drafting loop, drafting.Drafter.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from localsidecar.backend import ConfigError, Context, Logits
from localsidecar.decoding.defaults import DEFAULT_DRAFT_MAX_CAP, cells_after_prompt, max_tokens_for
from localsidecar.decoding.distributions import overlap, softmax
from localsidecar.decoding.drafting import FEW_DRAFTED, Drafter, Proposals, SpecStats, settle
from localsidecar.decoding.layouts import DraftLayout, LazyLayout, Seq
from localsidecar.decoding.numbers import (
    DOCUMENT,
    NUMBERS_MODES,
    DocumentNumbers,
    Run,
    allowed_logits,
    best_token,
    run_after,
)
from localsidecar.decoding.numbers import FREE as FREE_NUMBERS
from localsidecar.decoding.policy import AUTO, DraftPolicy, FixedLength, Plan
from localsidecar.summary.modes import EXTRACT, FREE
from localsidecar.summary.support import MARK, UNSUPPORTED_MODES

__all__ = [
    "DEFAULT_DRAFT_MAX",
    "FEW_DRAFTED",
    "Generation",
    "Prefill",
    "SpecConfig",
    "SpecStats",
    "SpeculativeDecoder",
    "TokenHook",
    "target_only",
]


@dataclass(frozen=True, kw_only=True)
class Generation:
    """Output of one summary generation (speculative or target-only), built
    once complete.

    tokens: the summary's token ids (a final end-of-generation token excluded);
    stopped: "eog", "max_tokens" or the reason a TokenHook gave; target_argmax: for each emitted token, the
    argmax of the target logits it was chosen from, among the tokens the
    numbers constraint allowed there (greedy: equal to tokens);
    prefill_s / gen_s: seconds for the prompt and for the generation loop.
    """

    tokens: list[int]
    stopped: str
    stats: SpecStats
    target_argmax: list[int] = field(default_factory=list)
    prefill_s: float = 0.0
    gen_s: float = 0.0


@dataclass(frozen=True, kw_only=True)
class Prefill:
    """What processing the prompt took on the target: seconds and decode calls."""

    seconds: float = 0.0
    target_calls: int = 0


@dataclass(frozen=True, kw_only=True)
class Acceptance:
    """What the target keeps of one round's draft (SpeculativeDecoder._accept)."""

    drafted: list[int]  # the draft's proposals
    accepted: int  # j: drafted[:j] are kept
    next_token: int  # the target's token after them: its correction, or one past a whole draft
    # the target's distributions p: one per drafted token at temperature 0, one per verified row above
    dists: list[np.ndarray]
    choices: list[int]  # the target's choice (its argmax among the allowed tokens) at rows 0..j


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
    max_tokens: int | None = None  # None: by the summary mode (defaults.max_tokens_for)
    draft_max_cap: int = DEFAULT_DRAFT_MAX_CAP  # bounds "auto"
    # "document": Engine constrains the summary's numbers to the document's (decoding/numbers.py)
    numbers: str = DOCUMENT
    # "free": the model writes the summary; "extract": the target picks the document's
    # sentences (summary/extract.py). `run --summary auto` resolves before it gets here.
    summary: str = FREE
    # a free summary's sentences the document does not back: keep, mark or drop (summary/support.py)
    unsupported: str = MARK
    # "document": a free summary's capitalised mid-sentence words are the document's
    # (decoding/names.py; `run` sets it, the library and the labs leave names free)
    names: str = FREE_NUMBERS

    def __post_init__(self):
        if self.summary not in (FREE, EXTRACT):
            raise ConfigError(f"summary must be {FREE!r} or {EXTRACT!r}, not {self.summary!r}")
        if self.max_tokens is None:
            self.max_tokens = max_tokens_for(self.summary)
        if self.unsupported not in UNSUPPORTED_MODES:
            raise ConfigError(
                f"unsupported must be one of {', '.join(UNSUPPORTED_MODES)}, not {self.unsupported!r}"
            )
        if self.names not in NUMBERS_MODES:
            raise ConfigError(f"names must be one of {', '.join(NUMBERS_MODES)}, not {self.names!r}")
        if self.numbers not in NUMBERS_MODES:
            raise ConfigError(f"numbers must be one of {', '.join(NUMBERS_MODES)}, not {self.numbers!r}")
        if self.draft_max != AUTO and not (isinstance(self.draft_max, int) and self.draft_max >= 1):
            raise ConfigError(f"draft_max must be 'auto' or an integer >= 1, not {self.draft_max!r}")

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
    decisions now and then (--verbose). A fixed draft_max is a
    policy.FixedLength; the drafting loop is drafting.Drafter's, as in
    GGUFDraft. `numbers`: the document's numbers constraint, applied to the
    target's and the draft's choices alike (None: free)."""

    LOG_EVERY = 32  # rounds between policy lines in the log (and at every change of k)

    def __init__(
        self,
        target: Context,
        draft: Context,
        cfg: SpecConfig,
        policy: DraftPolicy | None = None,
        log: Callable[[str], None] | None = None,
        numbers: DocumentNumbers | None = None,
    ):
        self.t = target
        self.numbers = numbers
        self.d = draft
        self.cfg = cfg
        self.rng = np.random.default_rng(cfg.seed)
        self.n_common = min(target.n_vocab, draft.n_vocab)
        self.policy = (policy or DraftPolicy(cfg.draft_max_cap)) if cfg.auto else FixedLength(cfg.draft_max)
        self.drafter = Drafter(
            draft, self.n_common, p_min=cfg.p_min, temperature=cfg.temperature, rng=self.rng, numbers=numbers
        )
        self.log = log if cfg.auto else None
        self._logged: tuple[int, int] | None = None  # (round, k) of the last log line

    # --- steps -----------------------------------------------------------------

    def _draft(
        self, committed: list[int], lazy: LazyLayout, plan: Plan, stats: SpecStats, run: Run
    ) -> Proposals:
        """Bring the draft up to `committed` and propose; nothing (and no
        draft decode at all) when the plan says k = 0."""
        if plan.k == 0:
            return Proposals()  # the target alone; the draft waits
        lay = lazy.get()  # a first prefill is timed apart (prompt processing, not drafting)
        ta = time.perf_counter()
        n_caught = lay.catch_up(self.d, committed)
        caught = time.perf_counter()
        stats.add_catch_up(n_caught, len(committed) - n_caught, caught - ta)
        out = self.drafter.draft(
            self.policy,
            plan,
            self.policy.cap,
            lambda tok: lay.push(self.d, tok),
            (n_caught, caught - ta),
            run=run,
        )
        stats.draft_s += time.perf_counter() - caught
        return out

    def _verify(self, last: int, pos: int, drafted: list[int]) -> np.ndarray:
        """One target batch [last, d1..dk] with logits for every token: a view
        of llama.cpp's rows, valid until the target's next decode (the round
        reads them before that)."""
        self.t.decode_plan((tok, pos + i, (Seq.SUMMARY,), True) for i, tok in enumerate([last] + drafted))
        return self.t.logits_rows()

    def _accept(
        self, drafted: list[int], qs: list[np.ndarray], logits: list[np.ndarray], run: Run
    ) -> Acceptance:
        """What the target keeps of `drafted`, from its verified rows `logits`.
        `run`: the numbers state after the committed tokens; row i's state
        follows drafted[:i], one step a row."""
        temp, num = self.cfg.temperature, self.numbers
        runs = [run]
        for tok in drafted:
            runs.append(run_after(num, runs[-1], tok))

        def constrain(row: np.ndarray, i: int) -> np.ndarray:
            return allowed_logits(num, row, runs[i])

        def best(i: int) -> int:
            return best_token(num, logits[i], runs[i])

        if temp == 0:
            ps = [softmax(constrain(l[: self.n_common], i)) for i, l in enumerate(logits[: len(drafted)])]
            choices: list[int] = []
            for i in range(len(drafted) + 1):
                choices.append(best(i))
                if i == len(drafted) or choices[i] != drafted[i]:
                    break
            j = len(choices) - 1
            return Acceptance(drafted=drafted, accepted=j, next_token=choices[j], dists=ps, choices=choices)
        ps = [softmax(constrain(l[: self.n_common], i), temp) for i, l in enumerate(logits)]
        for j, (tok, q) in enumerate(zip(drafted, qs)):
            p = ps[j]
            if self.rng.random() < min(1.0, float(p[tok]) / float(q[tok])):
                continue
            resid = np.maximum(p - q, 0.0)
            total = resid.sum()
            nxt = int(self.rng.choice(resid.shape[0], p=resid / total)) if total > 0 else int(p.argmax())
            return Acceptance(
                drafted=drafted, accepted=j, next_token=nxt, dists=ps, choices=[best(i) for i in range(j + 1)]
            )
        j = len(drafted)
        nxt = int(self.rng.choice(ps[j].shape[0], p=ps[j]))
        return Acceptance(
            drafted=drafted, accepted=j, next_token=nxt, dists=ps, choices=[best(i) for i in range(j + 1)]
        )

    # --- loop ------------------------------------------------------------------

    def _round(self, committed: list[int], lazy: LazyLayout, stats: SpecStats, run: Run) -> Acceptance:
        """Draft (or not), verify, accept."""
        plan = self.policy.plan()
        props = self._draft(committed, lazy, plan, stats, run)
        drafted, qs = props.tokens, props.dists
        tb = time.perf_counter()
        logits = self._verify(committed[-1], len(committed) - 1, drafted)
        acc = self._accept(drafted, qs, logits, run)
        verify_s = time.perf_counter() - tb
        stats.add_round(len(drafted), verify_s)
        for i, q in enumerate(qs):
            stats.alpha_sum += overlap(acc.dists[i], q)
            stats.alpha_n += 1
        settle(stats, self.policy, props, acc.accepted, verify_s)
        self._log_plan(stats.rounds, plan)
        return acc

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

    def _restore(self, committed: list[int], lazy: LazyLayout, draft_keep: int | None = None) -> None:
        """Both caches back to at most committed[:-1], the draft to at most its
        first `draft_keep` tokens besides (idempotent)."""
        end = len(committed) - 1
        self.t.seq_rm(Seq.SUMMARY, end, -1)
        if lazy.prefilled:
            lazy.layout.rollback(self.d, end if draft_keep is None else min(draft_keep, end))

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
        run: Run = None  # the numbers state after `out`
        num = self.numbers
        t1 = time.perf_counter()
        while len(out) < cfg.max_tokens:
            c, draft_keep = len(committed), None
            try:
                acc = self._round(committed, lazy, stats, run)
                for i, tok in enumerate(acc.drafted[: acc.accepted] + [acc.next_token]):
                    if is_eog(tok):
                        stopped = "eog"
                        break
                    if len(out) == cfg.max_tokens:
                        break
                    out.append(tok)
                    argmax_out.append(acc.choices[i])
                    run = run_after(num, run, tok)
                    if on_token is not None and (reason := on_token(out)):
                        stopped = reason
                        break
                committed = list(bare) + out
                # the accepted proposals it decoded, never the last committed token
                draft_keep = c + acc.accepted
            finally:
                # the one rollback: rejected proposals and the last committed
                # token leave both caches, after every round and on an exception
                self._restore(committed, lazy, draft_keep)
            if stopped != "max_tokens":  # eog, or the token hook stopped it
                break
        gen_s = time.perf_counter() - t1
        late = lazy.prefill_s if lazy.prefilled and not was_prefilled else 0.0
        stats.target_calls = prefill.target_calls + stats.rounds
        return Generation(
            tokens=out,
            stopped=stopped,
            stats=stats,
            target_argmax=argmax_out,
            prefill_s=prefill.seconds + late,
            gen_s=gen_s - late,
        )


def target_only(
    target: Context,
    bare: list[int],
    cfg: SpecConfig,
    is_eog,
    prefill: Prefill = Prefill(),
    on_token: TokenHook | None = None,
    numbers: DocumentNumbers | None = None,
) -> Generation:
    """Plain decoding with the target alone, one token per call (greedy at
    temperature 0, else sampling from softmax(logits / T) with cfg.seed),
    among the tokens `numbers` allows (None: all).
    The target cache must hold bare[:-1]."""
    rng = np.random.default_rng(cfg.seed)
    out: list[int] = []
    stopped = "max_tokens"
    pos, last = len(bare) - 1, bare[-1]
    stats = SpecStats()
    run: Run = None
    t1 = time.perf_counter()
    while len(out) < cfg.max_tokens:
        ta = time.perf_counter()
        target.decode_tokens([last], pos, (Seq.SUMMARY,), Logits.LAST)
        logits = target.logits(-1)
        if cfg.temperature == 0:
            tok = best_token(numbers, logits, run)
        else:
            p = softmax(allowed_logits(numbers, logits, run), cfg.temperature)
            tok = int(rng.choice(p.shape[0], p=p))
        stats.add_round(0, time.perf_counter() - ta)
        if is_eog(tok):
            stopped = "eog"
            break
        out.append(tok)
        pos, last = pos + 1, tok
        run = run_after(numbers, run, tok)
        if on_token is not None and (reason := on_token(out)):
            stopped = reason
            break
    gen_s = time.perf_counter() - t1
    stats.target_calls = prefill.target_calls + stats.rounds
    return Generation(
        tokens=out,
        stopped=stopped,
        stats=stats,
        target_argmax=list(out) if cfg.temperature == 0 else [],
        prefill_s=prefill.seconds,
        gen_s=gen_s,
    )
