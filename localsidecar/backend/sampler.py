"""GrammarSampler: a llama_sampler chain for grammar-constrained generation."""

from __future__ import annotations

import ctypes
from typing import Iterable

import llama_cpp as L
import numpy as np

from .context import Context
from .model import Model
from .runtime import BackendError


# --- sampling with a grammar (hashtags) -------------------------------------------


class GrammarSampler:
    """Owns a llama_sampler chain: repetition penalties, a GBNF grammar, then
    greedy (temperature 0) or temperature + seeded sampling.

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
        chain = L.llama_sampler_chain_init(L.llama_sampler_chain_default_params())
        self._ptr = chain
        self._check = None
        self.fast_hits = 0    # tokens taken by the fast path
        self.full_runs = 0    # tokens that needed the grammar over the whole vocabulary
        has_penalty = penalty_repeat != 1.0
        if has_penalty:
            L.llama_sampler_chain_add(
                chain, L.llama_sampler_init_penalties(model.n_vocab, self.PENALTY_LAST_N, penalty_repeat, 0.0, 0.0)
            )
        g = L.llama_sampler_init_grammar(model._vocab, grammar.encode(), b"root")
        if not g:
            self.free()
            raise BackendError("llama.cpp rejected the hashtag grammar")
        L.llama_sampler_chain_add(chain, g)
        if temperature > 0:
            L.llama_sampler_chain_add(chain, L.llama_sampler_init_temp(temperature))
            L.llama_sampler_chain_add(chain, L.llama_sampler_init_dist(seed & 0xFFFFFFFF))
        else:
            L.llama_sampler_chain_add(chain, L.llama_sampler_init_greedy())
            if fast and not has_penalty:
                self._check = L.llama_sampler_init_grammar(model._vocab, grammar.encode(), b"root")
        self._one = (L.llama_token_data * 1)()
        self._one_arr = L.llama_token_data_array(self._one, 1, -1, False)

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
        on the context's logits buffer, which llama_sampler_sample then reads.
        llama.cpp's own penalty sampler cannot exclude tokens, and in a JSON
        array it also penalizes the quotes, commas and '#' every item repeats.
        """
        logits = ctx.logits(idx)
        if penalty != 1.0:
            ids = np.fromiter(penalize, dtype=np.int64)
            if ids.size:
                x = logits[ids]
                logits[ids] = np.where(x > 0, x / np.float32(penalty), x * np.float32(penalty))
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
        # llama_sampler_sample also accepts the token into the chain's grammar;
        # accepting it there again aborts the process ("Unexpected empty grammar stack").
        tok = int(L.llama_sampler_sample(self._ptr, ctx._ptr, idx))
        if self._check is not None:
            L.llama_sampler_accept(self._check, tok)
        self.full_runs += 1
        return tok

    def free(self) -> None:
        if self._ptr:
            L.llama_sampler_free(self._ptr)
            self._ptr = None
        if self._check:
            L.llama_sampler_free(self._check)
            self._check = None
