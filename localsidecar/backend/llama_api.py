"""llama-cpp-python's high-level API, as localsidecar uses it: the draft-model
base class, and `Llama` loaded with the project's buffer-type decision and
behind the guarded probe (buffers.py, probe.py)."""

from __future__ import annotations

import os
import sys
from typing import Any

from llama_cpp import Llama
from llama_cpp.llama_speculative import LlamaDraftModel

from . import probe
from .buffers import BufferPlan, llama_model_defaults, plan

__all__ = ["Llama", "LlamaDraftModel", "calling_llama", "load_llama"]


def load_llama(model_path: str | os.PathLike, *, buffers: BufferPlan | None = None, **kwargs: Any) -> Llama:
    """`Llama(model_path=..., **kwargs)` whose model loads with the buffer
    types localsidecar chooses (no AMX unless LOCALSIDECAR_AMX=1), after the
    guarded probe: a decode that would kill the process raises BackendError."""
    chosen = buffers or plan()
    probe.ensure_safe(model_path, chosen)
    with llama_model_defaults(chosen):
        return Llama(model_path=str(model_path), **kwargs)


def calling_llama(draft: LlamaDraftModel, max_depth: int = 8) -> Llama | None:
    """The Llama whose draft_model is `draft`, found among the frames that
    called it, or None. `Llama.generate` (llama-cpp-python 0.3) calls
    `self.draft_model(input_ids)` with the token ids alone, so this is the
    only way a draft's first call can learn its target; a subclass's
    `__call__` in between is passed over. Call it from the draft's `__call__`."""
    frame = sys._getframe(1)
    for _ in range(max_depth):
        if frame is None:
            return None
        caller = frame.f_locals.get("self")
        if isinstance(caller, Llama) and caller.draft_model is draft:
            return caller
        frame = frame.f_back
    return None
