"""Output files written whole or not at all.

Every writer that replaces a file (CSV tables, plots, --save-tokens) writes a
temporary file in the target's folder and renames it over the target only when
complete, so a failure, a full disk or an interrupt never leaves a half-written
file where a good one was. Invariants:
- the temporary file is `.NAME.XXXX.part` next to the target (same filesystem:
  the rename is atomic), removed on any failure, and also when the program is
  interrupted mid-write (interrupts.removed_on_exit);
- a symlink is followed: the file it points to is replaced, the link stays;
- a target that is not a regular file (/dev/null, a FIFO) is written in place:
  there is nothing to replace and renaming over it would destroy it;
- a replaced file keeps its permission bits; a new one gets 0o666 & ~umask.
"""

from __future__ import annotations

import csv
import json
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from localsidecar.errors import LocalsidecarError
from localsidecar.io.interrupts import Interruption, removed_on_exit


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", *, encoding: str | None = "utf-8",
                 newline: str | None = None) -> Iterator[IO]:
    """Open a temporary file for `mode` ("w" or "wb"); on a clean exit it is
    flushed, fsync'd and renamed over `path`; on an exception it is removed and
    `path` is left as it was. OSError becomes one-line LocalsidecarError."""
    encoding = None if "b" in mode else encoding
    try:
        if os.path.exists(path) and not os.path.isfile(path):  # /dev/null, /dev/stdout, a FIFO
            with open(path, mode, encoding=encoding, newline=newline) as f:
                yield f
            return
        target = Path(os.path.realpath(os.fspath(path)))
        perms = _mode_for(target)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    except OSError as exc:
        raise LocalsidecarError(f"cannot write {path}: {exc.strerror or exc}") from None
    with removed_on_exit(tmp):
        try:
            with os.fdopen(fd, mode, encoding=encoding, newline=newline) as f:
                yield f
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, perms)
            os.replace(tmp, target)
        except BaseException as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            if isinstance(exc, OSError):
                raise LocalsidecarError(f"cannot write {path}: {exc.strerror or exc}; "
                                        "the file was left as it was") from None
            raise


def write_csv(path: str | os.PathLike, columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> Path:
    """`columns` as the header, one line per row (missing or None values
    empty, extra keys ignored), replaced atomically. Returns `path`."""
    with atomic_write(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for row in rows:
            w.writerow({k: "" if row.get(k) is None else row[k] for k in columns})
    return Path(path)


class ReplacedJsonl:
    """A JSONL file rebuilt from scratch and renamed over `path` when closed.

    Lines of the existing file whose "id" is in `keep_ids` are copied first
    (documents a resumed run skips keep their lines). Closing after success or
    an interrupt keeps what was written; any other failure leaves the old file.
    """

    def __init__(self, path: str | os.PathLike, keep_ids: Iterable[str] = ()) -> None:
        self.path = os.fspath(path)
        keep = set(keep_ids)
        old = _read_jsonl_by_id(self.path, keep) if keep else []
        self._cm = atomic_write(self.path, "w")
        self._file = self._cm.__enter__()
        for line in old:
            self._file.write(line)

    def write(self, record: Mapping[str, Any]) -> None:
        try:
            self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        except OSError as exc:
            raise LocalsidecarError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def __enter__(self) -> ReplacedJsonl:
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc is None or isinstance(exc, (Interruption, KeyboardInterrupt)):
            self._cm.__exit__(None, None, None)
        else:
            self._cm.__exit__(exc_type, exc, tb)
        return False


def _read_jsonl_by_id(path: str, ids: set[str]) -> list[str]:
    """Lines of `path` (if readable) that are JSON objects with an id in `ids`."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and obj.get("id") in ids:
            out.append(line + "\n")
    return out
