"""The files a command writes, checked against each other and against what
it reads (documents, folders of documents, prompts, the model files a pair
resolves to, also those still to be derived) before anything is opened for
writing or any model loads.

Paths are compared by identity, not by spelling: an existing file by device
and inode after resolving links (so a hard link, a symlink or `../x` all
match), a file still to be created by its resolved folder's identity plus its
name. Devices and FIFOs (`/dev/null` given twice) are never a clash.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping

from localsidecar.cli.errors import UserError

PathLike = str | os.PathLike


def identity(path: PathLike) -> tuple | None:
    """What names the same file as `path`; None for a device, FIFO or socket
    (/dev/stdout on a pipe included)."""
    p = os.fspath(path)
    try:
        st = os.stat(p)  # follows links
    except FileNotFoundError:
        real = os.path.realpath(p)
        folder, name = os.path.split(real)
        try:
            parent = os.stat(folder or os.curdir)
        except OSError:
            return ("path", real)
        return ("entry", parent.st_dev, parent.st_ino, name)
    except OSError:
        return ("path", os.path.realpath(p))
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        return None
    return ("inode", st.st_dev, st.st_ino)


def check_distinct(
    *,
    inputs: Mapping[str, Iterable[PathLike | None]],
    outputs: Mapping[str, PathLike | None],
    models: Iterable[PathLike] = (),
) -> None:
    """One line (UserError, exit 2), before anything is opened, if an output
    would destroy something the command reads or makes, or another output:
    - two outputs, or an output and an input, are the same file;
    - an output is an existing document of a folder given as input (a JSONL
      of localsidecar's own records there is not: see holds_documents);
    - an output is one of the model files the pair resolves to (`models`,
      from ModelArgs.planned_files: also a draft still to be derived into the models folder);
    - an output or an input option is named by an empty string.
    `inputs`: label -> paths read ("a document" -> the DOCS, "--prompts" ->
    [path]); `outputs`: option -> path written (None: not given)."""
    for label, paths in inputs.items():
        if label.startswith("--") and any(p is not None and os.fspath(p) == "" for p in paths):
            raise UserError(f"{label} needs a file name; got an empty one")
    for option, p in outputs.items():
        if p is not None and os.fspath(p) == "":
            raise UserError(f"{option} needs a file name; got an empty one")
    read: dict[tuple, str] = {}
    folders: dict[tuple, str] = {}
    for label, paths in inputs.items():
        for p in paths:
            if p is None or os.fspath(p) == "-":
                continue
            ident = identity(p)
            if ident is None or ident[0] == "entry":  # an input that does not exist is reported elsewhere
                continue
            read.setdefault(ident, label)
            if os.path.isdir(p):
                folders.setdefault(ident, os.fspath(p))
    for p in models:
        ident = identity(p)  # also a file not derived yet: where it will be
        if ident is not None:
            read.setdefault(ident, "a model file of the pair")
    written: dict[tuple, str] = {}
    for option, p in outputs.items():
        if p is None:
            continue
        ident = identity(p)
        if ident is None:
            continue
        if ident in read:
            raise UserError(
                f"{option} {os.fspath(p)} is also an input of this command ({read[ident]}); "
                "writing it would destroy it: name another file"
            )
        if ident in written:
            raise UserError(
                f"{written[ident]} and {option} name the same file ({os.fspath(p)}); "
                "give each output its own file"
            )
        written[ident] = option
        _refuse_a_folder_document(option, os.fspath(p), folders)


def _refuse_a_folder_document(option: str, path: str, folders: Mapping[tuple, str]) -> None:
    """UserError if `path` is an existing document of one of the input `folders`."""
    from localsidecar.io.documents import holds_documents

    parent = identity(os.path.dirname(os.path.realpath(path)) or os.curdir)
    if parent not in folders or os.path.basename(path).startswith(".") or not os.path.isfile(path):
        return
    if holds_documents(path):
        raise UserError(
            f"{option} {path} is a document of {folders[parent]}, an input of this command; "
            "writing it would destroy it: name another file"
        )


def check_not_models(what: str, written: Iterable[PathLike], models: Iterable[PathLike]) -> None:
    """One line (UserError, exit 2) before any model loads if a file a command
    edits in place (`what`: "note") is one of the pair's model files
    (ModelArgs.planned_files: a derivation would also write it)."""
    kept = {ident for p in models if (ident := identity(p)) is not None}
    for p in written:
        if identity(p) in kept:
            raise UserError(f"{what} {os.fspath(p)} is a model file of the pair; writing it would destroy it")


def check_writable(
    outputs: Mapping[str, PathLike | None], *, folders: Mapping[str, PathLike | None] = {}
) -> None:
    """One line (UserError, exit 2) before any work if an output file cannot
    be written: `outputs` option -> file (replaced atomically: a temporary
    file is created in its folder, so the folder must take a new file);
    `folders` option -> a folder created if missing (its nearest existing
    parent must take one). Probed by creating and removing a file, which
    also catches read-only filesystems (os.access does not, and says yes to root).
    An empty name is refused (a folder's too: Path("") would be the current one)."""
    for option, p in [*outputs.items(), *folders.items()]:
        if p is not None and os.fspath(p) == "":
            raise UserError(
                f"{option} needs a {'folder' if option in folders else 'file'} name; got an empty one"
            )
    for option, p in outputs.items():
        if p is None or identity(p) is None:  # /dev/null, a FIFO: written in place
            continue
        path = os.fspath(p)
        if os.path.isdir(path):
            raise UserError(f"{option} {path} is a folder; name a file")
        folder = os.path.dirname(os.path.realpath(path)) or os.curdir
        if not os.path.isdir(folder):
            shown = os.path.dirname(path) or os.curdir
            why = "is not a folder" if os.path.exists(folder) else "does not exist"
            raise UserError(f"{option} {path}: {shown} {why}")
        _probe(option, path, folder)
    for option, p in folders.items():
        if p is None:
            continue
        path = os.fspath(p)
        if os.path.exists(path) and not os.path.isdir(path):
            raise UserError(f"{option} {path} is not a folder")
        existing = os.path.realpath(path)
        while not os.path.exists(existing):
            existing = os.path.dirname(existing)
        if not os.path.isdir(existing):
            raise UserError(f"{option} {path}: {existing} is not a folder")
        _probe(option, path, existing)


def _probe(option: str, path: str, folder: str) -> None:
    why = unwritable(folder)
    if why:
        raise UserError(f"{option} {path}: cannot write in {folder} ({why})")


def unwritable(folder: PathLike) -> str | None:
    """Why no file can be created in `folder` (a file is created there and
    removed), or None."""
    import tempfile

    try:
        fd, probe = tempfile.mkstemp(prefix=".localsidecar-probe.", suffix=".part", dir=folder)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    os.unlink(probe)
    return None
