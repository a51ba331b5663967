"""A small pure-Python GGUF header reader: no llama_cpp, no `gguf` package.

Also the one place for GGUF facts the rest of the package needs: the magic
check, split-shard naming and the table of quantization types.

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
from typing import Any, BinaryIO, NamedTuple

from .errors import BackendError

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32
MAX_DIMS = 4  # GGML_MAX_DIMS

# ggml tensor type id -> (name, elements per block, bytes per block)
GGML_TYPES: dict[int, tuple[str, int, int]] = {
    0: ("F32", 1, 4),
    1: ("F16", 1, 2),
    2: ("Q4_0", 32, 18),
    3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22),
    7: ("Q5_1", 32, 24),
    8: ("Q8_0", 32, 34),
    9: ("Q8_1", 32, 36),
    10: ("Q2_K", 256, 84),
    11: ("Q3_K", 256, 110),
    12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176),
    14: ("Q6_K", 256, 210),
    15: ("Q8_K", 256, 292),
    16: ("IQ2_XXS", 256, 66),
    17: ("IQ2_XS", 256, 74),
    18: ("IQ3_XXS", 256, 98),
    19: ("IQ1_S", 256, 50),
    20: ("IQ4_NL", 32, 18),
    21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82),
    23: ("IQ4_XS", 256, 136),
    24: ("I8", 1, 1),
    25: ("I16", 1, 2),
    26: ("I32", 1, 4),
    27: ("I64", 1, 8),
    28: ("F64", 1, 8),
    29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2),
    34: ("TQ1_0", 256, 54),
    35: ("TQ2_0", 256, 66),
    39: ("MXFP4", 32, 17),
}


class FileType(NamedTuple):
    """One llama_ftype (the `general.file_type` of a GGUF; llama.cpp's
    quantization names)."""

    name: str
    main_type: str  # the ggml type that holds most 2-D weights unless llama.cpp fell back
    quantizable: bool  # offered by `quantize`: needs no importance matrix or ternary model


# The one table of quantization types: llama_ftype id -> FileType.
FILE_TYPES: dict[int, FileType] = {
    0: FileType("F32", "F32", True),
    1: FileType("F16", "F16", True),
    2: FileType("Q4_0", "Q4_0", True),
    3: FileType("Q4_1", "Q4_1", True),
    7: FileType("Q8_0", "Q8_0", True),
    8: FileType("Q5_0", "Q5_0", True),
    9: FileType("Q5_1", "Q5_1", True),
    10: FileType("Q2_K", "Q2_K", True),
    11: FileType("Q3_K_S", "Q3_K", True),
    12: FileType("Q3_K_M", "Q3_K", True),
    13: FileType("Q3_K_L", "Q3_K", True),
    14: FileType("Q4_K_S", "Q4_K", True),
    15: FileType("Q4_K_M", "Q4_K", True),
    16: FileType("Q5_K_S", "Q5_K", True),
    17: FileType("Q5_K_M", "Q5_K", True),
    18: FileType("Q6_K", "Q6_K", True),
    19: FileType("IQ2_XXS", "IQ2_XXS", False),
    20: FileType("IQ2_XS", "IQ2_XS", False),
    21: FileType("Q2_K_S", "Q2_K", False),
    22: FileType("IQ3_XS", "IQ3_XXS", False),
    23: FileType("IQ3_XXS", "IQ3_XXS", False),
    24: FileType("IQ1_S", "IQ1_S", False),
    25: FileType("IQ4_NL", "IQ4_NL", True),
    26: FileType("IQ3_S", "IQ3_S", False),
    27: FileType("IQ3_M", "IQ3_S", False),
    28: FileType("IQ2_S", "IQ2_S", False),
    29: FileType("IQ2_M", "IQ2_S", False),
    30: FileType("IQ4_XS", "IQ4_XS", True),
    31: FileType("IQ1_M", "IQ1_M", False),
    32: FileType("BF16", "BF16", True),
    36: FileType("TQ1_0", "TQ1_0", False),
    37: FileType("TQ2_0", "TQ2_0", False),
    38: FileType("MXFP4_MOE", "MXFP4", False),
}
# name -> llama_ftype id of every type `quantize` offers, in id order
FTYPES: dict[str, int] = {ft.name: i for i, ft in FILE_TYPES.items() if ft.quantizable}
_BY_NAME: dict[str, FileType] = {ft.name: ft for ft in FILE_TYPES.values()}

# GGUF metadata value types: id -> struct format of a scalar (strings and
# arrays are handled separately).
_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9

# Metadata kept in GGUFInfo.metadata; other values are parsed and dropped
# (tokenizer arrays can hold hundreds of thousands of strings).
_KEEP_PREFIXES = ("general.", "split.")
_KEEP_SUFFIXES = (".context_length", ".embedding_length", ".block_count", ".vocab_size", ".sliding_window")

# A split model's shards: <prefix>-00001-of-00003.gguf ... -00003-of-00003.gguf
SPLIT_RE = re.compile(r"^(?P<prefix>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")


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
        known = FILE_TYPES.get(self.file_type)
        return known.name if known else f"FTYPE{self.file_type}"

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
        another type for most 2-D weights (K-quants need rows divisible by 256;
        docs/DESIGN.md, K-quant fallback).
        """
        dominant = self.dominant_type or "unknown"
        if not requested_quant:
            return self.file_type_name or dominant
        asked = requested_quant.upper()
        expected = _BY_NAME[asked].main_type if asked in _BY_NAME else asked
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

    SKIP_CHUNK = 1 << 20

    def skip_strings(self, count: int) -> None:
        """Skip `count` length-prefixed strings (a tokenizer's vocabulary: 50k-262k
        of them) reading the header in chunks, not one read and seek per string."""
        pos = self.f.tell()
        buf, base = b"", pos  # buf holds the file's bytes from offset `base`
        for _ in range(count):
            if pos + 8 > base + len(buf):
                base, buf = pos, self._chunk(pos)
                if len(buf) < 8:
                    raise self.fail("truncated header")
            (n,) = struct.unpack_from("<Q", buf, pos - base)
            pos += 8 + n
            if pos > self.size:
                raise self.fail("truncated header")
        self.f.seek(pos)

    def _chunk(self, pos: int) -> bytes:
        self.f.seek(pos)
        return self.f.read(self.SKIP_CHUNK)

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
            if etype == _STRING and not keep:
                self.skip_strings(count)
                return None
            items = [self.value(etype, keep) for _ in range(count)]
            return items if keep else None
        raise self.fail(f"unknown metadata value type {vtype}")


def _keep_key(key: str) -> bool:
    return key.startswith(_KEEP_PREFIXES) or key.endswith(_KEEP_SUFFIXES)


def _require_magic(head: bytes, path: Path) -> None:
    if head != GGUF_MAGIC:
        raise BackendError(f"not a GGUF model file: {path}")


def _unreadable(path: Path, exc: OSError) -> BackendError:
    return BackendError(f"cannot read model file {path}: {exc.strerror}")


def check_gguf_file(path: str | os.PathLike) -> Path:
    """Fail with one line unless `path` is a readable file that starts like a GGUF."""
    p = Path(path)
    if not p.exists():
        raise BackendError(f"model file not found: {p}")
    if not p.is_file():
        raise BackendError(f"model path is not a file: {p}")
    try:
        with open(p, "rb") as f:
            head = f.read(4)
    except OSError as exc:
        raise _unreadable(p, exc) from None
    _require_magic(head, p)
    return p


def _read_metadata(r: _Reader, n_kv: int) -> dict[str, Any]:
    """The kept metadata values (see _keep_key); the others are parsed and dropped."""
    meta: dict[str, Any] = {}
    for _ in range(n_kv):
        key = r.string()
        vtype = r.unpack("<I")
        keep = _keep_key(key)
        value = r.value(vtype, keep)
        if keep:
            meta[key] = value
    return meta


def _read_tensor_info(r: _Reader) -> TensorInfo:
    name = r.string()
    n_dims = r.unpack("<I")
    if n_dims > MAX_DIMS:
        raise r.fail(f"tensor {name} has {n_dims} dimensions")
    dims = tuple(r.unpack("<Q") for _ in range(n_dims))
    return TensorInfo(name, r.unpack("<I"), dims, r.unpack("<Q"))


def _check_data_inside(r: _Reader, meta: dict[str, Any], tensors: list[TensorInfo]) -> None:
    """Invariant: every tensor's data lies inside the file (the data section
    starts at the next multiple of general.alignment after the header)."""
    alignment = meta.get("general.alignment", DEFAULT_ALIGNMENT)
    if not isinstance(alignment, int) or alignment <= 0:
        raise r.fail(f"bad general.alignment {alignment!r}")
    data_start = -(-r.f.tell() // alignment) * alignment
    for t in tensors:
        end = data_start + t.offset + (t.n_bytes() or 0)
        if end > r.size:
            raise BackendError(
                f"GGUF file is truncated ({r.size} bytes, tensor {t.name} ends at {end}): {r.path}"
            )


def _read_one(path: Path) -> tuple[int, dict[str, Any], list[TensorInfo], int]:
    """(version, kept metadata, tensor infos, file size) of one GGUF file."""
    try:
        size = path.stat().st_size
        f = open(path, "rb")
    except OSError as exc:
        raise _unreadable(path, exc) from None
    with f:
        r = _Reader(f, path, size)
        _require_magic(f.read(4), path)
        version = r.unpack("<I")
        if version not in (2, 3):
            raise r.fail(f"unsupported GGUF version {version}")
        n_tensors, n_kv = r.unpack("<Q"), r.unpack("<Q")
        if n_tensors > size or n_kv > size:  # each entry takes at least one byte
            raise r.fail("truncated header")
        meta = _read_metadata(r, n_kv)
        tensors = [_read_tensor_info(r) for _ in range(n_tensors)]
        _check_data_inside(r, meta, tensors)
    return version, meta, tensors, size


def split_shard(name: str) -> tuple[int, int] | None:
    """(shard number, shard count) of a split model's file name, else None."""
    m = SPLIT_RE.match(name)
    return (int(m["no"]), int(m["count"])) if m else None


def shard_names(name: str) -> list[str]:
    """All shard names of the split model one shard `name` belongs to; [name]
    for a file that is not split."""
    m = SPLIT_RE.match(name)
    if not m:
        return [name]
    count = int(m["count"])
    return [f"{m['prefix']}-{i:05d}-of-{count:05d}.gguf" for i in range(1, count + 1)]


def shard_paths(path: Path) -> list[Path]:
    """All shards of a split model named by its first shard; [path] otherwise
    (llama.cpp loads a split model from its first shard)."""
    if (split_shard(path.name) or (1,))[0] != 1:
        return [path]
    return [path.with_name(n) for n in shard_names(path.name)]


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


def header_problem(path: str | os.PathLike) -> str | None:
    """What is wrong with the GGUF header of `path` (missing, truncated,
    malformed) in one line, or None when the header reads cleanly."""
    try:
        gguf_info(path)
    except Exception as exc:  # any failure to read the header is the answer, in one line
        return " ".join(str(exc).split()) or type(exc).__name__
    return None
