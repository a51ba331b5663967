"""Every llama_cpp call of the project lives in this package.

The rest of the package speaks tokens, positions, sequence ids and numpy
arrays. Each C pointer has exactly one owner (Model, Context, Batch, Sampler)
that frees it once; contexts are closed before their model.

llama_cpp is loaded on first use of a name below, so the pure-Python modules
(errors, gguf, hardware) import without it: `localsidecar --help` and
`doctor` work on a broken llama-cpp-python. This package imports nothing of
localsidecar above it.
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import BackendError, ConfigError, DecodeError, LocalsidecarError

# public name -> submodule that defines it (imported on first access)
_LAZY = {
    "Batch": "context",
    "Context": "context",
    "ContextStats": "context",
    "Logits": "context",
    "FTYPES": "gguf",
    "Model": "model",
    "quantize": "quantizer",
    "llama_cpp_version": "runtime",
    "set_verbose": "runtime",
    "supports_gpu_offload": "runtime",
    "system_info": "runtime",
    "GrammarSampler": "sampler",
    "choose_among": "sampler",
    "require_finite": "sampler",
    "BufferPlan": "buffers",
    "buffer_plan": "buffers",
    "llama_model_defaults": "buffers",
    "LlamaDraftModel": "llama_api",
    "calling_llama": "llama_api",
    "load_llama": "llama_api",
}

_RENAMED = {"buffer_plan": "plan"}

__all__ = ["BackendError", "ConfigError", "DecodeError", "LocalsidecarError", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'localsidecar.backend' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), _RENAMED.get(name, name))
    globals()[name] = value
    return value
