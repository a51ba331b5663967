"""Resumable JSONL result files (`--out FILE.jsonl`).

Invariants of a file written by ResultWriter:
- Every line is one complete JSON object with a string "id" and a string
  "config" (the fingerprint of the run's configuration), ending in "\\n".
- A line is written with one fsync'd append while SIGINT/SIGTERM are blocked, so
  only SIGKILL or a power loss can leave a partial last line; the next open
  removes that fragment (and says so) and touches nothing else.
- A file holding records of another configuration, or lines that are not
  result records, is never modified unless overwrite=True; even then it is
  emptied only when the first new record is written, so a run that fails
  before finishing a document (bad model, document too long) leaves it as it was.
- One writer per file at a time (advisory lock where the platform has flock).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
from contextlib import contextmanager
from typing import Any, Mapping

from localsidecar.errors import LocalsidecarError

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows
    fcntl = None

FINGERPRINT_HEX_CHARS = 16


def _json_default(value: Any) -> Any:
    """numpy scalars/arrays and path-like values, which records commonly carry."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "__fspath__"):
        return os.fspath(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


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
    """Whether `chunk` can be a cut-off prefix of one of our lines: blank, or starting
    like an object without being valid JSON. Anything else is someone else's data."""
    stripped = chunk.strip()
    if not stripped:
        return True
    if not stripped.startswith(b"{"):
        return False
    try:
        json.loads(stripped)
    except (ValueError, RecursionError):
        return True
    return False


@contextmanager
def _signals_blocked():
    """Defer SIGINT/SIGTERM (their Python handlers run after the block)."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class ResultWriter:
    """Append-only JSONL result file for one configuration.

    Opening validates the file and collects `done_ids` (records of this
    configuration already there); `records()` reads them back; `write` appends
    one record. Use as a context manager or call `close()`.
    """

    def __init__(self, path: str | os.PathLike, config: Mapping[str, Any] | str,
                 *, overwrite: bool = False) -> None:
        self.path = os.fspath(path)
        self.fingerprint = config if isinstance(config, str) else config_fingerprint(config)
        self.notes: list[str] = []  # one line per repair made on open
        self.written = 0  # records appended by this writer
        self._done: set[str] = set()
        self._fd: int | None = None
        self._truncate_pending = overwrite  # emptied by the first write()
        fd = self._open_locked()
        try:
            self._size = 0 if overwrite else self._load_existing(fd)
            os.fsync(fd)
        except OSError as exc:
            os.close(fd)
            raise LocalsidecarError(f"{self.path}: cannot prepare result file ({exc.strerror or exc})") from None
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    @property
    def done_ids(self) -> frozenset[str]:
        """Ids with a record of this configuration in the file (including ones written now)."""
        return frozenset(self._done)

    def write(self, record: Mapping[str, Any]) -> None:
        """Append `record` (plus "config") as one line, flushed and fsync'd. If a
        signal arrives meanwhile, its handler runs after the line is complete."""
        if self._fd is None:
            raise ValueError(f"{self.path}: result writer is closed")
        record_id = record.get("id")
        if not isinstance(record_id, str):
            raise ValueError("a result record needs a string 'id'")
        if record.get("config", self.fingerprint) != self.fingerprint:
            raise ValueError(f"record {record_id!r} carries a different config fingerprint")
        line = _encode_line({**record, "config": self.fingerprint})
        with _signals_blocked():
            try:
                if self._truncate_pending:
                    os.ftruncate(self._fd, 0)
                    self._truncate_pending = False
                _write_all(self._fd, line)
                os.fsync(self._fd)
            except OSError as exc:
                self._undo_partial_write()
                raise LocalsidecarError(f"{self.path}: cannot write results ({exc.strerror or exc}); "
                                "the lines already in it are intact") from None
            # Bookkeeping stays inside the blocked section: a handler that raises
            # must not find the line written but not counted.
            self._size += len(line)
            self._done.add(record_id)
            self.written += 1

    def records(self) -> list[dict]:
        """The records of this configuration now in the file, in file order
        (none from before an overwrite)."""
        if self._fd is None:
            raise ValueError(f"{self.path}: result writer is closed")
        if self._truncate_pending:
            return []
        data = _read_all(self._fd)[: self._size]
        return [r for r in map(_parse_record, data.split(b"\n")) if r is not None and r["config"] == self.fingerprint]

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # also releases the lock

    def __enter__(self) -> "ResultWriter":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _open_locked(self) -> int:
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.path, flags, 0o666)
        except OSError as exc:
            raise LocalsidecarError(f"{self.path}: cannot open for writing ({exc.strerror or exc})") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a device or FIFO cannot be resumed
            os.close(fd)
            raise LocalsidecarError(f"{self.path} is not a regular file; --out needs a file")
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise LocalsidecarError(f"{self.path} is being written by another run; "
                                "wait for it or use another --out") from None
            except OSError:
                pass  # filesystem without locks: go on unlocked
        return fd

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
                raise LocalsidecarError(f"{self.path}:{lineno} is not a localsidecar result record; "
                                "use --overwrite or another --out")
        if not _is_crash_fragment(fragment):
            raise LocalsidecarError(f"{self.path} does not end in a result record; "
                            "use --overwrite or another --out")
        others = sorted({r["config"] for r in records} - {self.fingerprint})
        if others:
            raise LocalsidecarError(f"{self.path} holds results of a different configuration "
                            f"(config {', '.join(others)} in the file, {self.fingerprint} for this run); "
                            "use --overwrite or another --out")
        if keep_end < len(data):
            os.ftruncate(fd, keep_end)
            self.notes.append(f"{self.path}: removed an incomplete last line "
                              f"({len(data) - keep_end} bytes) left by an interrupted run")
        self._done.update(r["id"] for r in records)
        return keep_end

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
        view = view[os.write(fd, view):]
