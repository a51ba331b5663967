"""A GGUF draft model for llama-cpp-python's own speculative decoding:

    llm = load_llama(target, logits_all=True, draft_model=GGUFDraft(draft_path))
    llm.draft_model.bind(llm)  # optional: checks before anything is decoded

`load_llama` is `Llama(model_path=target, ...)` loaded under the buffer-type
decision and crash probe of the draft and of every model localsidecar loads
(docs/cpus.md). A plain `Llama(...)` loads with llama.cpp's defaults, which on
a CPU where llama.cpp offers its AMX buffer type put the weights there, and
its kernels killed the process at the first decode (SIGILL or SIGSEGV, no
message). So on such a host GGUFDraft refuses a target loaded that way, in
one line (buffers.loaded_model_problem): in bind(), before the target decodes
anything, or at its first call, when the target has decoded only the prompt.

How `Llama.generate` (llama-cpp-python 0.3) uses a draft: after every token it
samples, it calls `draft_model(input_ids)` with the whole context so far (the
prompt, the tokens accepted so far and the token it just sampled, which its own
cache does not hold yet), decodes that token plus the proposals in one batch
with logits for every position, and keeps the proposals while its own choice
equals them; at the first difference it drops the rest from its cache. So each
call's input extends the previous call's input by the accepted proposals and
one token of the target's, unless a new completion started.

Cache invariant: sequence 0 of the draft context holds exactly `_held`, at
positions 0..len(_held)-1. After a call that proposed, that is its input plus
the proposals it decoded to propose the next (all but the last); after a call
that proposed nothing, a prefix of its input. A call that proposes keeps the
longest prefix `_held` shares with its input (accepted proposals are reused,
rejected ones removed with seq_rm) and decodes the rest in one batch.
"""

from __future__ import annotations

import os
import time
from typing import Any, Literal

import numpy as np

from localsidecar.backend import (
    BackendError,
    BufferPlan,
    Context,
    LlamaDraftModel,
    Model,
    buffer_plan,
    calling_llama,
    load_llama,
)
from localsidecar.backend.buffers import loaded_model_problem
from localsidecar.decoding.defaults import DEFAULT_DRAFT_MAX_CAP
from localsidecar.decoding.drafting import Drafter, Proposals, SpecStats, settle
from localsidecar.decoding.engine import check_vocab_compatible
from localsidecar.decoding.policy import DraftPolicy, FixedLength, Plan
from localsidecar.errors import ConfigError, LocalsidecarError

__all__ = ["GGUFDraft", "DraftStats", "auto_policy", "load_llama"]

DEFAULT_N_DRAFT = "auto"  # as `run --draft-max`: the cost policy chooses each round's length
DEFAULT_P_MIN = 0.0
UNBOUND_N_CTX = 4096  # draft context when no target told us its size
AUTO_MAX_DRAFT = DEFAULT_DRAFT_MAX_CAP  # the longest draft n_draft="auto" considers


# The counters of `run`'s decoder, under GGUFDraft's names too (calls,
# proposed, accepted, decoded, reused; as_dict()).
DraftStats = SpecStats


def auto_policy(cap: int = AUTO_MAX_DRAFT) -> DraftPolicy:
    """The cost policy of `run --draft-max auto`, for n_draft="auto"."""
    return DraftPolicy(cap)


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

    path: the draft GGUF (same vocabulary as the target). n_draft: most
    proposals per call, or "auto": before each call the cost policy of `run
    --draft-max auto` chooses, from the draft's own decode times, the time
    the target takes between calls and the acceptance so far (auto_policy).
    p_min: stop proposing when the draft's top probability falls below it.
    threads / gpu_layers: for the draft model. n_ctx: the draft's context;
    None takes the target's n_ctx when bound. buffers: the buffer-type
    decision (default: the one every model of localsidecar loads with), for
    the draft's own load and the check of the target's. Errors:
    LocalsidecarError (ConfigError for an argument out of range).
    """

    # Accepted proposals stay in the cache for the next call instead of being
    # decoded again (measured faster: see docs/python-api.md).
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
        buffers: BufferPlan | None = None,
    ):
        self.policy = _policy_for(n_draft)
        if not 0.0 <= p_min <= 1.0:
            raise ConfigError(f"p_min must lie in [0, 1], got {p_min}")
        self.n_draft = n_draft
        self.p_min = float(p_min)
        self._threads, self._n_ctx, self._n_batch = threads, n_ctx, n_batch
        self.buffers = buffers or buffer_plan()
        self.model = Model(path, n_gpu_layers=gpu_layers, buffers=self.buffers)
        self._closed = False
        self._ctx: Context | None = None
        self._bound = False
        self._drafter: Drafter | None = None
        self._held = np.empty(0, dtype=np.intc)
        self._last_input = np.empty(0, dtype=np.intc)
        self._last = Proposals()
        self._returned_at = 0.0
        self.stats = SpecStats()

    # --- setup ---------------------------------------------------------------

    def bind(self, llama: Any) -> GGUFDraft:
        """Check this draft against the target `llama` (a llama_cpp.Llama): its
        model loaded without the AMX buffer type where llama.cpp offers it,
        one vocabulary, and a logits buffer Llama can verify drafts with; size
        the draft context like the target's unless n_ctx was given. The first
        call from Llama.generate binds to that Llama itself; call bind() to
        fail before generating. Raises LocalsidecarError (one line)."""
        params = getattr(llama, "model_params", None)  # llama.cpp's default when unknown: extra types on
        problem = loaded_model_problem(bool(getattr(params, "use_extra_bufts", True)), self.buffers)
        if problem:
            raise LocalsidecarError(problem)
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
        # greedy; stops at an end-of-generation token; q only where p_min or the policy reads it
        self._drafter = Drafter(
            self._ctx, self.model.n_vocab, p_min=self.p_min, stop=self.model.is_eog, keep_dists=False
        )

    def _bind_to_caller(self, caller: Any) -> None:
        """At the first call: bind to the Llama that called, else work
        unchecked beyond the token-id range."""
        if caller is not None:
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
        self.stats = SpecStats()

    # --- LlamaDraftModel -----------------------------------------------------

    def __call__(self, input_ids: np.ndarray, /, **kwargs: Any) -> np.ndarray:
        entered = time.perf_counter()
        if self._closed:
            raise LocalsidecarError(f"the draft {self.model.path.name} was closed")
        if not self._bound:
            self._bind_to_caller(calling_llama(self))
        ids = np.array(input_ids, dtype=np.intc)
        self._check_ids(ids)
        self._score_last_round(ids, entered)
        plan = self.policy.plan()
        limit = min(self.policy.cap if plan.k else 0, self._ctx.n_ctx - len(ids) + 1) if len(ids) else 0
        if limit > 0:
            props = self._draft(ids, limit, plan)
        else:
            props = Proposals()
            self._drop_uncommitted(ids)
        self.stats.add_round(len(props.tokens))
        self._last_input, self._last = ids, props
        self._returned_at = time.perf_counter()
        return np.array(props.tokens, dtype=np.intc)

    def _check_ids(self, ids: np.ndarray) -> None:
        if ids.ndim != 1:
            raise LocalsidecarError(f"input_ids must be one row of token ids, got shape {ids.shape}")
        if ids.size and (ids.min() < 0 or ids.max() >= self.model.n_vocab):
            bad = int(ids[(ids < 0) | (ids >= self.model.n_vocab)][0])
            raise LocalsidecarError(
                f"token id {bad} is outside the draft's vocabulary of {self.model.n_vocab} "
                f"({self.model.path.name}); is the target's vocabulary another one?"
            )

    def _score_last_round(self, ids: np.ndarray, entered: float) -> None:
        """Count the last call's proposals that `ids` holds where they were
        proposed, and report the round to the policy. A round adds the
        accepted proposals and one target token; a call that does not extend
        the last input that way starts a new completion: nothing to score."""
        last, props = self._last_input, self._last.tokens
        grown = len(ids) - len(last)
        if not len(last) or not 0 < grown <= len(props) + 1 or not np.array_equal(ids[: len(last)], last):
            return
        accepted = _common_prefix(ids[len(last) :], np.array(props, dtype=np.intc))
        verify_s = entered - self._returned_at
        self.stats.add_verify(len(props) + 1, verify_s)
        settle(self.stats, self.policy, self._last, accepted, verify_s)

    # --- cache ---------------------------------------------------------------

    def _catch_up(self, ids: np.ndarray) -> int:
        """Make the cache hold exactly `ids`: keep the prefix it shares with
        `_held` (at least one token is decoded again, for fresh logits) and
        decode the rest in one batch with logits for the last token. Returns
        how many tokens it decoded."""
        keep = self._truncate(min(_common_prefix(self._held, ids), len(ids) - 1))
        self._held = ids[:keep]  # what the cache surely holds if the decode fails
        self._ctx.decode_tokens(ids[keep:].tolist(), keep, (0,), "last")
        self._held = ids
        return len(ids) - keep

    def _drop_uncommitted(self, ids: np.ndarray) -> None:
        """Without decoding: remove what the cache holds beyond its common
        prefix with `ids` (rejected proposals, another prompt). The cache may
        then lag behind `ids`; the next catch-up decodes the rest in one batch."""
        keep = _common_prefix(self._held, ids)
        if keep < len(self._held):
            self._held = self._held[: self._truncate(keep)]

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

    def _push(self, token: int) -> None:
        """Decode one proposal after what the cache holds (logits for the next)."""
        self._ctx.decode_tokens([token], len(self._held), (0,), "last")
        self._held = np.append(self._held, np.intc(token))

    def _draft(self, ids: np.ndarray, limit: int, plan: Plan) -> Proposals:
        """Catch up with `ids`, then propose up to `limit` greedy tokens with
        run's drafting loop (drafting.Drafter): it stops at an
        end-of-generation token, below p_min, or where the policy says; the
        catch-up batch counts as the policy's first draft step. Afterwards the
        cache holds `ids` plus the proposals it decoded (all but the last), or
        only `ids` when keep_proposals is off."""
        n, t0 = len(ids), time.perf_counter()
        decoded = self._catch_up(ids)
        caught = time.perf_counter()
        self.stats.add_catch_up(decoded, n - decoded, caught - t0)
        try:
            return self._drafter.draft(self.policy, plan, limit, self._push, (decoded, caught - t0))
        finally:
            self.stats.draft_s += time.perf_counter() - caught
            if not self.keep_proposals:
                self._held = self._held[: self._truncate(n)]

    # --- lifetime ------------------------------------------------------------

    def close_context(self) -> None:
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = self._drafter = None
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

    def __enter__(self) -> GGUFDraft:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _policy_for(n_draft: int | str) -> FixedLength | DraftPolicy:
    """The draft-length policy of n_draft: FixedLength for an integer (validated), the cost policy for "auto"."""
    if n_draft == "auto":
        return auto_policy()
    if isinstance(n_draft, bool) or not isinstance(n_draft, int) or n_draft < 0:
        raise ConfigError(f'n_draft must be a non-negative integer or "auto", got {n_draft!r}')
    return FixedLength(n_draft)
