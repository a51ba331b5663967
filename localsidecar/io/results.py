"""Resumable JSONL result files (`--out FILE.jsonl`).

Invariants of a file written by ResultWriter:
- Every line is one complete JSON object with a string "id" and a string
  "config" (the fingerprint of the run's configuration), ending in "\\n". The
  first line each writer appends also carries "settings", the configuration
  itself, so a refusal can say what differs (`records()` leaves it out).
- A line is written with one fsync'd append inside interrupts.critical (no
  signal handler runs meanwhile), so only SIGKILL or a power loss can leave a
  partial last line; the next open removes that fragment (and says so) and
  touches nothing else. A last record that is complete but lacks its "\\n"
  (an editor saved it so) gets the newline back.
- A file holding records of another configuration, or lines that are not
  result records, is never modified unless overwrite=True; even then it is
  emptied only when the first new record is written, so a run that fails
  before finishing a document (bad model, document too long) leaves it as it was.
  The refusal names what differs and offers a new --out name before
  --overwrite, which it says deletes the results.
- Models enter a configuration by content (`model_identity`), never by the
  path string, so the same file named another way resumes.
- One writer per file at a time (advisory lock where the platform has flock).
- `text_hashes`: id -> the record's "text_sha256" (records of older versions
  have none: their ids are trusted as before).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from localsidecar.errors import LocalsidecarError
from localsidecar.io.atomic import open_locked
from localsidecar.io.interrupts import critical

FINGERPRINT_HEX_CHARS = 16
SETTINGS_KEY = "settings"
TEXT_HASH_KEY = "text_sha256"
IDENTITY_BYTES = 1 << 20  # hashed from each end of a model file
MAX_DIFFERENCES_SHOWN = 3


def _json_default(value: Any) -> Any:
    """numpy scalars/arrays and path-like values, which records commonly carry."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "__fspath__"):
        return os.fspath(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def model_identity(path: str | os.PathLike | None) -> dict | None:
    """A model file by content: its size and a sha256 of its first and last
    MiB (header, tensor table and the last tensor bytes), without the path, so
    `../pair/target.gguf` and its absolute path are the same model; a
    requantized or re-downloaded file differs."""
    if path is None:
        return None
    p = Path(path)
    try:
        size = p.stat().st_size
        h = hashlib.sha256()
        with open(p, "rb") as f:
            h.update(f.read(IDENTITY_BYTES))
            f.seek(max(0, size - IDENTITY_BYTES))
            h.update(f.read(IDENTITY_BYTES))
    except OSError as exc:
        raise LocalsidecarError(f"cannot read model file {p}: {exc.strerror or exc}") from None
    return {"size": size, "sha256_ends": h.hexdigest()[:16]}


def config_fingerprint(config: Mapping[str, Any]) -> str:
    """sha256 prefix of the canonical JSON of `config`: equal dicts (any key order,
    tuples as lists) give equal fingerprints."""
    blob = json.dumps(config, sort_keys=True, separators=(",", ":"), default=_json_default)
    return hashlib.sha256(blob.encode("ascii")).hexdigest()[:FINGERPRINT_HEX_CHARS]


def _encode_line(record: Mapping[str, Any]) -> bytes:
    try:
        text = json.dumps(record, ensure_ascii=False, default=_json_default)
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: \u-escaped output is still valid JSON
        return (json.dumps(record, default=_json_default) + "\n").encode("ascii")


def _parse_record(line: bytes) -> dict | None:
    """The record on `line`, or None if it is not a result record."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if isinstance(obj, dict) and isinstance(obj.get("id"), str) and isinstance(obj.get("config"), str):
        return obj
    return None


def _is_crash_fragment(chunk: bytes) -> bool:
    """Whether `chunk` can be a cut-off prefix of one of our lines: blank, or
    the start of a JSON object that a kill cut short (a text some JSON object
    begins with, not itself valid JSON). Anything else is someone else's
    data: `{my note: keep}` is no prefix of any JSON text."""
    stripped = chunk.strip()
    if not stripped:
        return True
    try:
        text = stripped.decode("utf-8")
    except UnicodeDecodeError as exc:  # a kill may cut a character in two
        if exc.end < len(stripped) - 3:
            return False
        text = stripped[: exc.start].decode("utf-8")
    return text.startswith("{") and _json_prefix(text)


_LITERALS = ("true", "false", "null")
_NUMBER_PREFIX = re.compile(r"-?(0|[1-9]\d*)?(\.\d*)?([eE][+-]?\d*)?")


def _json_prefix(text: str) -> bool:
    """Whether some text appended to `text` makes valid JSON, while `text`
    itself is not: the parser stops only at its end (after closing a cut
    string, literal or number where the end cut one)."""
    for _ in range(text.count('"') + 2):
        try:
            json.loads(text)
            return False  # complete: not a fragment
        except json.JSONDecodeError as exc:
            pos, msg = exc.pos, exc.msg
        except RecursionError:
            return False
        if pos >= len(text):
            return True
        tail = text[pos:]
        if msg.startswith("Unterminated string"):
            if "\n" in tail:  # JSON strings never hold a raw newline
                return False
            text = text[:pos] + '""'  # the cut string, closed where it began
            continue
        m = _NUMBER_PREFIX.fullmatch(tail)
        if (m and tail) or any(lit.startswith(tail) for lit in _LITERALS):
            return True  # a cut number or literal
        return False
    return False


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """{"spec.temperature": 0.0, ...}: nested mappings as dotted keys."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1] or "config": value}


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=_json_default)
    return text if len(text) <= 40 else text[:37] + "..."


def describe_difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """'mode "rebased" in the file, "baseline" now; ...' (at most a few keys)."""
    a, b = (
        _flatten(json.loads(json.dumps(old, default=_json_default))),
        _flatten(json.loads(json.dumps(new, default=_json_default))),
    )
    keys = [k for k in dict.fromkeys([*a, *b]) if a.get(k, "(absent)") != b.get(k, "(absent)")]
    parts = [
        f"{k} {_short(a.get(k, '(absent)'))} in the file, {_short(b.get(k, '(absent)'))} now"
        for k in keys[:MAX_DIFFERENCES_SHOWN]
    ]
    if len(keys) > MAX_DIFFERENCES_SHOWN:
        parts.append(f"{len(keys) - MAX_DIFFERENCES_SHOWN} more")
    return "; ".join(parts)


def free_name(path: str) -> str:
    """`acc-2.jsonl`, `acc-3.jsonl`, ...: the first name next to `path` not taken."""
    p = Path(path)
    n = 2
    while (candidate := p.with_name(f"{p.stem}-{n}{p.suffix}")).exists():
        n += 1
    return str(candidate)


class ResultWriter:
    """Append-only JSONL result file for one configuration.

    Opening validates the file and collects `done_ids` (records of this
    configuration already there); `records()` reads them back; `write` appends
    one record. Use as a context manager or call `close()`.
    """

    def __init__(
        self, path: str | os.PathLike, config: Mapping[str, Any] | str, *, overwrite: bool = False
    ) -> None:
        self.path = os.fspath(path)
        self.fingerprint = config if isinstance(config, str) else config_fingerprint(config)
        self.settings = None if isinstance(config, str) else config
        self.notes: list[str] = []  # one line per repair made on open
        self.written = 0  # records appended by this writer
        self._done: set[str] = set()
        self._hashes: dict[str, str] = {}
        self._fd: int | None = None
        self._truncate_pending = overwrite  # emptied by the first write()
        fd = self._open_locked()
        try:
            self._size = 0 if overwrite else self._load_existing(fd)
            os.fsync(fd)
        except OSError as exc:
            os.close(fd)
            raise LocalsidecarError(
                f"{self.path}: cannot prepare result file ({exc.strerror or exc})"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    @property
    def done_ids(self) -> frozenset[str]:
        """Ids with a record of this configuration in the file (including ones written now)."""
        return frozenset(self._done)

    @property
    def text_hashes(self) -> dict[str, str]:
        """Id -> "text_sha256" of the records that carry one."""
        return dict(self._hashes)

    def write(self, record: Mapping[str, Any]) -> None:
        """Append `record` (plus "config") as one line, flushed and fsync'd. A
        signal that arrives meanwhile is handled after the line is complete."""
        if self._fd is None:
            raise ValueError(f"{self.path}: result writer is closed")
        record_id = record.get("id")
        if not isinstance(record_id, str):
            raise ValueError("a result record needs a string 'id'")
        if record.get("config", self.fingerprint) != self.fingerprint:
            raise ValueError(f"record {record_id!r} carries a different config fingerprint")
        full = {**record, "config": self.fingerprint}
        if self.written == 0 and self.settings is not None:
            full[SETTINGS_KEY] = self.settings  # what a refusal compares against
        line = _encode_line(full)
        with critical():
            try:
                if self._truncate_pending:
                    os.ftruncate(self._fd, 0)
                    self._truncate_pending = False
                _write_all(self._fd, line)
                os.fsync(self._fd)
            except OSError as exc:
                self._undo_partial_write()
                raise LocalsidecarError(
                    f"{self.path}: cannot write results ({exc.strerror or exc}); "
                    "the lines already in it are intact"
                ) from None
            # Bookkeeping stays inside the blocked section: a handler that raises
            # must not find the line written but not counted.
            self._size += len(line)
            self._done.add(record_id)
            self._note_hash(full)
            self.written += 1

    def records(self) -> list[dict]:
        """The records of this configuration now in the file, in file order
        (none from before an overwrite)."""
        if self._fd is None:
            raise ValueError(f"{self.path}: result writer is closed")
        if self._truncate_pending:
            return []
        data = _read_all(self._fd)[: self._size]
        return [
            {k: v for k, v in r.items() if k != SETTINGS_KEY}
            for r in map(_parse_record, data.split(b"\n"))
            if r is not None and r["config"] == self.fingerprint
        ]

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # also releases the lock

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _open_locked(self) -> int:
        return open_locked(
            self.path,
            "use another --out",
            cannot_open="{path}: cannot open for writing ({reason})",
            regular_only="{path} is not a regular file; --out needs a file",
        )

    def _load_existing(self, fd: int) -> int:
        """Validate the file, fill done_ids, cut a crash fragment; return the new size.
        Raises LocalsidecarError before changing anything if the file is not ours to extend."""
        data = _read_all(fd)
        complete_end = data.rfind(b"\n") + 1
        lines = data[:complete_end].split(b"\n")[:-1]
        keep_end = complete_end
        fragment = data[complete_end:]
        records = []
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            record = _parse_record(line)
            if record is not None:
                records.append(record)
            elif lineno == len(lines) and not fragment and _is_crash_fragment(line):
                keep_end -= len(line) + 1
                fragment = line + b"\n"
            else:
                raise LocalsidecarError(
                    f"{self.path}:{lineno} is not a localsidecar result record; "
                    f"{self._alternatives('replace the file (its contents are deleted)')}"
                )
        unterminated = _parse_record(fragment) if fragment.strip() else None
        if unterminated is not None:
            records.append(unterminated)  # complete, only its final newline is missing
        elif not _is_crash_fragment(fragment):
            raise LocalsidecarError(
                f"{self.path} does not end in a result record; "
                f"{self._alternatives('replace the file (its contents are deleted)')}"
            )
        self._refuse_other_configs(records)
        self._done.update(r["id"] for r in records)
        for r in records:
            self._note_hash(r)
        if unterminated is not None:
            with critical():
                _write_all(fd, b"\n")  # O_APPEND: after the record, nothing else moves
            self.notes.append(f"{self.path}: added the newline missing after its last record")
            return len(data) + 1
        if keep_end < len(data):
            os.ftruncate(fd, keep_end)
            self.notes.append(
                f"{self.path}: removed an incomplete last line "
                f"({len(data) - keep_end} bytes) left by an interrupted run"
            )
        return keep_end

    def _note_hash(self, record: Mapping[str, Any]) -> None:
        if isinstance(record.get(TEXT_HASH_KEY), str):
            self._hashes[record["id"]] = record[TEXT_HASH_KEY]

    def _refuse_other_configs(self, records: list[dict]) -> None:
        """One line saying what differs, if any record is of another configuration."""
        others = [r for r in records if r["config"] != self.fingerprint]
        if not others:
            return
        old = next((r[SETTINGS_KEY] for r in others if isinstance(r.get(SETTINGS_KEY), Mapping)), None)
        what = (
            describe_difference(old, self.settings) if old is not None and self.settings is not None else ""
        )
        if not what:  # written by an older version: only the fingerprints are known
            what = f"config {', '.join(sorted({r['config'] for r in others}))} in the file, {self.fingerprint} now"
        raise LocalsidecarError(
            f"{self.path} holds results of a different configuration ({what}); "
            + self._alternatives(f"delete its {len(records)} results and start over")
        )

    def _alternatives(self, overwrite_does: str) -> str:
        return f"use another --out (e.g. {free_name(self.path)}), or --overwrite to {overwrite_does}"

    def _undo_partial_write(self) -> None:
        try:
            os.ftruncate(self._fd, self._size)
        except OSError:
            pass  # the next open removes the fragment


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
