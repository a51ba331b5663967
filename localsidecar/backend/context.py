"""Context (owner of a llama_context and its KV memory) and Batch."""

from __future__ import annotations

import ctypes
import time
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

import llama_cpp as L
import numpy as np

from .hardware import ThreadTuner, default_threads
from .model import Model
from .runtime import BackendError, DecodeError


class Logits(StrEnum):
    """Which tokens of Context.decode_tokens get logits."""

    LAST = "last"  # only the final token
    ALL = "all"  # every token: the whole sequence must fit one batch, so logits(i) indexes it
    NONE = "none"


LOGITS = tuple(w.value for w in Logits)

# --- batch ---------------------------------------------------------------------


class Batch:
    """Owns one llama_batch of fixed capacity."""

    def __init__(self, capacity: int, n_seq_max: int = 1):
        self.capacity = int(capacity)
        self.n_seq_max = int(n_seq_max)
        self._b = L.llama_batch_init(self.capacity, 0, self.n_seq_max)
        self._live = True
        self.n_tokens = 0
        self.n_outputs = 0  # tokens added with logits=True

    def clear(self) -> None:
        self.n_tokens = 0
        self.n_outputs = 0

    def add(self, token: int, pos: int, seq_ids: Sequence[int], logits: bool) -> int:
        """Append one token; returns its index in the batch (the logits index)."""
        i = self.n_tokens
        if i >= self.capacity:
            raise BackendError(f"batch full: capacity {self.capacity} tokens")
        if not 1 <= len(seq_ids) <= self.n_seq_max:
            raise BackendError(f"a token needs 1..{self.n_seq_max} sequence ids, got {len(seq_ids)}")
        b = self._b
        b.token[i] = token
        b.pos[i] = pos
        b.n_seq_id[i] = len(seq_ids)
        for j, s in enumerate(seq_ids):
            b.seq_id[i][j] = s
        b.logits[i] = 1 if logits else 0
        self.n_tokens = i + 1
        self.n_outputs += 1 if logits else 0
        return i

    def free(self) -> None:
        if self._live:
            L.llama_batch_free(self._b)
            self._live = False

    @property
    def raw(self):
        self._b.n_tokens = self.n_tokens
        return self._b


# --- context -------------------------------------------------------------------


def _decode_error(code: int, n_tokens: int, n_ctx: int) -> DecodeError:
    if code == 1:
        return DecodeError(
            code,
            f"context full: no KV slot for {n_tokens} tokens (n_ctx {n_ctx}); raise --ctx or lower --max-chars",
        )
    if code == 2:
        return DecodeError(code, "decode aborted")
    if code == -1:
        return DecodeError(
            code,
            "llama.cpp rejected the batch as invalid (positions must stay consecutive within a sequence)",
        )
    return DecodeError(code, f"llama_decode failed with fatal code {code}")


@dataclass
class ContextStats:
    """Counters of every llama_decode call of a context (never reset)."""

    decode_calls: int = 0
    decode_tokens: int = 0
    decode_s: float = 0.0


class Context:
    """Owns one llama_context over a Model; wraps decode, logits and memory ops."""

    def __init__(
        self,
        model: Model,
        n_ctx: int,
        *,
        n_batch: int = 512,
        n_seq_max: int = 1,
        kv_unified: bool = True,
        n_threads: int | None = None,
        tuner: ThreadTuner | None = None,
        flash_attn: bool = False,
        swa_full: bool = True,
    ):
        """n_threads: a fixed thread count (default: one per physical core);
        tuner: adapt the count between decodes from their timings instead;
        flash_attn: llama.cpp's flash attention (its results depend on the
        thread count: only the tests of that fact turn it on).
        swa_full: a sliding-window model's window cache gets n_ctx cells, as
        many as its full-attention cache, so llama.cpp never evicts a cell
        before the context is full (docs/DESIGN.md, Sliding-window caches);
        no effect on models without sliding-window layers."""
        params = L.llama_context_default_params()
        params.n_ctx = int(n_ctx)
        params.n_batch = int(n_batch)
        params.n_ubatch = int(n_batch)
        params.n_seq_max = int(n_seq_max)
        params.kv_unified = bool(kv_unified)
        params.swa_full = bool(swa_full)
        threads = tuner.threads if tuner is not None else int(n_threads or default_threads())
        params.n_threads = threads
        params.n_threads_batch = threads
        # Flash attention's CPU kernel splits a one-token query's KV cells
        # (from 512 cells of cache view on) into one chunk per thread and
        # reduces the partial sums: its logits depend on the thread count.
        # Without it every output element is one thread's dot product, so
        # results are the same at any count (docs/DESIGN.md, Batch shape
        # changes results) and the count may change between decodes.
        params.flash_attn_type = (
            L.LLAMA_FLASH_ATTN_TYPE_ENABLED if flash_attn else L.LLAMA_FLASH_ATTN_TYPE_DISABLED
        )
        params.no_perf = True
        ptr = L.llama_init_from_model(model._ptr, params)
        if not ptr:
            raise BackendError(
                f"llama.cpp could not create a context of {n_ctx} tokens for {model.path.name}"
            )
        self._ptr = ptr
        self.model = model
        self.n_ctx = int(L.llama_n_ctx(ptr))
        self.n_batch = int(n_batch)
        self.n_seq_max = int(n_seq_max)
        self.kv_unified = bool(kv_unified)
        self.n_vocab = model.n_vocab
        self._mem = L.llama_get_memory(ptr)
        self._batch = Batch(self.n_batch, self.n_seq_max)
        self.stats = ContextStats()
        self.n_outputs = 0  # logits rows produced by the last successful decode
        self.tuner = tuner
        self._threads_set = threads  # what the tuner last asked for (no C call per decode)
        self.threads_used: set[int] = {threads}  # counts decodes ran at since reset_threads_used()

    @property
    def threads(self) -> int:
        """The thread count llama.cpp uses for this context's next decode."""
        return int(L.llama_n_threads(self._ptr))

    def set_threads(self, n: int) -> None:
        """Change the thread count between decodes. Once the context holds more
        than 256 cells the results depend on it (docs/DESIGN.md, Batch shape
        changes results): only a fixed count is reproducible."""
        L.llama_set_n_threads(self._ptr, int(n), int(n))
        self._threads_set = int(n)

    @contextmanager
    def threads_held(self):
        """The thread count stays as it is inside (ThreadTuner.hold); a no-op
        at a fixed count."""
        if self.tuner is None:
            yield
            return
        with self.tuner.hold():
            if self.tuner.threads != self._threads_set:
                self.set_threads(self.tuner.threads)
                self.threads_used.add(self.tuner.threads)
            yield

    def reset_threads_used(self) -> None:
        """Start a new record of the thread counts decodes run at (per document)."""
        self.threads_used = {self._threads_set}

    def close(self) -> None:
        if self._ptr:
            self._batch.free()
            L.llama_free(self._ptr)
            self._ptr = None

    # decoding
    def decode(self, batch: Batch) -> None:
        if batch.n_tokens == 0:
            return
        t0 = time.perf_counter()
        code = L.llama_decode(self._ptr, batch.raw)
        dt = time.perf_counter() - t0
        st = self.stats
        st.decode_s += dt
        st.decode_calls += 1
        st.decode_tokens += batch.n_tokens
        if self.tuner is not None and code == 0:
            threads = self.tuner.record(batch.n_tokens, dt)
            if threads != self._threads_set:
                self.set_threads(threads)
                self.threads_used.add(threads)
        if code != 0:
            self.n_outputs = 0
            raise _decode_error(code, batch.n_tokens, self.n_ctx)
        self.n_outputs = batch.n_outputs

    def decode_tokens(
        self,
        tokens: Sequence[int],
        pos0: int,
        seq_ids: Sequence[int] = (0,),
        logits: Logits | Literal["last", "all", "none"] = Logits.LAST,
    ) -> None:
        """Decode `tokens` at positions pos0.. in chunks of n_batch.

        logits: "last" (only the final token), "all" (every token: the whole
        sequence must fit one batch, so logits(i) indexes it), or "none"
        (Logits). Any other value is a ValueError before anything is decoded.
        """
        if logits not in LOGITS:
            raise ValueError(f"logits must be one of {', '.join(LOGITS)}, not {logits!r}")
        n = len(tokens)
        if logits == Logits.ALL and n > self.n_batch:
            raise BackendError(f"{n} tokens with logits exceed the batch size {self.n_batch}")
        b = self._batch
        for start in range(0, n, self.n_batch):
            b.clear()
            chunk = tokens[start : start + self.n_batch]
            for j, tok in enumerate(chunk):
                i = start + j
                want = logits == Logits.ALL or (logits == Logits.LAST and i == n - 1)
                b.add(tok, pos0 + i, seq_ids, want)
            self.decode(b)

    def decode_plan(self, items: Iterable[tuple[int, int, Sequence[int], bool]]) -> None:
        """Decode (token, pos, seq_ids, wants_logits) items as one batch."""
        b = self._batch
        b.clear()
        for tok, pos, seqs, want in items:
            b.add(tok, pos, seqs, want)
        self.decode(b)

    def logits(self, i: int) -> np.ndarray:
        """Float32 view of the logits of batch index i (-1: last output).

        The view aliases llama.cpp memory: it is valid until the next decode;
        copy it to keep it. Non-finite logits are a BackendError (_finite).
        """
        ptr = L.llama_get_logits_ith(self._ptr, i)
        if not ptr:
            raise BackendError(f"no logits at batch index {i}")
        return self._finite(np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)))

    def logits_rows(self) -> np.ndarray:
        """Float32 (n_outputs, n_vocab) view of the last decode's logits: row j
        belongs to the j-th token of the batch that asked for logits (llama.cpp
        returns them in batch order). Like logits(), valid until the next decode.
        """
        if self.n_outputs == 0:
            raise BackendError("the last decode produced no logits")
        ptr = L.llama_get_logits(self._ptr)
        if not ptr:
            raise BackendError("no logits after the last decode")
        return self._finite(np.ctypeslib.as_array(ptr, shape=(self.n_outputs, self.n_vocab)))

    def _finite(self, logits: np.ndarray) -> np.ndarray:
        """`logits`, after checking that every value is a finite number: a NaN
        (a damaged model file: 0xFF weights are NaN scales) would otherwise
        read as a choice (argmax of an all-NaN row is token 0, an end of text)
        and end a summary early, silently. About 25 us a row of 49,152 on a
        loaded 2-core CPU, against tens of ms for the decode that made it
        (docs/DESIGN.md, Non-finite logits)."""
        if not np.isfinite(logits).all():
            raise BackendError(
                f"llama.cpp computed logits that are not finite numbers (NaN or inf) with "
                f"{self.model.path.name}: the model file is damaged, or this llama.cpp build "
                "miscomputes it; the document was stopped and nothing of it kept"
            )
        return logits

    # memory (KV cache) operations; seq ids are always explicit and >= 0
    def seq_rm(self, seq: int, p0: int, p1: int = -1) -> None:
        if seq < 0:
            raise BackendError("seq_rm needs an explicit sequence id")
        if not L.llama_memory_seq_rm(self._mem, seq, p0, p1):
            raise BackendError(f"llama.cpp refused to remove positions [{p0}, {p1}) of sequence {seq}")

    def seq_cp(self, src: int, dst: int, p0: int = -1, p1: int = -1) -> None:
        L.llama_memory_seq_cp(self._mem, src, dst, p0, p1)

    def seq_add(self, seq: int, p0: int, p1: int, delta: int) -> None:
        if delta:
            L.llama_memory_seq_add(self._mem, seq, p0, p1, delta)

    def pos_max(self, seq: int) -> int:
        """The largest position of `seq`; on a sliding-window (iSWA) cache the
        window half's (llama.cpp reads only that half; docs/DESIGN.md,
        Sliding-window caches)."""
        return int(L.llama_memory_seq_pos_max(self._mem, seq))

    def pos_min(self, seq: int) -> int:
        """The smallest position of `seq` (on an iSWA cache the window half's)."""
        return int(L.llama_memory_seq_pos_min(self._mem, seq))

    def seq_state_size(self, seq: int, *, window_only: bool = False) -> int:
        """Bytes of `seq`'s saved state: a fixed header plus a fixed size per
        cell it holds. On an iSWA cache the window half counts only the cells
        inside the window of the sequence's largest position, and
        `window_only` leaves the full-attention half out; on other caches the
        flag changes nothing."""
        flags = L.LLAMA_STATE_SEQ_FLAGS_SWA_ONLY if window_only else L.LLAMA_STATE_SEQ_FLAGS_NONE
        return int(L.llama_state_seq_get_size_ext(self._ptr, seq, flags))

    def seq_state(self, seq: int) -> bytes:
        """`seq`'s cells saved (llama_state_seq_get_data): positions, sequence
        ids and K/V rows, in llama.cpp's own format."""
        size = int(L.llama_state_seq_get_size(self._ptr, seq))
        buf = (ctypes.c_uint8 * size)()
        got = int(L.llama_state_seq_get_data(self._ptr, buf, size, seq))
        if got != size:
            raise BackendError(f"saving sequence {seq} gave {got} of {size} bytes")
        return bytes(buf)

    def load_seq_state(self, data: bytes, seq: int) -> bool:
        """Load a seq_state() (of this context or of another model's of the
        same shape) into `seq`, which must be empty; False when llama.cpp
        refuses it (layer count, row sizes or cache types differ, or no room),
        leaving `seq` empty."""
        buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        return int(L.llama_state_seq_set_data(self._ptr, buf, len(data), seq)) != 0

    def clear(self) -> None:
        L.llama_memory_clear(self._mem, True)
