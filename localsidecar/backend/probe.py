"""The guarded probe: a native crash of llama.cpp is never silent.

The first time a combination of llama-cpp-python version, llama.cpp build
(its system info), CPU flags, buffer-type decision and the model's tensor
types is used, a child process loads the model with the same params and
decodes a 40-token batch and then one token. A child that dies by a signal
(SIGILL in a kernel this CPU cannot run, SIGSEGV, SIGABRT) becomes one
BackendError line naming the signal and the remedy; the parent never makes
the call that would kill it. A verdict "ok" is cached in one small file per
key, so later runs (and the test suite's many commands) pay only for reading
it; a crash is not cached (a fixed install is re-probed next time).

LOCALSIDECAR_PROBE: "0" skips the probe, "force" ignores the cache.
LOCALSIDECAR_PROBE_CACHE: the cache folder (default
$XDG_CACHE_HOME/localsidecar/probe, i.e. ~/.cache/localsidecar/probe).

The child is `localsidecar.backend.probe_child`.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from .buffers import AMX_ENV, EXTRA_BUFTS_ENV, BufferPlan, cpu_flags
from .errors import BackendError, ConfigError

PROBE_ENV = "LOCALSIDECAR_PROBE"
CACHE_ENV = "LOCALSIDECAR_PROBE_CACHE"
CHILD_TIMEOUT_S = 300
# signals that end the child because the user stopped the program (its process
# group), not because llama.cpp crashed: the parent handles its own copy
INTERRUPTS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# Python run in the child before its decode; tests set it to make the child die on purpose.
CHILD_PRELUDE = ""

_checked: dict[str, Verdict] = {}  # key -> verdict, this process


@dataclass
class Verdict:
    """ok: the child decoded; signal: the signal it died of (None otherwise);
    cached: no child ran for this answer (cache file or this process's memory); seconds: the child's wall
    time; buffers: {buffer name: MiB} the child's weights went to."""

    key: str
    ok: bool | None
    signal: str | None = None
    cached: bool = False
    seconds: float = 0.0
    buffers: dict[str, float] | None = None
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def cache_dir() -> Path:
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "localsidecar" / "probe"


_host: str | None = None  # this process's version, build and CPU flags (they do not change while it runs)
_types: dict[tuple, list[str]] = {}  # (path, size, mtime) -> tensor types


def probe_key(tensor_types: list[str], buffers: BufferPlan) -> str:
    """A digest of everything that decides which kernels a decode runs."""
    global _host
    if _host is None:
        from .runtime import llama_cpp_version, system_info

        _host = "\n".join([llama_cpp_version(), system_info(), " ".join(sorted(cpu_flags()))])
    parts = [_host, buffers.key(), ",".join(sorted(tensor_types))]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def _tensor_types(path: Path) -> list[str]:
    from .gguf import gguf_info

    try:
        st = path.stat()
        ident = (str(path.resolve()), st.st_size, st.st_mtime_ns)
        if ident not in _types:
            _types[ident] = sorted(gguf_info(path).tensor_types)
        return _types[ident]
    except (OSError, BackendError):
        return []  # the load itself reports a missing or damaged file


def crash_message(path: Path, sig: str, buffers: BufferPlan, loaded: dict[str, float] | None) -> str:
    where = f"weights in {', '.join(loaded)}" if loaded else "before its weights loaded"
    if buffers.use_extra_bufts and buffers.amx_offered:
        remedy = f"unset {AMX_ENV} (the AMX buffer type is what it runs only on some builds)"
    elif buffers.use_extra_bufts:
        remedy = f"set {EXTRA_BUFTS_ENV}=0 to load without llama.cpp's extra buffer types"
    else:
        remedy = (
            "reinstall llama-cpp-python built for an older instruction set (docs/cpus.md: "
            'CMAKE_ARGS="-DGGML_NATIVE=OFF")'
        )
    return (
        f"llama.cpp crashed on this CPU ({sig} in a test decode of {path.name}, {where}); {remedy}, "
        "and include `localsidecar doctor` in a bug report"
    )


def run_child(path: Path, buffers: BufferPlan, key: str) -> Verdict:
    env = dict(os.environ, **{PROBE_ENV: "0"})
    cmd = [
        sys.executable,
        "-c",
        CHILD_PRELUDE + "\nfrom localsidecar.backend.probe_child import main; main()",
        str(path),
        "1" if buffers.use_extra_bufts else "0",
    ]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        return Verdict(
            key, None, seconds=time.perf_counter() - t0, detail=f"no answer in {CHILD_TIMEOUT_S} s"
        )
    seconds = time.perf_counter() - t0
    loaded = None
    for line in r.stdout.splitlines():
        if line.startswith("buffers "):
            loaded = json.loads(line[len("buffers ") :])
    if r.returncode < 0:
        try:
            sig = signal.Signals(-r.returncode).name
        except ValueError:
            sig = f"signal {-r.returncode}"
        if -r.returncode in INTERRUPTS:  # a terminal's Ctrl-C reaches the child too: no verdict
            return Verdict(
                key, None, seconds=seconds, buffers=loaded, detail=f"the test decode was interrupted ({sig})"
            )
        return Verdict(key, False, sig, seconds=seconds, buffers=loaded)
    if r.returncode != 0:  # not a native crash: the parent's own load reports the reason
        tail = " ".join(r.stderr.split()[-30:])
        return Verdict(
            key, None, seconds=seconds, buffers=loaded, detail=f"child exit {r.returncode}: {tail}"
        )
    return Verdict(key, True, seconds=seconds, buffers=loaded)


CACHE_FILE_MAX_BYTES = 1 << 16  # a verdict is a few hundred bytes
_FIELD_TYPES = {  # Verdict field -> the JSON types it may hold (None where it may be missing)
    "key": (str,),
    "ok": (bool, type(None)),
    "signal": (str, type(None)),
    "seconds": (int, float),
    "buffers": (dict, type(None)),
    "detail": (str,),
}


def _read_cached(key: str) -> Verdict | None:
    """The cached verdict for `key`, or None: no entry, or one that is not a
    small regular file (a FIFO would block the open, a link to /dev/zero the
    read) or not a verdict of the right types (it is probed again and
    replaced). Never blocks, never raises."""
    try:
        fd = os.open(cache_dir() / f"{key}.json", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = json.loads(os.read(fd, CACHE_FILE_MAX_BYTES))
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(fd)
    if not isinstance(data, dict) or data.get("key") != key:
        return None
    fields = {k: data.get(k) for k in _FIELD_TYPES}
    if not all(_of_types(v, _FIELD_TYPES[k]) for k, v in fields.items()):
        return None
    buffers = fields["buffers"] or {}
    if not all(isinstance(k, str) and _of_types(v, (int, float)) for k, v in buffers.items()):
        return None
    return Verdict(**fields, cached=True)


def _of_types(value: Any, types: tuple[type, ...]) -> bool:
    """isinstance, except that a JSON true/false is no number."""
    return bool in types if isinstance(value, bool) else isinstance(value, types)


def _write_cached(v: Verdict) -> None:
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{v.key}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps({**v.as_dict(), "cached": False}))
        os.replace(tmp, folder / f"{v.key}.json")
    except OSError:
        pass  # an unwritable cache costs a probe per run, nothing else


def verdict(path: str | os.PathLike, buffers: BufferPlan, *, force: bool = False) -> Verdict:
    """The verdict for loading `path` with `buffers` on this host: from this
    process's memory, the cache, or a child (force: always a child)."""
    p = Path(path)
    key = probe_key(_tensor_types(p), buffers)
    if not force:
        if key in _checked:
            return replace(_checked[key], cached=True)
        cached = _read_cached(key)
        if cached is not None and cached.ok:
            _checked[key] = cached
            return cached
    v = run_child(p, buffers, key)
    if v.ok:
        _write_cached(v)
        _checked[key] = v
    return v


def mode() -> str:
    value = os.environ.get(PROBE_ENV, "").strip().lower()
    if value in ("0", "off", "no", "false"):
        return "off"
    if value not in ("", "force", "1", "on", "yes", "true", "auto"):
        raise ConfigError(f"{PROBE_ENV}={os.environ[PROBE_ENV]!r}: not one of 0, off, no, false, force")
    return "force" if value == "force" else "auto"


def ensure_safe(path: str | os.PathLike, buffers: BufferPlan) -> Verdict | None:
    """Raise BackendError (one line) when a test decode of `path` kills a child
    process; None when the probe is off."""
    m = mode()
    if m == "off":
        return None
    v = verdict(path, buffers, force=m == "force")
    if v.ok is False:
        raise BackendError(crash_message(Path(path), v.signal or "a signal", buffers, v.buffers))
    return v
