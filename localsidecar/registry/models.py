"""Model registry, local resolution and downloads.

Invariants:
- resolving models never touches the network: hub files are looked up in the
  hub's own cache only (`try_to_load_from_cache`), package files with
  importlib, derived files in the models dir;
- only `pull` downloads, through `hf_hub_download` (the hub's cache, progress
  bars, HF_HOME and HF_HUB_OFFLINE apply); it never creates files of its own
  except derived drafts, which `embedded.derive` writes under a temporary name
  and renames when complete;
- a split model resolves to its first shard only when every shard is present
  in the same folder (llama.cpp loads the others from beside it);
- every failure a user can fix is a one-line LocalsidecarError; a missing download
  names the exact `localsidecar pull ...` command to run on a connected machine.

Models shipped inside a Python package go through localsidecar.registry.embedded
(the embedded pair; llama.cpp is loaded only when a draft is derived) and
localsidecar.registry.gemma (the gemma pair, assembled from chunk packages
into the models dir on first use).
"""

from __future__ import annotations

import glob
import logging
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localsidecar.backend.gguf import shard_names
from localsidecar.errors import LocalsidecarError
from localsidecar.registry.pairs import (  # noqa: F401  (re-exported: the registry API lives here too)
    ModelSpec,
    PairSpec,
    QuantFiles,
    Registry,
    _bad,
    load_registry,
    parse_registry,
)

DEFAULT_PAIR = "embedded"  # the one pair that works without any download
# REPO:FILE, with REPO an `owner/name` hub id (a Windows drive `C:` never matches)
HUB_SPEC_RE = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+):(?P<file>[^:]+)$")


def _bad_hub_file(filename: str) -> str | None:
    """Why FILE of REPO:FILE cannot name a file inside the repository (a '..'
    segment, an absolute path), or None."""
    parts = filename.replace("\\", "/").split("/")
    if filename.startswith(("/", "\\")):
        return "is an absolute path"
    if ".." in parts:
        return "has a '..' segment"
    return None


def hub_spec(text: str) -> tuple[str, str] | None:
    """(repo, file) of REPO:FILE, or None for another kind of argument; a
    file name that leaves the repository is a LocalsidecarError (one line)."""
    m = HUB_SPEC_RE.match(text)
    if not m:
        return None
    if problem := _bad_hub_file(m["file"]):
        raise LocalsidecarError(
            f"{text}: the file name {problem}; name a file inside the repository {m['repo']}"
        )
    return m["repo"], m["file"]


# --- local lookup (never any network) --------------------------------------------------


def hub_cache_dir() -> Path:
    """The hub's cache folder as huggingface_hub resolved it (HF_HUB_CACHE / HF_HOME)."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def hub_offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def cached_hub_file(repo: str, filename: str) -> Path | None:
    """Path of `filename` of `repo` in the hub cache (main revision), or None. Local only."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id=repo, filename=filename)
    return Path(found) if isinstance(found, str) and os.path.isfile(found) else None


@dataclass
class LocalFiles:
    """Where the files of one model quantization are on this machine."""

    model: ModelSpec
    quant: QuantFiles
    paths: list[Path | None]  # per registry file; None when absent
    derivable: bool = False  # absent but made offline on first use (derived from a present file)

    @property
    def present(self) -> bool:
        return all(p is not None for p in self.paths)

    @property
    def ready(self) -> bool:
        return self.present or self.derivable

    @property
    def missing(self) -> list[str]:
        return [f for f, p in zip(self.quant.files, self.paths) if p is None]

    @property
    def first(self) -> Path | None:
        return self.paths[0] if self.present else None

    def local_size(self) -> int:
        return sum(p.stat().st_size for p in self.paths if p is not None)


def locate(model: ModelSpec, quant: str, models_dir: str | os.PathLike | None = None) -> LocalFiles:
    """Look up a registry quantization locally; never downloads, derives or assembles."""
    qf = model.quant(quant)
    if model.repo:
        return LocalFiles(model, qf, [cached_hub_file(model.repo, f) for f in qf.files])
    from localsidecar.registry import embedded, gemma

    if not qf.derived_from:
        if model.package == gemma.GEMMA_PACKAGE:
            _check_packaged(model, qf)
            found = gemma.assembled(embedded.models_dir(models_dir))
            return LocalFiles(model, qf, [found], derivable=found is None and gemma.installed())
        try:
            return LocalFiles(model, qf, [_package_file(model, qf, models_dir)])
        except LocalsidecarError:
            return LocalFiles(model, qf, [None])
    source = locate(model, qf.derived_from, models_dir)
    out = embedded.models_dir(models_dir) / qf.files[0]
    have = out.is_file() and out.stat().st_size > 0
    return LocalFiles(model, qf, [out if have else None], derivable=not have and source.ready)


def _check_packaged(model: ModelSpec, qf: QuantFiles) -> None:
    from localsidecar.registry import embedded, gemma

    shipped = {embedded.EMBEDDED_PACKAGE: embedded.EMBEDDED_FILE, gemma.GEMMA_PACKAGE: gemma.GEMMA_FILE}
    if shipped.get(model.package) != qf.files[0]:
        raise _bad(
            f"{model.name}: only {', '.join(f'{p}/{f}' for p, f in shipped.items())} can ship in a package"
        )


def _package_file(model: ModelSpec, qf: QuantFiles, models_dir=None) -> Path:
    """The shipped file of a package model; the gemma one is assembled on first use."""
    from localsidecar.registry import embedded, gemma

    _check_packaged(model, qf)
    if model.package == gemma.GEMMA_PACKAGE:
        return gemma.target_path(embedded.models_dir(models_dir))
    return embedded.embedded_target_path()


def license_file(model: ModelSpec) -> Path | None:
    """The licence text a package ships with its model, if any."""
    from localsidecar.registry import gemma

    return gemma.license_file() if model.package == gemma.GEMMA_PACKAGE else None


# --- resolution ---------------------------------------------------------------------------


def pull_command(pair: str, quant: str, draft_quant: str) -> str:
    return f"localsidecar pull {pair} --quant {quant} --draft-quant {draft_quant}"


def _sizes(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def _resolve_registry(model: ModelSpec, quant: str, models_dir, hint: str) -> Path:
    """Path of a registry quantization; derives a missing derived file (offline)."""
    qf = model.quant(quant)
    if model.repo:
        found = locate(model, quant, models_dir)
        if not found.present:
            raise LocalsidecarError(
                f"{model.name} {qf.name} is not downloaded ({', '.join(found.missing)} missing from the hub cache "
                f"{hub_cache_dir()}); on a connected machine run: {hint}"
            )
        return found.first
    if not qf.derived_from:
        return _package_file(model, qf, models_dir)
    from localsidecar.registry import embedded

    source = _resolve_registry(model, qf.derived_from, models_dir, hint)
    out = embedded.derive(source, qf.name, embedded.models_dir(models_dir), announce=True)
    if out.name != qf.files[0]:
        raise _bad(f"{model.name} {qf.name}: derived file is {out.name}, registry says {qf.files[0]}")
    return out


def resolve_model_arg(spec: str | os.PathLike) -> Path:
    """A --target/--draft value: an existing local path, or REPO:FILE in the hub cache."""
    text = os.fspath(spec)
    local = Path(text).expanduser()
    if local.exists():
        if not local.is_file():
            raise LocalsidecarError(f"model path is not a file: {local}")
        return local
    found = hub_spec(text)
    if found is None:
        raise LocalsidecarError(f"model file not found: {local} (give a path or REPO:FILE)")
    repo, filename = found
    names = shard_names(filename)
    paths = [cached_hub_file(repo, f) for f in names]
    missing = [f for f, p in zip(names, paths) if p is None]
    if missing:
        raise LocalsidecarError(
            f"{repo}:{filename} is not downloaded ({', '.join(missing)} missing from the hub cache {hub_cache_dir()}); "
            f"on a connected machine run: localsidecar pull {repo}:{names[0]}"
        )
    return paths[0]  # the first shard when split: llama.cpp loads the rest beside it


def resolve_models(
    pair: str | None = None,
    target: str | os.PathLike | None = None,
    draft: str | os.PathLike | None = None,
    models_dir: str | os.PathLike | None = None,
    quant: str | None = None,
    draft_quant: str | None = None,
    *,
    require_draft: bool = True,
) -> tuple[Path, Path | None]:
    """(target_path, draft_path) from --pair/--target/--draft; no network call ever.

    --target/--draft override the pair's members; with none of the three the
    embedded pair is used. --quant/--draft-quant pick a pair's quantizations.
    A split model resolves to its first shard. draft_path is None only when
    require_draft is False and no draft was named.
    """
    if pair is None and target is None and draft is None:
        pair = DEFAULT_PAIR
    if pair is None:
        if quant or draft_quant:
            raise LocalsidecarError(
                "--quant/--draft-quant choose a quantization of a registry pair; add --pair NAME"
            )
        if target is None:
            raise LocalsidecarError("--draft needs --target (or use --pair NAME)")
        if draft is None and require_draft:
            raise LocalsidecarError("--target needs --draft (or use --pair NAME)")
        return resolve_model_arg(target), resolve_model_arg(draft) if draft is not None else None
    for given, q, opt, role in (
        (target, quant, "--quant", "--target"),
        (draft, draft_quant, "--draft-quant", "--draft"),
    ):
        if given is not None and q is not None:
            raise LocalsidecarError(
                f"{opt} chooses the pair's own file, which {role} replaces; give one of them"
            )
    spec = load_registry().pair(pair)
    tq = spec.target.quant(spec.default_quant if quant is None else quant).name
    dq = spec.draft.quant(spec.default_draft_quant if draft_quant is None else draft_quant).name
    hint = pull_command(spec.name, tq, dq)
    # Name every missing file of the pair in one message, not only the first model's.
    missing = [
        f
        for model, q, given in ((spec.target, tq, target), (spec.draft, dq, draft))
        if given is None and model.repo
        for f in locate(model, q).missing
    ]
    if missing:
        raise LocalsidecarError(
            f"pair {spec.name} is not downloaded ({', '.join(missing)} missing from the hub cache "
            f"{hub_cache_dir()}); on a connected machine run: {hint}"
        )
    target_path = (
        resolve_model_arg(target)
        if target is not None
        else _resolve_registry(spec.target, tq, models_dir, hint)
    )
    draft_path = (
        resolve_model_arg(draft) if draft is not None else _resolve_registry(spec.draft, dq, models_dir, hint)
    )
    return target_path, draft_path


# --- downloads ------------------------------------------------------------------------------


def _download_failure(exc: BaseException) -> str:
    from huggingface_hub import errors

    if hub_offline():
        return "HF_HUB_OFFLINE is set"
    # LocalEntryNotFoundError (not cached, hub not reached) subclasses
    # EntryNotFoundError in recent huggingface_hub: test it first.
    if isinstance(exc, errors.LocalEntryNotFoundError):
        return "the hub is unreachable"
    if isinstance(exc, (errors.RepositoryNotFoundError, errors.EntryNotFoundError)):
        return "not found on the hub; the registry may be out of date"
    if isinstance(exc, (TimeoutError, OSError)) or "connect" in type(exc).__name__.lower():
        return "the hub is unreachable"  # no answer to the probe (_probe_hub)
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first}"[:200]


@dataclass(frozen=True)
class HubFile:
    repo: str
    filename: str
    size: int | None  # bytes from the registry; None for a REPO:FILE outside it


HUB_PROBE_TIMEOUT_S = 4.0  # an unreachable hub fails `pull` within 5 s (the hub's own retries take ~25 s)


def _probe_hub(f: HubFile) -> BaseException | None:
    """One metadata request for `f`, no retries, bounded in time: None when the
    hub answered, else the error (a TimeoutError when it did not answer in
    HUB_PROBE_TIMEOUT_S). Runs in a daemon thread: a name lookup can block
    past any socket timeout, and the command must not wait for it."""
    import threading

    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    result: list[BaseException | None] = []

    def probe() -> None:
        try:
            get_hf_file_metadata(hf_hub_url(f.repo, f.filename), timeout=HUB_PROBE_TIMEOUT_S)
            result.append(None)
        except BaseException as exc:  # noqa: BLE001 (reported to the caller)
            result.append(exc)

    t = threading.Thread(target=probe, daemon=True, name="hub-probe")
    t.start()
    t.join(HUB_PROBE_TIMEOUT_S + 0.5)
    return result[0] if result else TimeoutError(f"no answer within {HUB_PROBE_TIMEOUT_S:.0f} s")


def _describe(files: list[HubFile]) -> str:
    known = sum(f.size or 0 for f in files)
    size = f", {_sizes(known)}" if known and all(f.size for f in files) else ""
    return f"{len(files)} file{'s' if len(files) > 1 else ''}{size}: {', '.join(f.filename for f in files)}"


def _bring_in(files: list[HubFile], hint: str) -> str:
    """How files fetched elsewhere get here: the hub cache's own layout, or by path."""
    folders = ", ".join(dict.fromkeys(f"models--{f.repo.replace('/', '--')}" for f in files))
    return (
        f"on a connected machine run: {hint}, then copy {folders} from its hub cache into {hub_cache_dir()} "
        "(the same layout; HF_HUB_CACHE names another cache folder) and what it derived into --models-dir; "
        "or name the files themselves: localsidecar run --target PATH --draft PATH"
    )


def _download(wanted: list[HubFile], hint: str) -> None:
    """Make every file of `wanted` present in the hub cache.

    Files already cached are not asked for again (no network call for them).
    The hub writes `.incomplete` blobs and renames them when complete, so an
    interrupted download never looks complete; nothing else is written here.
    """
    todo = [f for f in wanted if cached_hub_file(f.repo, f.filename) is None]
    if not todo:
        return
    if hub_offline():
        raise LocalsidecarError(
            f"cannot download {_describe(todo)} (HF_HUB_OFFLINE is set); {_bring_in(todo, hint)}"
        )
    _check_free_space(sum(f.size or 0 for f in todo))
    from huggingface_hub import hf_hub_download

    # The hub logs each retry ("Retrying in 2s ...") as a warning; a failure
    # must reach the user as the one line below, so keep only its errors.
    hub_log = logging.getLogger("huggingface_hub")
    level = hub_log.level
    hub_log.setLevel(max(level, logging.ERROR))
    try:
        for i, f in enumerate(todo):
            try:
                if (problem := _probe_hub(f)) is not None:
                    raise problem
                hf_hub_download(repo_id=f.repo, filename=f.filename)  # the hub's progress bar on stderr
            except (KeyboardInterrupt, SystemExit):
                raise
            except Exception as exc:  # any hub/network failure becomes one line
                raise LocalsidecarError(
                    f"cannot download {_describe(todo[i:])} ({_download_failure(exc)}); {_bring_in(todo[i:], hint)}"
                ) from None
    finally:
        hub_log.setLevel(level)


def _check_free_space(needed: int) -> None:
    folder = hub_cache_dir()
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    if needed > free:
        raise LocalsidecarError(
            f"not enough disk space in {folder}: {_sizes(needed)} to download, {_sizes(free)} free"
        )


def pull(
    pair: str,
    quant: str | None = None,
    draft_quant: str | None = None,
    models_dir: str | os.PathLike | None = None,
) -> tuple[Path, Path]:
    """Download (or derive) a pair's target and draft; returns their paths.

    `pair` is a registry pair name or REPO:FILE (then the file and all its
    shards are downloaded and (path, path) is returned).
    """
    found = hub_spec(pair) if pair not in load_registry().pairs else None
    if found is not None:
        repo, filename = found
        names = shard_names(filename)
        _download([HubFile(repo, n, None) for n in names], f"localsidecar pull {repo}:{names[0]}")
        first = resolve_model_arg(f"{repo}:{names[0]}")
        return first, first
    spec = load_registry().pair(pair)
    tq = spec.target.quant(spec.default_quant if quant is None else quant).name
    dq = spec.draft.quant(spec.default_draft_quant if draft_quant is None else draft_quant).name
    wanted = [
        HubFile(model.repo, f, size)
        for model, q in ((spec.target, tq), (spec.draft, dq))
        if model.repo
        for f, size in zip(model.quant(q).files, model.quant(q).sizes)
    ]
    unique = list(dict.fromkeys(wanted))  # the same model in both roles is fetched once
    _download(unique, pull_command(spec.name, tq, dq))
    # Everything is local now: resolution derives what is derived, offline.
    return resolve_models(pair=spec.name, models_dir=models_dir, quant=tq, draft_quant=dq)  # type: ignore[return-value]


# --- status for `models` and `doctor` ------------------------------------------------------


def pair_status(
    spec: PairSpec, models_dir=None, quant: str | None = None, draft_quant: str | None = None
) -> dict[str, Any]:
    """Whether a pair can run offline now at the given (default) quantizations."""
    target = locate(spec.target, quant or spec.default_quant, models_dir)
    draft = locate(spec.draft, draft_quant or spec.default_draft_quant, models_dir)
    missing = [f for lf in (target, draft) if not lf.ready for f in lf.missing]
    notes = [
        f"{role} derived on first use" for role, lf in (("target", target), ("draft", draft)) if lf.derivable
    ]
    return {
        "pair": spec.name,
        "quant": target.quant.name,
        "draft_quant": draft.quant.name,
        "ready": not missing,
        "missing": missing,
        "note": "; ".join(notes),
        "target_path": str(target.first) if target.first else None,
        "draft_path": str(draft.first) if draft.first else None,
        "pull": pull_command(spec.name, target.quant.name, draft.quant.name),
        "install": _install_hint(spec) if missing else None,
    }


def _install_hint(spec: PairSpec) -> str | None:
    """The pip command that installs a package pair's model (None for hub pairs)."""
    from localsidecar.registry import embedded, gemma

    hints = {embedded.EMBEDDED_PACKAGE: embedded.INSTALL_HINT, gemma.GEMMA_PACKAGE: gemma.INSTALL_HINT}
    return next((hints[m.package] for m in (spec.target, spec.draft) if m.package in hints), None)


def model_rows(models_dir=None) -> list[dict[str, Any]]:
    """One row per registry model quantization with what is present locally."""
    rows = []
    for model in load_registry().models.values():
        for qf in model.quants.values():
            lf = locate(model, qf.name, models_dir)
            rows.append(
                {
                    "model": model.name,
                    "quant": qf.name,
                    "source": model.source,
                    "license": model.license,
                    "license_file": str(lf_path) if (lf_path := license_file(model)) else None,
                    "files": list(qf.files),
                    "size": qf.total_size,
                    "derived_from": qf.derived_from,
                    "present": lf.present,
                    "missing": lf.missing,
                    "local_size": lf.local_size(),
                    "path": str(lf.first) if lf.first else None,
                    "quant_variant": _quant_variant(model, qf, models_dir)
                    if qf.derived_from and not lf.present
                    else None,
                }
            )
    return rows


def _quant_variant(model: ModelSpec, qf: QuantFiles, models_dir) -> str | None:
    """A file of this derived quantization that `localsidecar quant` made in its own
    folder (MODELS_DIR/quant/<source stem>-<hash>/, localsidecar.lab.quant), or None."""
    from localsidecar.registry import embedded

    source = locate(model, qf.derived_from, models_dir).first
    if source is None:
        return None
    found = sorted(
        (embedded.models_dir(models_dir) / "quant").glob(
            f"{glob.escape(source.stem)}-*/{glob.escape(qf.files[0])}"
        )
    )
    return str(found[0]) if found else None
