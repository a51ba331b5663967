"""llama.cpp process state: logging (silent unless verbose), backend init,
system facts."""

from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Iterator

import llama_cpp as L

from .errors import BackendError, DecodeError  # noqa: F401  (re-exported)

# --- logging -----------------------------------------------------------------

_verbose = False
_captured: list[bytes] | None = None  # llama.cpp's log while capture_log() is active


@L.llama_log_callback
def _log_callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
    if _captured is not None and text:
        _captured.append(bytes(text))
    if _verbose and text:
        os.write(2, text)


# llama.cpp keeps the raw function pointer: this module-level reference must
# outlive every call into llama.cpp, or the process crashes (docs/DESIGN.md,
# Log callback lifetime).
L.llama_log_set(_log_callback, ctypes.c_void_p(0))
L.llama_backend_init()


def set_verbose(verbose: bool) -> None:
    """Show llama.cpp's own log on stderr (off by default)."""
    global _verbose
    _verbose = bool(verbose)


@contextlib.contextmanager
def capture_log() -> Iterator[list[bytes]]:
    """Collect llama.cpp's log lines (every level) while inside, e.g. the
    buffer sizes a model load reports; shown on stderr only when verbose."""
    global _captured
    outer, _captured = _captured, []
    try:
        yield _captured
    finally:
        if outer is not None:
            outer.extend(_captured)
        _captured = outer


def system_info() -> str:
    return L.llama_print_system_info().decode("utf-8", "replace").strip()


def supports_gpu_offload() -> bool:
    return bool(L.llama_supports_gpu_offload())


def llama_cpp_version() -> str:
    return getattr(L, "__version__", "unknown")
