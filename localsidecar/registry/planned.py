"""The model files a command's pair arguments resolve to, found before
anything runs: resolve_models without its side effects (no derivation, no
assembly, no download), for checking the command's outputs against them."""

from __future__ import annotations

import os
from pathlib import Path

from localsidecar.backend.gguf import shard_names
from localsidecar.errors import LocalsidecarError
from localsidecar.registry.models import (
    DEFAULT_PAIR,
    HUB_SPEC_RE,
    ModelSpec,
    cached_hub_file,
    hub_spec,
    load_registry,
    locate,
)


def planned_files(
    pair=None, target=None, draft=None, models_dir=None, quant=None, draft_quant=None
) -> list[Path]:
    """The files `resolve_models` with these arguments (the same, as it types
    them) reads, derives or assembles (a derived draft's source too), found without writing,
    deriving or downloading anything: a file still to be derived or assembled
    is named where it will be. Files it cannot name yet (not downloaded, an
    unknown pair) are left out: resolution reports them. For checking a
    command's outputs against its inputs before anything runs."""
    if pair is None and target is None and draft is None:
        pair = DEFAULT_PAIR
    found: list[Path] = []
    try:
        for given in (target, draft):
            if given is not None:
                found.extend(_planned_arg(given))
        if pair is not None:
            spec = load_registry().pair(pair)
            roles = (
                (spec.target, quant or spec.default_quant, target),
                (spec.draft, draft_quant or spec.default_draft_quant, draft),
            )
            for model, q, given in roles:
                if given is None:
                    found.extend(_planned_registry(model, q, models_dir))
    except LocalsidecarError:
        pass
    return list(dict.fromkeys(found))


def _planned_arg(spec: str | os.PathLike) -> list[Path]:
    local = Path(os.fspath(spec)).expanduser()
    if local.exists() or not HUB_SPEC_RE.match(os.fspath(spec)):
        return [local]
    repo, filename = hub_spec(os.fspath(spec)) or ("", "")
    return [p for f in shard_names(filename) if repo and (p := cached_hub_file(repo, f)) is not None]


def _planned_registry(model: ModelSpec, quant: str, models_dir) -> list[Path]:
    from localsidecar.registry import embedded, gemma

    qf = model.quant(quant)
    found = locate(model, quant, models_dir)
    paths = [p for p in found.paths if p is not None]
    if found.present or model.repo:
        return paths
    if qf.derived_from:
        return [
            *_planned_registry(model, qf.derived_from, models_dir),
            embedded.models_dir(models_dir) / qf.files[0],
        ]
    if model.package == gemma.GEMMA_PACKAGE:
        return [gemma.assembled_path(embedded.models_dir(models_dir))]
    return paths
