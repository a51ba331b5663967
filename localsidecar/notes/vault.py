"""Notes found, read and replaced safely.

Policies (each a one-line skip naming the note; the note is never changed):
- a symbolic link is not followed: its target is tagged under its own path
  when it is in the folders given (replacing through a link would rewrite a
  file elsewhere, or one note twice);
- a note without its owner's write permission is read-only by choice and is
  left alone (even for root, who could write it);
- a note with several hard links is left alone (a replace would split them);
- a note larger than MAX_NOTE_BYTES, not UTF-8, or holding NUL bytes is not
  a text note to edit;
- front matter that does not parse, or that the tool could not edit without
  touching what the user wrote: skipped, with the line.
A note is replaced by a rename of a complete temporary file in its folder
(io.atomic.atomic_write: mode and owner kept), and only if its bytes,
size, inode and mtime are what they were when it was read (else NoteChanged:
the next run picks it up). A kill at any moment leaves the old note or the
new one; a temporary `.NAME.*.part` a SIGKILL left is removed the next time
the note is read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from glob import escape as glob_escape
from pathlib import Path

from localsidecar.errors import LocalsidecarError
from localsidecar.io.atomic import atomic_write
from localsidecar.notes.frontmatter import Front, read_front
from localsidecar.notes.split import FrontMatterError, NoteParts, split_note

NOTE_EXTENSIONS = (".md", ".markdown")
MAX_NOTE_BYTES = 1 << 20
SKIPPED_FOLDERS = frozenset({"node_modules"})  # besides hidden ones (.obsidian, .git, .trash)


class NoteChanged(LocalsidecarError):
    """The note changed after it was read: not written."""


@dataclass
class Found:
    notes: list[Path] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # (path, why): links, special files


def find_notes(paths: Iterable[str], extensions: Iterable[str] = NOTE_EXTENSIONS) -> Found:
    """Notes named or under folders (recursively; hidden files and folders are
    not entered), in a stable order, each once. A named file is a note
    whatever its extension; a path that does not exist is an error."""
    exts = tuple(e.lower() if e.startswith(".") else "." + e.lower() for e in extensions)
    found = Found()
    seen: set[Path] = set()

    def add(p: Path) -> None:
        if p not in seen:
            seen.add(p)
            found.notes.append(p)

    for spec in paths:
        p = Path(spec)
        if p.is_symlink():
            found.skipped.append((p, "a symbolic link; not followed"))
            continue
        if not p.exists():
            raise LocalsidecarError(f"{spec}: no such file or folder")
        if p.is_file():
            add(p)
            continue
        if not p.is_dir():
            found.skipped.append((p, "not a regular file"))
            continue
        for root, dirs, files in os.walk(p):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
            for name in sorted(files):
                if name.startswith(".") or not name.lower().endswith(exts):
                    continue
                q = Path(root) / name
                if q.is_symlink():
                    found.skipped.append((q, "a symbolic link; not followed"))
                elif not q.is_file():
                    found.skipped.append((q, "not a regular file"))
                else:
                    add(q)
            for d in list(dirs):
                if (Path(root) / d).is_symlink():
                    found.skipped.append((Path(root) / d, "a symbolic link to a folder; not followed"))
    return found


class Skip(Exception):
    """A note the tool leaves alone; str() is the reason."""


@dataclass(frozen=True)
class Note:
    path: Path
    data: bytes
    ino: int
    mtime_ns: int
    parts: NoteParts
    front: Front
    notes: tuple[str, ...] = ()  # said once about this note (a stale temporary file removed)

    @property
    def text(self) -> str:
        return self.parts.join()

    @property
    def body(self) -> str:
        return self.parts.body


def remove_stale_parts(path: Path) -> list[str]:
    """Temporary files of an atomic write to `path` that a kill left."""
    said = []
    for part in path.parent.glob(f".{glob_escape(path.name)}.*.part"):
        try:
            part.unlink()
            said.append(f"removed {part}, left by an interrupted run")
        except OSError:
            pass
    return said


def read_note(path: Path) -> Note:
    """The note, parsed; Skip with the reason for every policy of the module docstring."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise Skip(f"cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISLNK(st.st_mode):
        raise Skip("a symbolic link; not followed")
    if not stat.S_ISREG(st.st_mode):
        raise Skip("not a regular file")
    if not st.st_mode & stat.S_IWUSR:
        raise Skip("read-only (no write permission for its owner); left as it is")
    if st.st_nlink > 1:
        raise Skip(f"has {st.st_nlink} hard links; replacing it would split them")
    if st.st_size > MAX_NOTE_BYTES:
        raise Skip(f"larger than {MAX_NOTE_BYTES >> 20} MiB ({st.st_size} bytes); not a note to edit")
    said = remove_stale_parts(path)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_NOTE_BYTES + 1)
            fst = os.fstat(f.fileno())
    except OSError as exc:
        raise Skip(f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_NOTE_BYTES:
        raise Skip(f"larger than {MAX_NOTE_BYTES >> 20} MiB; not a note to edit")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Skip(f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); left as it is") from None
    if "\0" in text:
        raise Skip(f"holds a NUL byte at offset {text.index(chr(0))}: not a text note")
    try:
        parts = split_note(text)
        front = read_front(parts)
    except FrontMatterError as exc:
        raise Skip(f"{exc.line}: {exc.reason}; left as it is") from None
    return Note(path, data, fst.st_ino, fst.st_mtime_ns, parts, front, tuple(said))


def write_note(note: Note, text: str) -> None:
    """Replace the note with `text` if it is still as read (NoteChanged otherwise)."""
    new = text.encode("utf-8")
    with atomic_write(note.path, "wb") as f:
        f.write(new)
        _check_unchanged(note)  # last thing before the rename: a change after it is the next run's


def _check_unchanged(note: Note) -> None:
    try:
        st = os.lstat(note.path)
        with open(note.path, "rb") as f:
            data = f.read(MAX_NOTE_BYTES + 1)
    except OSError as exc:
        raise NoteChanged(f"{note.path}: cannot be read again ({exc.strerror or exc})") from None
    if (
        not stat.S_ISREG(st.st_mode)
        or st.st_ino != note.ino
        or st.st_mtime_ns != note.mtime_ns
        or data != note.data
    ):
        raise NoteChanged(
            f"{note.path}: changed while it was being tagged; not written (the next run redoes it)"
        )
