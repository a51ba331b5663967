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
- a replaced file keeps its permission bits and, where this process may set
  them (root, or a group it is in), its owner and group; a new one gets
  0o666 & ~umask.
AppendedJsonl is the exception, a file that grows with a resumable --out
(--save-tokens with --out): see its docstring.
"""

from __future__ import annotations

import csv
import json
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from glob import escape as glob_escape
from pathlib import Path
from typing import IO, Any

from localsidecar.errors import LocalsidecarError
from localsidecar.io.interrupts import Interruption, removed_on_exit

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows
    fcntl = None


def _owner_of(target: Path) -> tuple[int, int] | None:
    try:
        st = target.stat()
    except FileNotFoundError:
        return None
    return st.st_uid, st.st_gid


def _keep_owner(tmp: str, owner: tuple[int, int] | None) -> None:
    """Give the temporary file the replaced file's owner and group, as far as allowed."""
    if owner is None or not hasattr(os, "chown"):
        return
    st = os.stat(tmp)
    if (st.st_uid, st.st_gid) == owner:
        return
    for uid, gid in (owner, (-1, owner[1])):
        try:
            os.chown(tmp, uid, gid)
            return
        except PermissionError:
            continue


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextmanager
def atomic_write(
    path: str | os.PathLike, mode: str = "w", *, encoding: str | None = "utf-8", newline: str | None = None
) -> Iterator[IO]:
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
        owner = _owner_of(target)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    except OSError as exc:
        raise LocalsidecarError(f"cannot write {path}: {exc.strerror or exc}") from None
    with removed_on_exit(tmp):
        try:
            with os.fdopen(fd, mode, encoding=encoding, newline=newline) as f:
                yield f
                f.flush()
                os.fsync(f.fileno())
            _keep_owner(tmp, owner)
            os.chmod(tmp, perms)  # after chown, which may clear set-id bits
            os.replace(tmp, target)
        except BaseException as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            if isinstance(exc, OSError):
                raise LocalsidecarError(
                    f"cannot write {path}: {exc.strerror or exc}; the file was left as it was"
                ) from None
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


def open_locked(
    path: str,
    what: str,
    *,
    cannot_open: str = "cannot write {path}: {reason}",
    regular_only: str | None = None,
) -> int:
    """An O_APPEND read-write descriptor of `path` (created if missing), held
    under an exclusive advisory lock where the platform has flock.

    `what`: the way out a busy file's message offers ("use another --out").
    `cannot_open`: the message when the open fails ({path}, {reason}).
    `regular_only`: if given, the message for a path that is not a regular file
    (closed, refused); otherwise such a path (/dev/null) is returned unlocked.
    A filesystem without locks is used unlocked."""
    flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        raise LocalsidecarError(cannot_open.format(path=path, reason=exc.strerror or exc)) from None
    regular = stat.S_ISREG(os.fstat(fd).st_mode)
    if not regular and regular_only is not None:
        os.close(fd)
        raise LocalsidecarError(regular_only.format(path=path))
    if fcntl is not None and regular:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise LocalsidecarError(
                f"{path} is being written by another run; wait for it or {what}"
            ) from None
        except OSError:
            pass  # a filesystem without locks
    return fd


class AppendedJsonl:
    """A JSONL file kept beside a resumable --out: one line per document,
    each appended and fsync'd as it is written, so a SIGKILL loses nothing
    already written to --out.

    The caller writes a document's line here BEFORE its --out record. Opening
    keeps, once each and in file order, the lines whose "id" is in `keep_ids`
    (the documents --out holds): a line of a document killed before its --out
    record, a torn last line or a duplicate is dropped, and the file is
    rewritten (atomically) only when something is dropped. Invariant after any
    kill: the ids in the file are those of --out plus at most the documents
    that were being saved. A `.NAME.*.part` left by a kill inside that rewrite
    is removed by the next open, which holds the file's lock first.
    """

    def __init__(self, path: str | os.PathLike, keep_ids: Iterable[str] = ()) -> None:
        self.path = os.fspath(path)
        self.notes: list[str] = []
        self._fd = self._open_locked()
        try:
            if not stat.S_ISREG(
                os.fstat(self._fd).st_mode
            ):  # /dev/null: nothing to keep, reading could block
                return
            self._remove_stale_parts()
            data = _read_fd(self._fd)
            kept = _keep_lines(data, set(keep_ids))
            if kept != data:
                with atomic_write(self.path, "wb") as f:
                    f.write(kept)
                os.close(self._fd)
                self._fd = self._open_locked()
        except OSError as exc:
            self.close()
            raise LocalsidecarError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        except BaseException:
            self.close()
            raise

    def _open_locked(self) -> int:
        return open_locked(self.path, "name another file")

    def _remove_stale_parts(self) -> None:
        target = Path(os.path.realpath(self.path))
        for part in target.parent.glob(f".{glob_escape(target.name)}.*.part"):
            part.unlink(missing_ok=True)
            self.notes.append(f"removed {part}, left by an interrupted run")

    def write(self, record: Mapping[str, Any]) -> None:
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(self._fd, view) :]
            os.fsync(self._fd)
        except OSError as exc:
            raise LocalsidecarError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> AppendedJsonl:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _read_fd(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _keep_lines(data: bytes, ids: set[str]) -> bytes:
    """The complete lines of `data` that are JSON objects with an id in `ids`, the first one per id."""
    seen: set[str] = set()
    out = []
    for line in data.split(b"\n")[: data.count(b"\n")]:  # a last line without "\n" is torn
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if (
            isinstance(obj, dict)
            and isinstance(obj.get("id"), str)
            and obj["id"] in ids
            and obj["id"] not in seen
        ):
            seen.add(obj["id"])
            out.append(line + b"\n")
    return b"".join(out)
