"""Every llama_cpp call of the project lives in this module.

The rest of the package speaks tokens, positions, sequence ids and numpy
arrays. Each C pointer has exactly one owner (Model, Context, Batch, Sampler)
that frees it once; contexts are closed before their model.
"""

from __future__ import annotations

import ctypes
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import llama_cpp as L
import numpy as np


class BackendError(Exception):
    """A failure the user can act on; the message is one line."""


class DecodeError(BackendError):
    """llama_decode returned a non-zero code; `code` keeps it."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


# --- logging -----------------------------------------------------------------

_verbose = False


@L.llama_log_callback
def _log_callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
    if _verbose and text:
        os.write(2, text)


# llama.cpp keeps the raw function pointer: this module-level reference must
# outlive every call into llama.cpp, or the process crashes (DESIGN fact 6).
L.llama_log_set(_log_callback, ctypes.c_void_p(0))
L.llama_backend_init()


def set_verbose(verbose: bool) -> None:
    """Show llama.cpp's own log on stderr (off by default)."""
    global _verbose
    _verbose = bool(verbose)


def system_info() -> str:
    return L.llama_print_system_info().decode("utf-8", "replace").strip()


def supports_gpu_offload() -> bool:
    return bool(L.llama_supports_gpu_offload())


def llama_cpp_version() -> str:
    return getattr(L, "__version__", "unknown")


# --- GGUF files ----------------------------------------------------------------

GGUF_MAGIC = b"GGUF"


def check_gguf_file(path: str | os.PathLike) -> Path:
    """Fail with one line unless `path` is a readable file that starts like a GGUF."""
    p = Path(path)
    if not p.exists():
        raise BackendError(f"model file not found: {p}")
    if not p.is_file():
        raise BackendError(f"model path is not a file: {p}")
    try:
        with open(p, "rb") as f:
            head = f.read(4)
    except OSError as exc:
        raise BackendError(f"cannot read model file {p}: {exc.strerror}") from None
    if head != GGUF_MAGIC:
        raise BackendError(f"not a GGUF model file: {p}")
    return p


def _header_problem(p: Path) -> str | None:
    """What is wrong with the GGUF header of `p` (truncated, malformed), if anything."""
    from .gguf_info import gguf_info

    try:
        gguf_info(p)
    except Exception as exc:  # UserError with one line, e.g. "GGUF file is truncated (...)"
        return " ".join(str(exc).split())
    return None


def _load_failure(p: Path) -> str:
    """Why llama.cpp refused `p`: the header reader names a truncated or malformed
    file exactly; anything else is llama.cpp's own reason (shown with --verbose)."""
    return _header_problem(p) or (f"llama.cpp could not load {p} (unsupported or damaged GGUF; "
                                  "run with --verbose for llama.cpp's reason)")


# --- model ---------------------------------------------------------------------


class Model:
    """Owns one llama_model and reads its vocabulary and metadata."""

    def __init__(self, path: str | os.PathLike, n_gpu_layers: int = 0):
        p = check_gguf_file(path)
        params = L.llama_model_default_params()
        params.n_gpu_layers = int(n_gpu_layers)
        ptr = L.llama_model_load_from_file(str(p).encode(), params)
        if not ptr:
            raise BackendError(_load_failure(p))
        self._ptr = ptr
        self.path = p
        self._vocab = L.llama_model_get_vocab(ptr)
        self.n_vocab = int(L.llama_vocab_n_tokens(self._vocab))
        self.vocab_type = int(L.llama_vocab_type(self._vocab))
        self.bos = int(L.llama_vocab_bos(self._vocab))
        self.eos = int(L.llama_vocab_eos(self._vocab))
        self.eot = int(L.llama_vocab_eot(self._vocab))
        self.add_bos = bool(L.llama_vocab_get_add_bos(self._vocab))
        self.n_ctx_train = int(L.llama_model_n_ctx_train(ptr))
        self.n_params = int(L.llama_model_n_params(ptr))
        self.size_bytes = int(L.llama_model_size(ptr))
        buf = ctypes.create_string_buffer(256)
        L.llama_model_desc(ptr, buf, 256)
        self.desc = buf.value.decode("utf-8", "replace")
        self._piece_buf = ctypes.create_string_buffer(256)

    def close(self) -> None:
        if self._ptr:
            L.llama_model_free(self._ptr)
            self._ptr = None

    # vocabulary
    def tokenize(self, text: str, *, special: bool = False, add_bos: bool = False) -> list[int]:
        """Token ids of `text`; `special` parses control-token text like <|im_end|>.
        Text with an unpaired surrogate (an undecodable byte of a command-line
        argument, say) is not UTF-8: BackendError."""
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise BackendError(f"text is not valid UTF-8 (unpaired surrogate U+{ord(text[exc.start]):04X} "
                               f"at character {exc.start})") from None
        cap = len(data) + 8
        while True:
            buf = (L.llama_token * cap)()
            n = L.llama_tokenize(self._vocab, data, len(data), buf, cap, add_bos, special)
            if n >= 0:
                return list(buf[:n])
            cap = -n

    def piece(self, token: int, special: bool = True) -> bytes:
        n = L.llama_token_to_piece(self._vocab, token, self._piece_buf, 256, 0, special)
        if n < 0:
            big = ctypes.create_string_buffer(-n)
            n = L.llama_token_to_piece(self._vocab, token, big, -n, 0, special)
            return big.raw[:n]
        return self._piece_buf.raw[:n]

    def detokenize(self, tokens: Sequence[int], *, special: bool = False) -> str:
        """Text of `tokens`; control tokens are dropped unless `special`."""
        if not tokens:
            return ""
        arr = (L.llama_token * len(tokens))(*tokens)
        cap = 8 * len(tokens) + 16
        while True:
            buf = ctypes.create_string_buffer(cap)
            n = L.llama_detokenize(self._vocab, arr, len(tokens), buf, cap, not special, special)
            if n >= 0:
                return buf.raw[:n].decode("utf-8", "replace")
            cap = -n

    def token_text(self, token: int) -> bytes:
        return L.llama_vocab_get_text(self._vocab, token) or b""

    def token_attr(self, token: int) -> int:
        return int(L.llama_vocab_get_attr(self._vocab, token))

    def is_eog(self, token: int) -> bool:
        return bool(L.llama_vocab_is_eog(self._vocab, token))

    # metadata and chat template
    def meta(self, key: str) -> str | None:
        buf = ctypes.create_string_buffer(4096)
        n = L.llama_model_meta_val_str(self._ptr, key.encode(), buf, 4096)
        return None if n < 0 else buf.value.decode("utf-8", "replace")

    def chat_template(self) -> str | None:
        raw = L.llama_model_chat_template(self._ptr, None)
        return raw.decode("utf-8", "replace") if raw else None

    def apply_chat_template(self, messages: Sequence[tuple[str, str]], add_assistant: bool) -> str | None:
        """Render (role, content) pairs with the model's template; None if llama.cpp
        does not recognise the template."""
        tmpl = L.llama_model_chat_template(self._ptr, None)
        if not tmpl:
            return None
        keep = [(r.encode(), c.encode()) for r, c in messages]
        chat = (L.llama_chat_message * len(keep))(*[L.llama_chat_message(r, c) for r, c in keep])
        cap = sum(len(c) for _, c in keep) * 2 + 1024
        for _ in range(2):
            buf = ctypes.create_string_buffer(cap)
            n = L.llama_chat_apply_template(tmpl, chat, len(keep), add_assistant, buf, cap)
            if n < 0:
                return None
            if n <= cap:
                return buf.raw[:n].decode("utf-8")
            cap = n + 1
        return None


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
        return DecodeError(code, f"context full: no KV slot for {n_tokens} tokens (n_ctx {n_ctx}); raise --ctx or lower --max-chars")
    if code == 2:
        return DecodeError(code, "decode aborted")
    if code == -1:
        return DecodeError(code, "llama.cpp rejected the batch as invalid (positions must stay consecutive within a sequence)")
    return DecodeError(code, f"llama_decode failed with fatal code {code}")


@dataclass
class ContextStats:
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
    ):
        params = L.llama_context_default_params()
        params.n_ctx = int(n_ctx)
        params.n_batch = int(n_batch)
        params.n_ubatch = int(n_batch)
        params.n_seq_max = int(n_seq_max)
        params.kv_unified = bool(kv_unified)
        threads = int(n_threads or os.cpu_count() or 1)
        params.n_threads = threads
        params.n_threads_batch = threads
        params.no_perf = True
        ptr = L.llama_init_from_model(model._ptr, params)
        if not ptr:
            raise BackendError(f"llama.cpp could not create a context of {n_ctx} tokens for {model.path.name}")
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
        self.stats.decode_s += time.perf_counter() - t0
        self.stats.decode_calls += 1
        self.stats.decode_tokens += batch.n_tokens
        if code != 0:
            self.n_outputs = 0
            raise _decode_error(code, batch.n_tokens, self.n_ctx)
        self.n_outputs = batch.n_outputs

    def decode_tokens(
        self,
        tokens: Sequence[int],
        pos0: int,
        seq_ids: Sequence[int] = (0,),
        logits: str = "last",
    ) -> None:
        """Decode `tokens` at positions pos0.. in chunks of n_batch.

        logits: "last" (only the final token), "all" (every token: the whole
        sequence must fit one batch, so logits(i) indexes it), or "none".
        """
        n = len(tokens)
        if logits == "all" and n > self.n_batch:
            raise BackendError(f"{n} tokens with logits exceed the batch size {self.n_batch}")
        b = self._batch
        for start in range(0, n, self.n_batch):
            b.clear()
            chunk = tokens[start : start + self.n_batch]
            for j, tok in enumerate(chunk):
                i = start + j
                want = logits == "all" or (logits == "last" and i == n - 1)
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
        copy it to keep it.
        """
        ptr = L.llama_get_logits_ith(self._ptr, i)
        if not ptr:
            raise BackendError(f"no logits at batch index {i}")
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))

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
        return np.ctypeslib.as_array(ptr, shape=(self.n_outputs, self.n_vocab))

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

    def pos_min(self, seq: int) -> int:
        return int(L.llama_memory_seq_pos_min(self._mem, seq))

    def pos_max(self, seq: int) -> int:
        return int(L.llama_memory_seq_pos_max(self._mem, seq))

    def clear(self) -> None:
        L.llama_memory_clear(self._mem, True)


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

    def __init__(
        self,
        model: Model,
        grammar: str,
        *,
        temperature: float = 0.0,
        seed: int = 0,
        penalty_last_n: int = 64,
        penalty_repeat: float = 1.0,
        penalty_present: float = 0.0,
        fast: bool = True,
    ):
        chain = L.llama_sampler_chain_init(L.llama_sampler_chain_default_params())
        self._ptr = chain
        self._check = None
        self.fast_hits = 0    # tokens taken by the fast path
        self.full_runs = 0    # tokens that needed the grammar over the whole vocabulary
        has_penalty = penalty_repeat != 1.0 or penalty_present != 0.0
        if has_penalty:
            L.llama_sampler_chain_add(
                chain, L.llama_sampler_init_penalties(model.n_vocab, penalty_last_n, penalty_repeat, 0.0, penalty_present)
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


# --- quantization -------------------------------------------------------------------

FTYPES = {
    "F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q8_0": 7, "Q5_0": 8, "Q5_1": 9,
    "Q2_K": 10, "Q3_K_S": 11, "Q3_K_M": 12, "Q3_K_L": 13, "Q4_K_S": 14,
    "Q4_K_M": 15, "Q5_K_S": 16, "Q5_K_M": 17, "Q6_K": 18, "IQ4_NL": 25,
    "IQ4_XS": 30, "BF16": 32,
}


def _kv_override_array(overrides: dict[str, int | float | bool | str]):
    """A llama_model_kv_override array terminated by an empty key (llama.h)."""
    arr = (L.llama_model_kv_override * (len(overrides) + 1))()
    for o, (key, value) in zip(arr, overrides.items()):
        k = key.encode()
        if not 0 < len(k) < 128:
            raise BackendError(f"metadata key {key!r} must be 1..127 bytes")
        o.key = k
        if isinstance(value, bool):
            o.tag, o.value.val_bool = L.LLAMA_KV_OVERRIDE_TYPE_BOOL, value
        elif isinstance(value, int):  # written as uint32 by llama_model_quantize
            o.tag, o.value.val_i64 = L.LLAMA_KV_OVERRIDE_TYPE_INT, value
        elif isinstance(value, float):
            o.tag, o.value.val_f64 = L.LLAMA_KV_OVERRIDE_TYPE_FLOAT, value
        elif isinstance(value, str) and len(value.encode()) < 128:
            o.tag, o.value.val_str = L.LLAMA_KV_OVERRIDE_TYPE_STR, value.encode()
        else:
            raise BackendError(f"metadata override {key}: need a bool, int, float or a string under 128 bytes")
    return arr


def quantize(src: str | os.PathLike, dst: str | os.PathLike, ftype: str, n_threads: int | None = None,
             *, kv_overrides: dict[str, int | float | bool | str] | None = None) -> None:
    """Write `dst`, a requantized copy of the GGUF `src` (llama_model_quantize).

    kv_overrides: metadata values written into `dst` instead of the source's,
    e.g. {"tokenizer.chat_template": ""} (ints are stored as uint32)."""
    name = ftype.upper()
    if name not in FTYPES:
        raise BackendError(f"unknown quantization {ftype!r}; choose from {', '.join(FTYPES)}")
    params = L.llama_model_quantize_default_params()
    params.ftype = FTYPES[name]
    params.allow_requantize = True
    params.nthread = int(n_threads or os.cpu_count() or 1)
    overrides = _kv_override_array(kv_overrides) if kv_overrides else None  # alive during the call
    if overrides is not None:
        params.kv_overrides = ctypes.cast(overrides, ctypes.POINTER(L.llama_model_kv_override))
    code = L.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params))
    if code != 0:
        why = _header_problem(Path(src)) or f"code {code}; run with --verbose for llama.cpp's reason"
        raise BackendError(f"llama.cpp could not quantize {src} to {name} ({why})")
