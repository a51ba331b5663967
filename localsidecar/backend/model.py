"""Model, the owner of a llama_model and its vocabulary."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence
from pathlib import Path

import llama_cpp as L

from . import probe
from .buffers import BufferPlan, model_params, parse_buffer_sizes, plan
from .gguf import check_gguf_file, header_problem
from .runtime import BackendError, capture_log


def _load_failure(p: os.PathLike) -> str:
    """Why llama.cpp refused `p`: the header reader names a truncated or malformed
    file exactly; anything else is llama.cpp's own reason (shown with --verbose)."""
    return header_problem(p) or (
        f"llama.cpp could not load {p} (unsupported or damaged GGUF; "
        "run with --verbose for llama.cpp's reason)"
    )


# --- model ---------------------------------------------------------------------


class Model:
    """Owns one llama_model (or borrows one: see borrow) and reads its vocabulary and metadata.

    buffers: the buffer-type decision (default: buffers.plan(), the one the
    whole project uses). Before the first load of a kind of model on this
    host, the guarded probe decodes it in a child process (probe.py).
    buffer_sizes: {llama.cpp buffer name: MiB} the weights went to."""

    def __init__(self, path: str | os.PathLike, n_gpu_layers: int = 0, *, buffers: BufferPlan | None = None):
        p = check_gguf_file(path)
        self.buffers = buffers or plan()
        self.probe = probe.ensure_safe(p, self.buffers)
        params = model_params(n_gpu_layers, self.buffers)
        with capture_log() as log:
            ptr = L.llama_model_load_from_file(str(p).encode(), params)
        self.buffer_sizes = parse_buffer_sizes(b"".join(log).decode("utf-8", "replace"))
        if not ptr:
            raise BackendError(_load_failure(p))
        self._read(ptr, p, owned=True)

    @classmethod
    def borrow(cls, ptr, path: str | os.PathLike) -> Model:
        """A Model over a llama_model that another owner loaded and frees (e.g.
        llama-cpp-python's `Llama.model`), to read its vocabulary and metadata.
        It is valid only while that owner keeps the model; close() leaves it."""
        if not ptr:
            raise BackendError(f"no llama.cpp model behind {path}")
        model = cls.__new__(cls)
        model.buffers, model.probe, model.buffer_sizes = None, None, {}
        model._read(ptr, Path(path), owned=False)
        return model

    def _read(self, ptr, p: Path, *, owned: bool) -> None:
        self._ptr = ptr
        self._owned = owned
        self.path = p
        self._vocab = L.llama_model_get_vocab(ptr)
        self.n_vocab = int(L.llama_vocab_n_tokens(self._vocab))
        self.vocab_type = int(L.llama_vocab_type(self._vocab))
        self.bos = int(L.llama_vocab_bos(self._vocab))
        self.eos = int(L.llama_vocab_eos(self._vocab))
        self.eot = int(L.llama_vocab_eot(self._vocab))
        self.add_bos = bool(L.llama_vocab_get_add_bos(self._vocab))
        self.n_ctx_train = int(L.llama_model_n_ctx_train(ptr))
        self._piece_buf = ctypes.create_string_buffer(256)
        self._pieces: list[str] | None = None

    def close(self) -> None:
        if self._ptr:
            if self._owned:
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
            raise BackendError(
                f"text is not valid UTF-8 (unpaired surrogate U+{ord(text[exc.start]):04X} "
                f"at character {exc.start})"
            ) from None
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

    def pieces(self) -> list[str]:
        """The text of every token id as a summary shows it (control tokens:
        empty; a piece that is part of a UTF-8 character: with U+FFFD), read once."""
        if self._pieces is None:
            self._pieces = [
                self.piece(t, special=False).decode("utf-8", "replace") for t in range(self.n_vocab)
            ]
        return self._pieces

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

    def is_eog(self, token: int) -> bool:
        return bool(L.llama_vocab_is_eog(self._vocab, token))

    # metadata and chat template
    def meta(self, key: str) -> str | None:
        buf = ctypes.create_string_buffer(4096)
        n = L.llama_model_meta_val_str(self._ptr, key.encode(), buf, 4096)
        return None if n < 0 else buf.value.decode("utf-8", "replace")

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
