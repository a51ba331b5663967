"""GrammarSampler: grammar-constrained sampling that never aborts the process."""

from __future__ import annotations

import ctypes
from collections.abc import Iterable

import llama_cpp as L
import numpy as np

from .context import Context
from .model import Model
from .runtime import BackendError

# --- choosing among allowed tokens ------------------------------------------------

NOT_FINITE = (
    "the model produced logits that are not finite numbers (inf or NaN); the model file may be damaged"
)


def require_finite(logits: np.ndarray) -> None:
    """BackendError unless every logit is a finite number."""
    if not np.isfinite(logits).all():
        raise BackendError(NOT_FINITE)


def choose_among(ids: np.ndarray, x: np.ndarray, temperature: float, rng: np.random.Generator | None) -> int:
    """One of token `ids` by their float64 logits `x`: the best (lowest id on
    ties) without `rng`, else a draw from softmax(x / temperature), computed
    after subtracting the maximum, (x - max) / T <= 0, so no temperature > 0
    can overflow or give NaN (-inf entries get probability 0)."""
    if rng is None:
        best = np.flatnonzero(x == x.max())
        return int(ids[best].min())
    with np.errstate(over="ignore", under="ignore"):  # -inf, then exp -> 0: intended
        z = (x - x.max()) / temperature  # <= 0 everywhere, 0 at the best token
        p = np.exp(z)
    p /= p.sum()
    return int(ids[rng.choice(ids.shape[0], p=p)])


# --- sampling with a grammar (hashtags) -------------------------------------------

# llama_token_data as numpy sees it: the candidates array is filled and read
# with numpy, and llama.cpp's samplers edit it in place.
_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])
assert _TOKEN_DATA.itemsize == ctypes.sizeof(L.llama_token_data)


class GrammarSampler:
    """Owns a llama_sampler chain (optional repetition penalties, then a GBNF
    grammar) and picks the next token itself: the best one at temperature 0,
    else a draw from softmax(logits / temperature) with a numpy generator
    seeded with `seed`.

    Invariants (each was a process abort in llama.cpp's grammar sampler,
    "Unexpected empty grammar stack after accepting piece"; docs/DESIGN.md,
    Grammar sampler accepts once):
    - llama.cpp only filters: the chain is applied to the candidates, the
      token is chosen here among those the grammar left finite, and accepted
      into the chain exactly once (llama_sampler_sample would accept it a
      second time);
    - logits that are not finite are refused (BackendError) before llama.cpp
      sees them;
    - the temperature is applied in float64 after the grammar and after
      subtracting the maximum, (x - max) / T <= 0, so no temperature > 0 can
      overflow or give NaN (llama.cpp's temperature sampler divides float32
      logits by a float32 T: T = 3.5e38 is infinity there, and -inf / inf is
      NaN, which its distribution sampler can turn into a rejected token).

    Greedy without llama.cpp's penalties takes a fast path: the
    FAST_CANDIDATES best tokens are checked, best first, against a second,
    standalone copy of the grammar, and the first that fits is taken: exactly
    the grammar-filtered argmax. Only when none fits does the chain run the
    grammar over the whole vocabulary (about as slow as a decode step of a
    135M model on a CPU).
    """

    FAST_CANDIDATES = 32
    PENALTY_LAST_N = 64  # llama.cpp's repetition penalty looks this many tokens back

    def __init__(
        self,
        model: Model,
        grammar: str,
        *,
        temperature: float = 0.0,
        seed: int = 0,
        penalty_repeat: float = 1.0,
        fast: bool = True,
    ):
        if not temperature >= 0:  # also nan
            raise BackendError(f"temperature must be 0 or more (got {temperature!r})")
        self.temperature = float(temperature)
        self._rng = np.random.default_rng(int(seed) & 0xFFFFFFFF) if self.temperature > 0 else None
        chain = L.llama_sampler_chain_init(L.llama_sampler_chain_default_params())
        self._ptr = chain
        self._check = None
        self.fast_hits = 0  # tokens taken by the fast path
        self.full_runs = 0  # tokens that needed the grammar over the whole vocabulary
        has_penalty = penalty_repeat != 1.0
        if has_penalty:
            L.llama_sampler_chain_add(
                chain,
                L.llama_sampler_init_penalties(model.n_vocab, self.PENALTY_LAST_N, penalty_repeat, 0.0, 0.0),
            )
        g = L.llama_sampler_init_grammar(model._vocab, grammar.encode(), b"root")
        if not g:
            self.free()
            raise BackendError("llama.cpp rejected the hashtag grammar")
        L.llama_sampler_chain_add(chain, g)
        if self.temperature == 0 and fast and not has_penalty:
            self._check = L.llama_sampler_init_grammar(model._vocab, grammar.encode(), b"root")
        self._one = (L.llama_token_data * 1)()
        self._one_arr = L.llama_token_data_array(self._one, 1, -1, False)
        self._ids = np.arange(model.n_vocab, dtype=np.int32)
        self._cand = np.zeros(model.n_vocab, dtype=_TOKEN_DATA)
        self._cand_arr = L.llama_token_data_array(
            self._cand.ctypes.data_as(ctypes.POINTER(L.llama_token_data)), model.n_vocab, -1, False
        )

    def _fits(self, token: int) -> bool:
        """Does the standalone grammar accept `token` next? (No state change.)"""
        self._one[0].id, self._one[0].logit, self._one[0].p = token, 0.0, 0.0
        self._one_arr.size, self._one_arr.selected, self._one_arr.sorted = 1, -1, False
        L.llama_sampler_apply(self._check, ctypes.byref(self._one_arr))
        return self._one[0].logit != float("-inf")

    def sample(self, ctx: Context, idx: int = -1, penalize: Iterable[int] = (), penalty: float = 1.0) -> int:
        """Sample the next token from the logits of batch index `idx`.

        `penalize` / `penalty`: a repetition penalty (logit / penalty if
        positive, * penalty if not) applied to chosen token ids only, in place
        on the context's logits buffer.
        llama.cpp's own penalty sampler cannot exclude tokens, and in a JSON
        array it also penalizes the quotes, commas and '#' every item repeats.
        """
        logits = ctx.logits(idx)
        if penalty != 1.0:
            ids = np.fromiter(penalize, dtype=np.int64)
            if ids.size:
                x = logits[ids]
                logits[ids] = np.where(x > 0, x / np.float32(penalty), x * np.float32(penalty))
        require_finite(logits)
        if self._check is not None:
            # the best candidates in descending logit order: the first one the
            # grammar accepts is the grammar-filtered argmax
            k = min(self.FAST_CANDIDATES, logits.shape[0])
            best = np.argpartition(logits, -k)[-k:]
            for top in best[np.lexsort((best, -logits[best]))].tolist():  # ties: lowest id, as greedy
                if self._fits(top):
                    # accept into both grammars: the chain's (via the chain) and the check's
                    L.llama_sampler_accept(self._ptr, top)
                    L.llama_sampler_accept(self._check, top)
                    self.fast_hits += 1
                    return top
        tok = self._choose(logits)
        L.llama_sampler_accept(self._ptr, tok)  # the only accept of this token into the chain
        if self._check is not None:
            L.llama_sampler_accept(self._check, tok)
        self.full_runs += 1
        return tok

    def _choose(self, logits: np.ndarray) -> int:
        """Apply the chain (penalties, grammar) to every token, then pick among
        those left finite: the best (lowest id on ties) or a tempered draw."""
        n = logits.shape[0]
        self._cand["id"] = self._ids
        self._cand["logit"] = logits
        self._cand["p"] = 0.0
        self._cand_arr.size, self._cand_arr.selected, self._cand_arr.sorted = n, -1, False
        L.llama_sampler_apply(self._ptr, ctypes.byref(self._cand_arr))
        cand = self._cand[: self._cand_arr.size]
        allowed = np.isfinite(cand["logit"])  # the grammar sets what it rejects to -inf
        if not allowed.any():
            raise BackendError("the hashtag grammar allows no next token")
        return choose_among(
            cand["id"][allowed], cand["logit"][allowed].astype(np.float64), self.temperature, self._rng
        )

    def free(self) -> None:
        if self._ptr:
            L.llama_sampler_free(self._ptr)
            self._ptr = None
        if self._check:
            L.llama_sampler_free(self._check)
            self._check = None
