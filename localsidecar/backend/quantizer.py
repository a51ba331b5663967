"""llama.cpp's quantizer, with GGUF metadata overrides."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

try:
    import resource
except ImportError:  # pragma: no cover - not on Windows
    resource = None

import llama_cpp as L

from .gguf import FTYPES, header_problem
from .hardware import default_threads
from .runtime import BackendError


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
            raise BackendError(
                f"metadata override {key}: need a bool, int, float or a string under 128 bytes"
            )
    return arr


def quantize(
    src: str | os.PathLike,
    dst: str | os.PathLike,
    ftype: str,
    n_threads: int | None = None,
    *,
    kv_overrides: dict[str, int | float | bool | str] | None = None,
) -> None:
    """Write `dst`, a requantized copy of the GGUF `src` (llama_model_quantize).

    kv_overrides: metadata values written into `dst` instead of the source's,
    e.g. {"tokenizer.chat_template": ""} (ints are stored as uint32)."""
    name = ftype.upper()
    if name not in FTYPES:
        raise BackendError(f"unknown quantization {ftype!r}; choose from {', '.join(FTYPES)}")
    params = L.llama_model_quantize_default_params()
    params.ftype = FTYPES[name]
    params.allow_requantize = True
    params.nthread = int(n_threads or default_threads())
    overrides = _kv_override_array(kv_overrides) if kv_overrides else None  # alive during the call
    if overrides is not None:
        params.kv_overrides = ctypes.cast(overrides, ctypes.POINTER(L.llama_model_kv_override))
    code = L.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params))
    if code != 0:
        why = (
            header_problem(src)
            or destination_problem(Path(dst))
            or f"code {code}; run with --verbose for llama.cpp's reason"
        )
        raise BackendError(f"llama.cpp could not quantize {src} to {name} ({why})")


FULL_DISK_BYTES = 8 << 20  # less free than this after a failed write: the disk filled up


def destination_problem(dst: Path) -> str | None:
    """Why writing `dst` failed, when the file system tells: read-only, the
    file size limit (ulimit -f) reached, or no space left. None otherwise."""
    folder = dst.parent
    try:
        fs = os.statvfs(folder)
    except OSError:
        return None
    if fs.f_flag & os.ST_RDONLY:
        return f"{folder} is on a read-only file system"
    if not os.access(folder, os.W_OK):
        return f"{folder} is not writable (permission denied)"
    try:
        written = dst.stat().st_size
    except OSError:
        written = 0
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0] if resource else -1
    if limit not in (-1, getattr(resource, "RLIM_INFINITY", -1)) and written >= limit:
        return f"the file size limit (ulimit -f) of {limit} bytes was reached writing {dst.name}"
    free = fs.f_bavail * fs.f_frsize
    if free < FULL_DISK_BYTES:
        return (
            f"no space left in {folder}: {free / 1e6:.1f} MB free after writing "
            f"{written / 1e6:.1f} MB of {dst.name}"
        )
    return None
