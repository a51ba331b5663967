"""A small pure-Python GGUF header reader: no llama_cpp, no `gguf` package.

It reads the header (version, metadata key/values, tensor infos) and checks
that every tensor's data lies inside the file, so a truncated download fails
here with one line instead of inside llama.cpp. For the first shard of a split
model (`-00001-of-0000N.gguf`) it reads every shard and sums them.

Layout (GGUF v2/v3, little endian): magic "GGUF", u32 version, u64 tensor
count, u64 metadata count, metadata (string key, u32 value type, value),
tensor infos (string name, u32 n_dims, u64 dims[n_dims], u32 ggml type, u64
offset), padding to `general.alignment` (default 32), tensor data.
"""

from __future__ import annotations

import os
import re
import struct
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from .errors import BackendError

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32
MAX_DIMS = 4  # GGML_MAX_DIMS

# ggml tensor type id -> (name, elements per block, bytes per block)
GGML_TYPES: dict[int, tuple[str, int, int]] = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 36),
    10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210), 15: ("Q8_K", 256, 292),
    16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74), 18: ("IQ3_XXS", 256, 98),
    19: ("IQ1_S", 256, 50), 20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82), 23: ("IQ4_XS", 256, 136), 24: ("I8", 1, 1),
    25: ("I16", 1, 2), 26: ("I32", 1, 4), 27: ("I64", 1, 8), 28: ("F64", 1, 8),
    29: ("IQ1_M", 256, 56), 30: ("BF16", 1, 2), 34: ("TQ1_0", 256, 54),
    35: ("TQ2_0", 256, 66), 39: ("MXFP4", 32, 17),
}

# llama_ftype (general.file_type) -> name
FILE_TYPES: dict[int, str] = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
    10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S",
    15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS",
    20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S",
    25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M",
    30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE",
}

# A requested quantization (llama.cpp's ftype names) -> the ggml type that
# should hold most of its 2-D weights when llama.cpp did not fall back.
MAIN_TYPE_OF_QUANT: dict[str, str] = {
    "F32": "F32", "F16": "F16", "FP16": "F16", "BF16": "BF16",
    "Q4_0": "Q4_0", "Q4_1": "Q4_1", "Q5_0": "Q5_0", "Q5_1": "Q5_1", "Q8_0": "Q8_0",
    "Q2_K": "Q2_K", "Q2_K_S": "Q2_K", "Q3_K_S": "Q3_K", "Q3_K_M": "Q3_K",
    "Q3_K_L": "Q3_K", "Q4_K_S": "Q4_K", "Q4_K_M": "Q4_K", "Q5_K_S": "Q5_K",
    "Q5_K_M": "Q5_K", "Q6_K": "Q6_K", "IQ2_XXS": "IQ2_XXS", "IQ2_XS": "IQ2_XS",
    "IQ2_S": "IQ2_S", "IQ2_M": "IQ2_S", "IQ3_XXS": "IQ3_XXS", "IQ3_XS": "IQ3_XXS",
    "IQ3_S": "IQ3_S", "IQ3_M": "IQ3_S", "IQ1_S": "IQ1_S", "IQ1_M": "IQ1_M",
    "IQ4_NL": "IQ4_NL", "IQ4_XS": "IQ4_XS", "TQ1_0": "TQ1_0", "TQ2_0": "TQ2_0",
}

# GGUF metadata value types: id -> struct format of a scalar (strings and
# arrays are handled separately).
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9

# Metadata kept in GGUFInfo.metadata; other values are parsed and dropped
# (tokenizer arrays can hold hundreds of thousands of strings).
_KEEP_PREFIXES = ("general.", "split.")
_KEEP_SUFFIXES = (".context_length", ".embedding_length", ".block_count", ".vocab_size")

SPLIT_RE = re.compile(r"^(?P<prefix>.*)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")


@dataclass(frozen=True)
class TensorInfo:
    name: str
    type_id: int
    dims: tuple[int, ...]
    offset: int  # relative to the start of the data section

    @property
    def type_name(self) -> str:
        known = GGML_TYPES.get(self.type_id)
        return known[0] if known else f"TYPE{self.type_id}"

    @property
    def n_elements(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n

    def n_bytes(self) -> int | None:
        """Bytes of the tensor's data; None for a type this reader does not know."""
        known = GGML_TYPES.get(self.type_id)
        if known is None:
            return None
        _, block, size = known
        return self.n_elements // block * size


@dataclass
class GGUFInfo:
    """Summary of one GGUF model (all shards of a split model)."""

    paths: list[Path]
    version: int
    architecture: str | None
    file_type: int | None  # general.file_type (llama_ftype), None if absent
    file_size: int  # bytes, all shards
    n_params: int  # elements of all tensors
    tensor_types: Counter  # ggml type name -> number of tensors
    weight_types: Counter  # ggml type name -> elements in 2-D tensors
    metadata: dict[str, Any] = field(default_factory=dict)
    tensors: list[TensorInfo] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return self.paths[0]

    @property
    def file_type_name(self) -> str | None:
        if self.file_type is None:
            return None
        return FILE_TYPES.get(self.file_type, f"FTYPE{self.file_type}")

    @property
    def bits_per_weight(self) -> float:
        return self.file_size * 8 / self.n_params if self.n_params else 0.0

    @property
    def dominant_type(self) -> str | None:
        """The ggml type holding most weights of 2-D tensors."""
        if not self.weight_types:
            return None
        return self.weight_types.most_common(1)[0][0]

    @property
    def dominant_share(self) -> float:
        total = sum(self.weight_types.values())
        return self.weight_types[self.dominant_type] / total if total else 0.0

    def real_label(self, requested_quant: str | None = None) -> str:
        """`requested_quant` when the file really is that, otherwise what it is.

        "Q2_K (really Q4_0 for 80% of weights)" when llama.cpp fell back to
        another type for most 2-D weights (K-quants need rows divisible by 256).
        """
        dominant = self.dominant_type or "unknown"
        if not requested_quant:
            return self.file_type_name or dominant
        asked = requested_quant.upper()
        expected = MAIN_TYPE_OF_QUANT.get(asked, asked)
        if dominant == expected:
            return asked
        return f"{asked} (really {dominant} for {self.dominant_share:.0%} of weights)"

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "shards": len(self.paths),
            "version": self.version,
            "architecture": self.architecture,
            "file_type": self.file_type_name,
            "file_size": self.file_size,
            "n_params": self.n_params,
            "bits_per_weight": round(self.bits_per_weight, 4),
            "dominant_type": self.dominant_type,
            "dominant_share": round(self.dominant_share, 4),
            "tensor_types": dict(self.tensor_types),
        }


class _Reader:
    """Reads a GGUF header; every short read is a truncated file (one line)."""

    def __init__(self, f: BinaryIO, path: Path, size: int):
        self.f, self.path, self.size = f, path, size

    def fail(self, why: str) -> BackendError:
        return BackendError(f"not a valid GGUF file ({why}): {self.path}")

    def read(self, n: int) -> bytes:
        if n < 0 or self.f.tell() + n > self.size:
            raise self.fail("truncated header")
        data = self.f.read(n)
        if len(data) != n:
            raise self.fail("truncated header")
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def skip(self, n: int) -> None:
        if n < 0 or self.f.tell() + n > self.size:
            raise self.fail("truncated header")
        self.f.seek(n, os.SEEK_CUR)

    def string(self) -> str:
        return self.read(self.unpack("<Q")).decode("utf-8", "replace")

    def skip_string(self) -> None:
        self.skip(self.unpack("<Q"))

    def value(self, vtype: int, keep: bool) -> Any:
        """Parse one metadata value; with keep=False skip it (None returned)."""
        if vtype in _SCALARS:
            fmt = _SCALARS[vtype]
            if not keep:
                self.skip(struct.calcsize(fmt))
                return None
            return self.unpack(fmt)
        if vtype == _STRING:
            if not keep:
                self.skip_string()
                return None
            return self.string()
        if vtype == _ARRAY:
            etype, count = self.unpack("<I"), self.unpack("<Q")
            if etype in _SCALARS and not keep:
                self.skip(count * struct.calcsize(_SCALARS[etype]))
                return None
            if count > self.size - self.f.tell():  # each element takes at least one byte
                raise self.fail("truncated header")
            items = [self.value(etype, keep) for _ in range(count)]
            return items if keep else None
        raise self.fail(f"unknown metadata value type {vtype}")


def _keep_key(key: str) -> bool:
    return key.startswith(_KEEP_PREFIXES) or key.endswith(_KEEP_SUFFIXES)


def _read_one(path: Path) -> tuple[int, dict[str, Any], list[TensorInfo], int]:
    """(version, kept metadata, tensor infos, file size) of one GGUF file."""
    try:
        size = path.stat().st_size
        f = open(path, "rb")
    except OSError as exc:
        raise BackendError(f"cannot read model file {path}: {exc.strerror}") from None
    with f:
        r = _Reader(f, path, size)
        if size < 4 or f.read(4) != GGUF_MAGIC:
            raise BackendError(f"not a GGUF model file: {path}")
        version = r.unpack("<I")
        if version not in (2, 3):
            raise r.fail(f"unsupported GGUF version {version}")
        n_tensors, n_kv = r.unpack("<Q"), r.unpack("<Q")
        if n_tensors > size or n_kv > size:  # each entry takes at least one byte
            raise r.fail("truncated header")
        meta: dict[str, Any] = {}
        for _ in range(n_kv):
            key = r.string()
            vtype = r.unpack("<I")
            keep = _keep_key(key)
            value = r.value(vtype, keep)
            if keep:
                meta[key] = value
        tensors = []
        for _ in range(n_tensors):
            name = r.string()
            n_dims = r.unpack("<I")
            if n_dims > MAX_DIMS:
                raise r.fail(f"tensor {name} has {n_dims} dimensions")
            dims = tuple(r.unpack("<Q") for _ in range(n_dims))
            tensors.append(TensorInfo(name, r.unpack("<I"), dims, r.unpack("<Q")))
        alignment = meta.get("general.alignment", DEFAULT_ALIGNMENT)
        if not isinstance(alignment, int) or alignment <= 0:
            raise r.fail(f"bad general.alignment {alignment!r}")
        data_start = -(-f.tell() // alignment) * alignment
        # Invariant checked here: every tensor's data lies inside the file.
        for t in tensors:
            nbytes = t.n_bytes()
            end = data_start + t.offset + (nbytes or 0)
            if end > size:
                raise BackendError(f"GGUF file is truncated ({size} bytes, tensor {t.name} ends at {end}): {path}")
    return version, meta, tensors, size


def shard_paths(path: Path) -> list[Path]:
    """All shards of a split model named by its first shard; [path] otherwise."""
    m = SPLIT_RE.match(path.name)
    if not m or int(m["no"]) != 1:
        return [path]
    count = int(m["count"])
    return [path.with_name(f"{m['prefix']}-{i:05d}-of-{count:05d}.gguf") for i in range(1, count + 1)]


def gguf_info(path: str | os.PathLike) -> GGUFInfo:
    """Read and summarize a GGUF model; a first shard brings in all its shards.

    Raises BackendError (one line) for a missing, non-GGUF or truncated file.
    """
    paths = shard_paths(Path(path))
    for p in paths:
        if not p.is_file():
            raise BackendError(f"model file not found: {p}")
    version, meta, tensors, total = 0, {}, [], 0
    for p in paths:
        v, m, t, size = _read_one(p)
        version = version or v
        for key, value in m.items():
            meta.setdefault(key, value)  # the first shard's header wins
        tensors.extend(t)
        total += size
    tensor_types: Counter = Counter(t.type_name for t in tensors)
    weight_types: Counter = Counter()
    for t in tensors:
        if len(t.dims) == 2:
            weight_types[t.type_name] += t.n_elements
    file_type = meta.get("general.file_type")
    return GGUFInfo(
        paths=paths,
        version=version,
        architecture=meta.get("general.architecture"),
        file_type=file_type if isinstance(file_type, int) else None,
        file_size=total,
        n_params=sum(t.n_elements for t in tensors),
        tensor_types=tensor_types,
        weight_types=weight_types,
        metadata=meta,
        tensors=tensors,
    )
