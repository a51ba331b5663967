"""The process's standard streams, as the program's entry point sets them up
(`prepare_standard_streams`, right after the signal handlers).

Invariants once prepared:
- file descriptors 0, 1 and 2 are open: one the caller closed (`<&-`, `>&-`,
  `2>&-`) is opened on /dev/null, so no file the program opens later takes
  its number (a --out file on descriptor 1 would receive the tables);
- a closed stdout is refused before any work (there is nowhere to put the
  results); a closed stderr is /dev/null (the exit code still tells); a
  closed stdin leaves `sys.stdin` None, which reading `-` reports;
- stdout is the one StdoutWriter: a failed write or flush raises StdoutError,
  one line naming stdout, and descriptor 1 becomes /dev/null, so what could
  not be written is dropped and the interpreter's own flush at exit stays
  silent; every later write raises the same error (a caller that caught the
  first one loses nothing silently). BrokenPipeError passes unchanged: the reader went away
  (`localsidecar models | head`), which the command line ends quietly.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from localsidecar.errors import LocalsidecarError

STDIN, STDOUT, STDERR = 0, 1, 2


class StdoutError(LocalsidecarError):
    """A write to stdout failed (a full disk, /dev/full, an I/O error)."""


class StdoutWriter:
    """sys.stdout for the program: the stream it wraps, whose write and flush
    failures become StdoutError (see the module docstring). Everything else
    (encoding, isatty, fileno, buffer) is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self.wrapped = stream
        self.failure: StdoutError | None = None

    def write(self, text: str) -> int:
        if self.failure is not None:  # raised once already (and maybe caught): every later write fails too
            raise self.failure
        if isinstance(text, str) and not text:
            return 0  # nothing to write (Click probes streams with ""; /dev/full refuses even that)
        try:
            return self.wrapped.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._failed(exc) from None

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self.wrapped.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._failed(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)

    def _failed(self, exc: OSError) -> StdoutError:
        discard_stdout()  # a later flush (the interpreter's at exit) succeeds, into /dev/null
        self.failure = StdoutError(f"cannot write to stdout ({exc.strerror or exc})")
        return self.failure


def discard_stdout() -> None:
    """Descriptor 1 onto /dev/null: what is still buffered for stdout goes nowhere."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, STDOUT)
        os.close(null)
    except OSError:
        pass


def _closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def prepare_standard_streams() -> str | None:
    """Open a closed 0, 1 or 2 on /dev/null and wrap stdout in StdoutWriter;
    returns the one-line problem when stdout was closed (the command must
    not run), else None. Idempotent."""
    closed = [fd for fd in (STDIN, STDOUT, STDERR) if _closed(fd)]
    for fd in closed:
        null = os.open(os.devnull, os.O_RDONLY if fd == STDIN else os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    if STDERR in closed or sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - the process's stderr
    if STDOUT in closed or sys.stdout is None:
        return "stdout is closed (>&-); redirect it to a file, or to /dev/null to discard the output"
    if not isinstance(sys.stdout, StdoutWriter):
        sys.stdout = StdoutWriter(sys.stdout)
    return None


def reader_gone_is_broken_pipe() -> None:
    """rich's answer to a reader gone away (`localsidecar models | head -1`)
    is SystemExit(1) with descriptor 1 on /dev/null, whichever stream broke:
    exit 1, the program's code for a bug, and a broken stderr pipe stopped the
    work. Instead: a console on stdout raises BrokenPipeError, which the
    command line ends quietly (exit 141, what `| head` expects; records already
    written stay); a console on stderr discards stderr from then on and the
    work goes on (as with a closed stderr: the exit code still tells)."""
    from rich.console import Console

    if getattr(Console.on_broken_pipe, "localsidecar", False):
        return

    def on_broken_pipe(console: Console) -> None:
        console.quiet = True  # this console writes nothing more
        try:
            fd = console.file.fileno()
        except (AttributeError, OSError, ValueError):
            fd = None
        if fd == STDERR:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, STDERR)
            os.close(null)
            return
        raise BrokenPipeError(32, "Broken pipe")

    on_broken_pipe.localsidecar = True
    Console.on_broken_pipe = on_broken_pipe
