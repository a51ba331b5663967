"""llama-cpp-python's high-level API, as localsidecar uses it: the draft-model
base class, and `Llama` loaded with the project's buffer-type decision and
behind the guarded probe (buffers.py, probe.py)."""

from __future__ import annotations

import os
from typing import Any

from llama_cpp import Llama
from llama_cpp.llama_speculative import LlamaDraftModel

from . import probe
from .buffers import BufferPlan, llama_model_defaults, plan

__all__ = ["Llama", "LlamaDraftModel", "load_llama"]


def load_llama(model_path: str | os.PathLike, *, buffers: BufferPlan | None = None, **kwargs: Any) -> Llama:
    """`Llama(model_path=..., **kwargs)` whose model loads with the buffer
    types localsidecar chooses (no AMX unless LOCALSIDECAR_AMX=1), after the
    guarded probe: a decode that would kill the process raises BackendError."""
    chosen = buffers or plan()
    probe.ensure_safe(model_path, chosen)
    with llama_model_defaults(chosen):
        return Llama(model_path=str(model_path), **kwargs)
