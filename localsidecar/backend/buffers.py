"""Which buffer types llama.cpp may put model weights in: the one place that
decides the model params of every model the project loads (Engine's target
and draft, the acceptance lab, `quant`'s checks, GGUFDraft, and `Llama`
through `llama_model_defaults`).

llama.cpp stores weights in the first buffer type of its list that supports
them: "extra" CPU types first (AMX, then CPU_REPACK, which repacks Q4_0 for
faster AVX2/AVX-512 kernels), then plain CPU memory. Builds made on an AMX CPU
(GGML_NATIVE, the pip default) offer AMX, and llama.cpp's AMX kernels were seen
to die with SIGILL on the first decode of Q4_0/Q4_1 weights there (docs/cpus.md).
The decision: extra buffer types stay on (CPU_REPACK's speed is kept)
unless llama.cpp offers its AMX type, then they go off for the whole model
(llama.cpp has no per-type switch: an override to the CPU type re-selects
among the extra types, AMX included). LOCALSIDECAR_AMX=1 keeps them on where
AMX is offered; LOCALSIDECAR_EXTRA_BUFTS=0 turns them off everywhere.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError

AMX_ENV = "LOCALSIDECAR_AMX"
EXTRA_BUFTS_ENV = "LOCALSIDECAR_EXTRA_BUFTS"
AMX_CPU_FLAGS = frozenset({"amx_tile", "amx_int8", "amx_bf16"})
CPUINFO = Path("/proc/cpuinfo")


@dataclass(frozen=True)
class BufferPlan:
    """The model-param decision. use_extra_bufts: llama_model_params' field;
    amx_offered: llama.cpp's CPU device lists its AMX buffer type (or, where
    the list is unknown, the CPU reports AMX); reason: one line for doctor."""

    use_extra_bufts: bool
    amx_offered: bool
    offered: tuple[str, ...] | None
    reason: str

    def key(self) -> str:
        return f"extra={int(self.use_extra_bufts)},offered={','.join(self.offered or ('?',))}"


def _flag(env: Mapping[str, str], name: str) -> bool | None:
    """The variable's yes or no; None when unset or empty. Any other value is
    a ConfigError: a typo (`=ture`) must not silently mean the default."""
    value = env.get(name, "").strip().lower()
    if value in ("1", "on", "true", "yes"):
        return True
    if value in ("0", "off", "false", "no"):
        return False
    if value:
        raise ConfigError(f"{name}={env[name]!r}: not one of 1, on, true, yes, 0, off, false, no")
    return None


def decide(offered: Iterable[str] | None, cpu_flags: Iterable[str], env: Mapping[str, str]) -> BufferPlan:
    """The decision from its inputs: the extra buffer types llama.cpp's CPU
    device offers (None where unknown), the CPU's flags (/proc/cpuinfo names)
    and the environment. Pure: tests give every combination."""
    offered_t = tuple(offered) if offered is not None else None
    amx = ("AMX" in offered_t) if offered_t is not None else bool(AMX_CPU_FLAGS & set(cpu_flags))
    extra, keep_amx = _flag(env, EXTRA_BUFTS_ENV), _flag(env, AMX_ENV)  # both checked on every host
    if extra is False:
        return BufferPlan(False, amx, offered_t, f"extra buffer types off ({EXTRA_BUFTS_ENV}=0)")
    if amx and keep_amx is not True:
        return BufferPlan(
            False,
            amx,
            offered_t,
            "llama.cpp offers its AMX buffer type, whose kernels crashed on AMX "
            f"hosts: extra buffer types off ({AMX_ENV}=1 turns them on)",
        )
    if amx:
        return BufferPlan(True, amx, offered_t, f"extra buffer types on, AMX included ({AMX_ENV}=1)")
    names = ", ".join(offered_t) if offered_t else "none offered"
    return BufferPlan(True, amx, offered_t, f"extra buffer types on ({names}; no AMX)")


def loaded_model_problem(use_extra_bufts: bool, buffers: BufferPlan) -> str | None:
    """Why a model another library loaded with `use_extra_bufts` (its
    llama_model_params) must not be decoded here, or None. Pure: tests give
    every case. The one refusal: llama.cpp offers its AMX buffer type (the
    decision turned extra types off for it) and the model was loaded with
    extra types on, as llama-cpp-python's own `Llama(...)` does with
    llama.cpp's defaults: its weights may be in the AMX type, whose kernels
    killed the process at the first decode (SIGILL, SIGSEGV)."""
    if buffers.amx_offered and not buffers.use_extra_bufts and use_extra_bufts:
        return (
            "the target Llama was loaded with llama.cpp's default buffer types, which on this CPU "
            "include AMX, whose kernels crashed the process (README, CPUs): load it with "
            f"localsidecar.load_llama(...) instead of Llama(...) ({AMX_ENV}=1 allows AMX where it runs)"
        )
    return None


def cpu_flags(cpuinfo: Path = CPUINFO) -> frozenset[str]:
    """The first CPU's feature flags from Linux /proc/cpuinfo (empty elsewhere)."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return frozenset()
    m = re.search(r"^(?:flags|Features)\s*:(.*)$", text, re.MULTILINE)
    return frozenset(m.group(1).split()) if m else frozenset()


def offered_extra_bufts() -> tuple[str, ...] | None:
    """Names of the extra buffer types llama.cpp's CPU device offers, in its
    order of preference (what make_cpu_buft_list adds with use_extra_bufts);
    None when the ggml library does not tell."""
    try:
        from llama_cpp import _ggml

        g = _ggml.libggml
        g.ggml_backend_dev_by_type.restype = ctypes.c_void_p
        g.ggml_backend_dev_by_type.argtypes = [ctypes.c_int]
        g.ggml_backend_dev_backend_reg.restype = ctypes.c_void_p
        g.ggml_backend_dev_backend_reg.argtypes = [ctypes.c_void_p]
        g.ggml_backend_reg_get_proc_address.restype = ctypes.c_void_p
        g.ggml_backend_reg_get_proc_address.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        g.ggml_backend_buft_name.restype = ctypes.c_char_p
        g.ggml_backend_buft_name.argtypes = [ctypes.c_void_p]
        dev = g.ggml_backend_dev_by_type(0)  # GGML_BACKEND_DEVICE_TYPE_CPU
        reg = g.ggml_backend_dev_backend_reg(dev) if dev else None
        fn = g.ggml_backend_reg_get_proc_address(reg, b"ggml_backend_dev_get_extra_bufts") if reg else None
    except (ImportError, OSError, AttributeError):
        return None
    if not fn:
        return ()
    arr = ctypes.CFUNCTYPE(ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)(fn)(dev)
    names = []
    while arr and arr[len(names)]:
        names.append(g.ggml_backend_buft_name(arr[len(names)]).decode("utf-8", "replace"))
    return tuple(names)


_plan_cache: dict[tuple, BufferPlan] = {}


# docs/DESIGN.md, Buffer types and AMX: extra buffer types stay on, AMX only by opt-in.
def plan(env: Mapping[str, str] | None = None) -> BufferPlan:
    """The decision for this process (the environment is read on every call)."""
    env = os.environ if env is None else env
    key = (env.get(AMX_ENV), env.get(EXTRA_BUFTS_ENV))
    if key not in _plan_cache:
        _plan_cache[key] = decide(offered_extra_bufts(), cpu_flags(), env)
    return _plan_cache[key]


def model_params(n_gpu_layers: int = 0, buffers: BufferPlan | None = None):
    """llama_model_params with the decision applied."""
    import llama_cpp as L

    params = L.llama_model_default_params()
    params.n_gpu_layers = int(n_gpu_layers)
    params.use_extra_bufts = (buffers or plan()).use_extra_bufts
    return params


_defaults_lock = threading.Lock()


@contextlib.contextmanager
def llama_model_defaults(buffers: BufferPlan | None = None) -> Iterator[BufferPlan]:
    """While inside, llama-cpp-python's `Llama(...)` loads its model with this
    module's decision: Llama builds its params from
    llama_cpp.llama_model_default_params(), replaced here for the duration."""
    import llama_cpp.llama_cpp as LL

    chosen = buffers or plan()
    with _defaults_lock:
        original = LL.llama_model_default_params

        def defaults():
            params = original()
            params.use_extra_bufts = chosen.use_extra_bufts
            return params

        defaults.localsidecar_plan = chosen  # tests/conftest.py: a Llama built outside this block fails
        LL.llama_model_default_params = defaults
        try:
            yield chosen
        finally:
            LL.llama_model_default_params = original


# --- which buffer types the weights went to -------------------------------------

_BUFFER_LINE = re.compile(r"load_tensors:\s+(\S+) model buffer size =\s*([\d.]+) MiB")


def parse_buffer_sizes(log: str) -> dict[str, float]:
    """{buffer name: MiB} from llama.cpp's load log ("load_tensors: CPU_REPACK
    model buffer size = 40.50 MiB"); CPU_Mapped is weights read from the mmap."""
    out: dict[str, float] = {}
    for name, mib in _BUFFER_LINE.findall(log):
        out[name] = out.get(name, 0.0) + float(mib)
    return out
