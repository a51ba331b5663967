"""A GGUF draft model for llama-cpp-python's own speculative decoding:

    Llama(model_path=target, logits_all=True, draft_model=GGUFDraft(draft_path))

How `Llama.generate` (llama-cpp-python 0.3) uses a draft: after every token it
samples, it calls `draft_model(input_ids)` with the whole context so far (the
prompt, the tokens accepted so far and the token it just sampled, which its own
cache does not hold yet), decodes that token plus the proposals in one batch
with logits for every position, and keeps the proposals while its own choice
equals them; at the first difference it drops the rest from its cache. So each
call's input extends the previous call's input by the accepted proposals and
one token of the target's, unless a new completion started.

Cache invariant between calls: sequence 0 of the draft context holds
`_held` at positions 0..len(_held)-1, which is the previous call's input plus
the proposals that call decoded (all but its last). The next call keeps the
longest prefix `_held` shares with its input (accepted proposals are reused,
rejected ones removed with seq_rm) and decodes the rest in one batch.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol

import numpy as np
from llama_cpp.llama_speculative import LlamaDraftModel

from localsidecar.backend import BackendError, Context, Model
from localsidecar.distributions import softmax
from localsidecar.engine import check_vocab_compatible
from localsidecar.errors import LocalsidecarError

DEFAULT_N_DRAFT = 8
DEFAULT_P_MIN = 0.75  # llama.cpp's speculative default: stop drafting below this top probability
UNBOUND_N_CTX = 4096  # draft context when no target told us its size
AUTO_MAX_DRAFT = 8  # the longest draft n_draft="auto" considers


@dataclass
class DraftStats:
    """Counters since the draft was created (or since reset_stats()).

    calls: times Llama asked for proposals; proposed: tokens proposed;
    accepted: proposals that the next call's input holds at the proposed
    positions (the target agreed); decoded / reused: input tokens the draft
    decoded / found already in its cache; draft_s: seconds in draft decodes.
    """

    calls: int = 0
    proposed: int = 0
    accepted: int = 0
    decoded: int = 0
    reused: int = 0
    draft_s: float = 0.0

    @property
    def acceptance_rate(self) -> float | None:
        return self.accepted / self.proposed if self.proposed else None

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "acceptance_rate": self.acceptance_rate}


@dataclass(frozen=True)
class RoundCost:
    """One speculative round as the draft sees it: its proposals, how many the
    target accepted, the draft's own seconds, and the seconds from its return
    to the next call (the target's verify batch of 1 + proposed tokens, its
    sampling, and whatever the caller did with the tokens in between)."""

    proposed: int
    accepted: int
    draft_s: float
    target_s: float

    @property
    def seconds(self) -> float:
        return self.draft_s + self.target_s


class DraftLength(Protocol):
    """Decides how many tokens to propose before each call."""

    def next_length(self) -> int: ...

    def observe(self, cost: RoundCost) -> None: ...


@dataclass
class FixedLength:
    n: int

    def next_length(self) -> int:
        return self.n

    def observe(self, cost: RoundCost) -> None:
        pass


class ExpectedGainRule:
    """Chooses the length k (0..max_length) that maximises expected tokens per
    second of a round:

        tokens(k)  = (1 - a^(k+1)) / (1 - a)   each proposal accepted with probability a,
                                               plus the token the target adds itself
        seconds(k) = t0 + t1 * k               fit to the measured rounds (draft + target)

    a = accepted / (accepted + rejections), counting one rejection per round
    that rejected a proposal (the geometric estimate, with one of each as a
    prior); recent rounds weigh more (weights decay by `decay` per round).
    Until the line is identifiable it alternates probes at 1 and max_length;
    every `probe_every` rounds it tries a neighbour of the best length so the
    fit and a stay current even when the best is 0 (no drafting).
    """

    def __init__(self, max_length: int = AUTO_MAX_DRAFT, decay: float = 0.95, probe_every: int = 8):
        self.max_length = max_length
        self.decay = decay
        self.probe_every = probe_every
        self.rounds = 0
        self._sums = np.zeros(5)  # weighted Σ1, Σk, Σk², Σs, Σk·s of (k, seconds)
        self._accepted, self._rejected = 1.0, 1.0

    def acceptance(self) -> float:
        return self._accepted / (self._accepted + self._rejected)

    def line(self) -> tuple[float, float] | None:
        """(t0, t1) of seconds(k) = t0 + t1 k, or None while k has not varied enough."""
        w, k, kk, s, ks = self._sums
        var = w * kk - k * k
        if w <= 0 or var <= 1e-6 * w * w:
            return None
        t1 = max(0.0, (w * ks - k * s) / var)
        return max(1e-9, (s - t1 * k) / w), t1

    def best_length(self) -> int | None:
        fit = self.line()
        if fit is None:
            return None
        t0, t1 = fit
        a = min(self.acceptance(), 0.999)
        gain = [(1 - a ** (k + 1)) / (1 - a) / (t0 + t1 * k) for k in range(self.max_length + 1)]
        return int(np.argmax(gain))

    def next_length(self) -> int:
        best = self.best_length()
        if best is None:
            return (1, self.max_length)[self.rounds % 2]
        if self.rounds % self.probe_every == self.probe_every - 1:
            step = 1 if (self.rounds // self.probe_every) % 2 else -1
            return min(self.max_length, max(1, best + step))
        return best

    def observe(self, cost: RoundCost) -> None:
        self.rounds += 1
        k = cost.proposed
        self._sums = self._sums * self.decay + np.array([1.0, k, k * k, cost.seconds, k * cost.seconds])
        self._accepted = self._accepted * self.decay + cost.accepted
        self._rejected = self._rejected * self.decay + (1.0 if cost.accepted < k else 0.0)


def _common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    m = min(len(a), len(b))
    diff = np.flatnonzero(a[:m] != b[:m])
    return int(diff[0]) if diff.size else m


def _check_logits_buffer(llama: Any) -> None:
    """With a draft, Llama.eval writes logits of every position into `scores`,
    which has n_ctx rows only when the Llama was created with logits_all=True;
    otherwise it fails once prompt plus completion pass n_batch tokens."""
    rows, n_ctx = int(llama.scores.shape[0]), int(llama.n_ctx())
    if rows < n_ctx:
        raise LocalsidecarError(
            "create the Llama with logits_all=True to use a draft model: llama-cpp-python then stores logits "
            f"for every position, and without it its buffer holds {rows} of n_ctx {n_ctx} positions"
        )


class GGUFDraft(LlamaDraftModel):
    """A GGUF draft model for `Llama(..., draft_model=...)`.

    path: the draft GGUF (same vocabulary as the target). n_draft: proposals
    per call, or "auto" to choose each time from measured costs and
    acceptance (ExpectedGainRule). p_min: stop proposing when the draft's top
    probability falls below it. threads / gpu_layers: for the draft model.
    n_ctx: the draft's context; None takes the target's n_ctx when bound.
    """

    # Accepted proposals stay in the cache for the next call instead of being
    # decoded again (measured faster: see README, "Use the draft from llama-cpp-python").
    keep_proposals = True

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        n_draft: int | Literal["auto"] = DEFAULT_N_DRAFT,
        p_min: float = DEFAULT_P_MIN,
        threads: int | None = None,
        gpu_layers: int = 0,
        n_ctx: int | None = None,
        n_batch: int = 512,
    ):
        self.policy: DraftLength = _length_policy(n_draft)
        if not 0.0 <= p_min <= 1.0:
            raise LocalsidecarError(f"p_min must lie in [0, 1], got {p_min}")
        self.n_draft = n_draft
        self.p_min = float(p_min)
        self._threads, self._n_ctx, self._n_batch = threads, n_ctx, n_batch
        self.model = Model(path, n_gpu_layers=gpu_layers)
        self._closed = False
        self._ctx: Context | None = None
        self._bound = False
        self._held = np.empty(0, dtype=np.intc)
        self._last_input = np.empty(0, dtype=np.intc)
        self._last_proposals: list[int] = []
        self._last_draft_s = 0.0
        self._returned_at = 0.0
        self.stats = DraftStats()

    # --- setup ---------------------------------------------------------------

    def bind(self, llama: Any) -> "GGUFDraft":
        """Check this draft against the target `llama` (a llama_cpp.Llama): one
        vocabulary, and a logits buffer Llama can verify drafts with; size the
        draft context like the target's unless n_ctx was given. The first call
        from Llama.generate binds to that Llama itself; call bind() to fail
        before generating. Raises LocalsidecarError (one line)."""
        target = Model.borrow(llama.model, getattr(llama, "model_path", "target"))
        try:
            check_vocab_compatible(target, self.model)
        finally:
            target.close()
        _check_logits_buffer(llama)
        self._open_context(self._n_ctx or int(llama.n_ctx()))
        self._bound = True
        return self

    def _open_context(self, n_ctx: int) -> None:
        if self._ctx is not None and self._ctx.n_ctx >= n_ctx:
            return
        self.close_context()
        self._ctx = Context(self.model, n_ctx, n_batch=self._n_batch, n_threads=self._threads)

    def _bind_to_caller(self, caller: Any) -> None:
        """At the first call: bind to the Llama that called (its `self`), else
        work unchecked beyond the token-id range."""
        if getattr(caller, "draft_model", None) is self:
            self.bind(caller)
        else:
            self._open_context(self._n_ctx or UNBOUND_N_CTX)
            self._bound = True

    @property
    def n_ctx(self) -> int | None:
        return self._ctx.n_ctx if self._ctx is not None else self._n_ctx

    @property
    def cached_tokens(self) -> list[int]:
        """The token ids the draft cache holds, position by position."""
        return self._held.tolist()

    def cache_pos_max(self) -> int:
        """Highest position the draft cache holds (-1 when empty), as llama.cpp reports it."""
        return self._ctx.pos_max(0) if self._ctx is not None else -1

    def reset_stats(self) -> None:
        self.stats = DraftStats()

    # --- LlamaDraftModel -----------------------------------------------------

    def __call__(self, input_ids: np.ndarray, /, **kwargs: Any) -> np.ndarray:
        entered = time.perf_counter()
        if self._closed:
            raise LocalsidecarError(f"the draft {self.model.path.name} was closed")
        if not self._bound:
            self._bind_to_caller(sys._getframe(1).f_locals.get("self"))
        ids = np.array(input_ids, dtype=np.intc)
        self._check_ids(ids)
        self._score_last_round(ids, entered)
        self.stats.calls += 1
        n = len(ids)
        k = min(self.policy.next_length(), self._ctx.n_ctx - n + 1) if n else 0
        proposals: list[int] = []
        t0 = time.perf_counter()
        if k > 0:
            self._catch_up(ids)
            proposals = self._propose(n, k)
        self._last_draft_s = time.perf_counter() - t0
        self.stats.draft_s += self._last_draft_s
        self.stats.proposed += len(proposals)
        self._last_input, self._last_proposals = ids, proposals
        self._returned_at = time.perf_counter()
        return np.array(proposals, dtype=np.intc)

    def _check_ids(self, ids: np.ndarray) -> None:
        if ids.ndim != 1:
            raise LocalsidecarError(f"input_ids must be one row of token ids, got shape {ids.shape}")
        if ids.size and (ids.min() < 0 or ids.max() >= self.model.n_vocab):
            bad = int(ids[(ids < 0) | (ids >= self.model.n_vocab)][0])
            raise LocalsidecarError(f"token id {bad} is outside the draft's vocabulary of {self.model.n_vocab} "
                                    f"({self.model.path.name}); is the target's vocabulary another one?")

    def _score_last_round(self, ids: np.ndarray, entered: float) -> None:
        """Count the last call's proposals that `ids` holds where they were
        proposed, and report the round to the policy. A call that does not
        extend the last input starts a new completion: nothing to score."""
        last, props = self._last_input, self._last_proposals
        if not len(last) or len(ids) <= len(last) or not np.array_equal(ids[: len(last)], last):
            return
        accepted = _common_prefix(ids[len(last) : len(last) + len(props)], np.array(props, dtype=np.intc))
        self.stats.accepted += accepted
        self.policy.observe(RoundCost(len(props), accepted, self._last_draft_s, entered - self._returned_at))

    # --- cache ---------------------------------------------------------------

    def _catch_up(self, ids: np.ndarray) -> None:
        """Make the cache hold exactly `ids`: keep the prefix it shares with
        `_held` (at least one token is decoded again, for fresh logits) and
        decode the rest in one batch with logits for the last token."""
        keep = self._truncate(min(_common_prefix(self._held, ids), len(ids) - 1))
        self._held = ids[:keep]  # what the cache surely holds if the decode fails
        self._ctx.decode_tokens(ids[keep:].tolist(), keep, (0,), "last")
        self._held = ids
        self.stats.reused += keep
        self.stats.decoded += len(ids) - keep

    def _truncate(self, keep: int) -> int:
        """Remove positions keep.. from the cache; returns how many tokens remain.
        Without a shared prefix the memory is cleared, so a new prompt lands in
        the same cells as in a fresh context (docs/DESIGN.md, Cell placement
        changes results). A model whose memory refuses partial removal
        (recurrent) is cleared too and decodes everything again."""
        if keep > 0:
            try:
                self._ctx.seq_rm(0, keep, -1)
                return keep
            except BackendError:
                pass
        self._ctx.clear()
        return 0

    def _propose(self, n: int, k: int) -> list[int]:
        """Up to k greedy proposals after the n input tokens the cache holds;
        stops at an end-of-generation token or a top probability below p_min.
        Afterwards the cache holds the input plus the proposals it decoded
        (all but the last), or only the input when keep_proposals is off."""
        proposals: list[int] = []
        n_decoded = 0  # proposals the cache holds, at positions n..
        try:
            for i in range(k):
                logits = self._ctx.logits(-1)
                top = int(np.argmax(logits))
                if self.model.is_eog(top) or (self.p_min > 0 and softmax(logits)[top] < self.p_min):
                    break
                proposals.append(top)
                if i + 1 < k:
                    self._ctx.decode_tokens([top], n + i, (0,), "last")
                    n_decoded += 1
        finally:
            if self.keep_proposals:
                self._held = np.concatenate([self._held, np.array(proposals[:n_decoded], dtype=np.intc)])
            else:
                self._held = self._held[: self._truncate(n)]
        return proposals

    # --- lifetime ------------------------------------------------------------

    def close_context(self) -> None:
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None
        self._held = np.empty(0, dtype=np.intc)

    def close(self) -> None:
        """Free the draft context, then its model (idempotent)."""
        self.close_context()
        self.model.close()
        self._closed = True

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: llama_cpp may be gone already
            pass

    def __enter__(self) -> "GGUFDraft":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _length_policy(n_draft: int | str) -> DraftLength:
    if n_draft == "auto":
        return ExpectedGainRule()
    if isinstance(n_draft, bool) or not isinstance(n_draft, int) or n_draft < 0:
        raise LocalsidecarError(f'n_draft must be a non-negative integer or "auto", got {n_draft!r}')
    return FixedLength(n_draft)
