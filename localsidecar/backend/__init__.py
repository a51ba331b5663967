"""Every llama_cpp call of the project lives in this module.

The rest of the package speaks tokens, positions, sequence ids and numpy
arrays. Each C pointer has exactly one owner (Model, Context, Batch, Sampler)
that frees it once; contexts are closed before their model.
"""


from .context import Batch, Context, ContextStats
from .model import GGUF_MAGIC, Model, check_gguf_file
from .quantize import FTYPES, quantize
from .runtime import BackendError, DecodeError, llama_cpp_version, set_verbose, supports_gpu_offload, system_info
from .sampler import GrammarSampler

__all__ = [
    "FTYPES", "GGUF_MAGIC", "BackendError", "Batch", "Context", "ContextStats", "DecodeError", "GrammarSampler",
    "Model", "check_gguf_file", "llama_cpp_version", "quantize", "set_verbose", "supports_gpu_offload", "system_info",
]
