"""localsidecar: speculative summarization on llama.cpp with a hashtag sidecar on the draft.

The library imports neither Click nor llama.cpp until it is used:
`from localsidecar import Engine` loads the engine (and llama.cpp) on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS = {
    "Engine": "localsidecar.decoding.engine",
    "EngineConfig": "localsidecar.decoding.engine",
    "DocResult": "localsidecar.decoding.engine",
    "PromptConfig": "localsidecar.decoding.prompts",
    "SpecConfig": "localsidecar.decoding.speculative",
    "LocalsidecarError": "localsidecar.errors",
    "BackendError": "localsidecar.errors",
    "ConfigError": "localsidecar.errors",
    "GGUFDraft": "localsidecar.integrations.llama_cpp_python",
    "load_llama": "localsidecar.integrations.llama_cpp_python",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'localsidecar' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
