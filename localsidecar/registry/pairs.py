"""The registry of named draft/target pairs (pairs.toml, package data of
localsidecar.registry): dataclasses, validation, loading.

Invariants enforced by parse_registry are stated at the top of pairs.toml.
Pure data: nothing here touches the network, the hub cache or llama.cpp.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from localsidecar.backend.gguf import split_shard
from localsidecar.errors import LocalsidecarError

REGISTRY_PACKAGE = "localsidecar.registry"
REGISTRY_FILE = "pairs.toml"


@dataclass(frozen=True)
class QuantFiles:
    """Files of one quantization of a model; files[0] is the one to load."""

    name: str
    files: tuple[str, ...]
    sizes: tuple[int, ...]
    derived_from: str | None = None  # made locally from this shipped quantization

    @property
    def total_size(self) -> int:
        return sum(self.sizes)


@dataclass(frozen=True)
class ModelSpec:
    name: str
    license: str
    repo: str | None  # hub repository id, or None
    package: str | None  # Python package shipping the file, or None
    quants: dict[str, QuantFiles]

    @property
    def source(self) -> str:
        return self.repo if self.repo else f"package {self.package}"

    def quant(self, name: str) -> QuantFiles:
        key = name.upper()
        if key not in self.quants:
            raise LocalsidecarError(
                f"unknown quantization {name!r} for {self.name}; choose from {', '.join(self.quants)}"
            )
        return self.quants[key]


@dataclass(frozen=True)
class PairSpec:
    name: str
    description: str
    target: ModelSpec
    draft: ModelSpec
    default_quant: str
    default_draft_quant: str


@dataclass(frozen=True)
class Registry:
    pairs: dict[str, PairSpec]
    models: dict[str, ModelSpec]

    def pair(self, name: str) -> PairSpec:
        if name not in self.pairs:
            raise LocalsidecarError(f"unknown pair {name!r}; choose from {', '.join(self.pairs)}")
        return self.pairs[name]


def _bad(why: str) -> LocalsidecarError:
    return LocalsidecarError(f"the model registry {REGISTRY_FILE} is invalid: {why}")


def _parse_quant(model: str, name: str, raw: Any) -> QuantFiles:
    where = f"{model} {name}"
    if name != name.upper():
        raise _bad(f"{where}: quantization names are upper case")
    if not isinstance(raw, dict):
        raise _bad(f"{where}: expected a table")
    files, sizes = raw.get("files"), raw.get("sizes")
    if (
        not isinstance(files, list)
        or not files
        or not all(isinstance(f, str) and f.endswith(".gguf") for f in files)
    ):
        raise _bad(f"{where}: `files` must list .gguf file names")
    if (
        not isinstance(sizes, list)
        or len(sizes) != len(files)
        or not all(isinstance(s, int) and s > 0 for s in sizes)
    ):
        raise _bad(f"{where}: `sizes` must give one positive byte count per file")
    if len(files) > 1:
        for i, f in enumerate(files, 1):
            if split_shard(f) != (i, len(files)):
                raise _bad(f"{where}: shard {f} is not part {i} of {len(files)}")
    derived = raw.get("derived_from")
    if derived is not None and not isinstance(derived, str):
        raise _bad(f"{where}: `derived_from` names a quantization")
    return QuantFiles(name, tuple(files), tuple(sizes), derived)


def parse_registry(data: dict[str, Any]) -> Registry:
    """Validate the registry's TOML data (see pairs.toml for the invariants)."""
    if data.get("schema") != 1:
        raise _bad(f"unsupported schema {data.get('schema')!r}")
    models: dict[str, ModelSpec] = {}
    for name, raw in (data.get("models") or {}).items():
        repo, package = raw.get("repo"), raw.get("package")
        if bool(repo) == bool(package):
            raise _bad(f"model {name} needs exactly one of `repo` or `package`")
        quants = {q: _parse_quant(name, q, r) for q, r in (raw.get("quants") or {}).items()}
        for q in quants.values():
            src = quants.get(q.derived_from) if q.derived_from else None
            if q.derived_from and (src is None or src.derived_from):
                raise _bad(
                    f"{name} {q.name} is derived from {q.derived_from}, which is not a shipped quantization"
                )
        if not any(not q.derived_from for q in quants.values()):
            raise _bad(f"model {name} ships no quantization")
        models[name] = ModelSpec(name, str(raw.get("license", "unknown")), repo, package, quants)
    pairs: dict[str, PairSpec] = {}
    for name, raw in (data.get("pairs") or {}).items():
        roles = {}
        for role in ("target", "draft"):
            if raw.get(role) not in models:
                raise _bad(f"pair {name}: {role} {raw.get(role)!r} is not a model of the registry")
            roles[role] = models[raw[role]]
        quant, draft_quant = raw.get("default_quant"), raw.get("default_draft_quant")
        if quant not in roles["target"].quants or draft_quant not in roles["draft"].quants:
            raise _bad(f"pair {name}: default quantizations must be offered by its models")
        pairs[name] = PairSpec(
            name, str(raw.get("description", "")), roles["target"], roles["draft"], quant, draft_quant
        )
    if not pairs:
        raise _bad("no pairs")
    return Registry(pairs, models)


@lru_cache(maxsize=1)
def load_registry() -> Registry:
    """The registry shipped with the package (package data of localsidecar.registry)."""
    try:
        text = (resources.files(REGISTRY_PACKAGE) / REGISTRY_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LocalsidecarError(
            f"the model registry {REGISTRY_FILE} is not installed; reinstall localsidecar"
        ) from None
    try:
        return parse_registry(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise _bad(str(exc)) from None
