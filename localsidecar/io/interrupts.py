"""Ctrl-C (SIGINT) and SIGTERM for the whole process.

The `localsidecar` program calls `install_process_handlers()` as its first
statement, before Click, numpy or llama.cpp are imported, and keeps that one
handler until the process ends:

- while no guard is open (imports, option parsing, loading documents and
  models, printing results), a signal ends the process at once: files
  registered with `removed_on_exit` are deleted, stdout is flushed, one line
  goes to stderr and the exit code is 128 + signum (130 SIGINT, 143 SIGTERM);
- while a guard is open (`guarded`, used by cli.signals.graceful_interrupts),
  the guard's `on_signal(signum, arrivals, frame)` decides (the first signal
  is recorded, a second one stops at once);
- inside `critical()` (a result line being appended) a signal is held back
  until the section ends, so a line is never cut; then the guard records it
  (`hold`: its next check stops the command, and every command checks right
  after writing a result) or, with no guard open, the process ends.

Python runs a signal handler between bytecodes of the main thread, so two
signals that arrive during one long C call (a llama_decode) reach it as ONE
call. Every signal also writes one byte to the wakeup fd
(`signal.set_wakeup_fd`), so the handler counts them: `arrivals` is the number
of signals since its previous call (at least 1).

Without `install_process_handlers()` (the library, tests in process) nothing
is installed until a guard opens, and the previous handlers come back when it
closes. Signals that were ignored when the program started (SIGINT of a
background job) stay ignored.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# The one Python function llama.cpp calls back (backend.runtime): an exception
# raised inside a ctypes callback is printed and dropped, never propagated.
_C_CALLBACKS = {("localsidecar.backend.runtime", "_log_callback")}


class Interruption(Exception):
    """Base of the exception an interrupt raises (cli.signals.Interrupted), so
    code below the command line can tell an interrupt from a failure."""


class Guard(Protocol):
    def on_signal(self, signum: int, arrivals: int, frame) -> None:
        """A signal came (`arrivals` of them since the last call); may raise."""

    def hold(self, signum: int) -> None:
        """A signal came during a critical section: stop at the next check."""


class _State:
    installed = False  # by the program's entry point, for the process lifetime
    guards: list[Guard] = []  # innermost last
    critical_depth = 0
    deferred: list[int] = []  # signals held back by critical()
    wakeup_read: int | None = None
    remove_on_exit: set[str] = set()


# --- counting signals -------------------------------------------------------------------


def _open_wakeup() -> tuple[int, int, int] | None:
    """(read end, write end, previous wakeup fd), or None outside the main thread."""
    r, w = os.pipe()
    os.set_blocking(r, False)
    os.set_blocking(w, False)
    try:
        previous = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except ValueError:  # not the main thread
        os.close(r)
        os.close(w)
        return None
    _State.wakeup_read = r
    return r, w, previous


def _close_wakeup(opened: tuple[int, int, int] | None) -> None:
    if opened is None:
        return
    r, w, previous = opened
    signal.set_wakeup_fd(previous)
    _State.wakeup_read = None
    os.close(r)
    os.close(w)


def _drain() -> int:
    """How many SIGINT/SIGTERM bytes the wakeup fd holds (they are consumed)."""
    if _State.wakeup_read is None:
        return 0
    count = 0
    while True:
        try:
            chunk = os.read(_State.wakeup_read, 512)
        except (BlockingIOError, InterruptedError):
            return count
        except OSError:
            return count
        if not chunk:
            return count
        count += sum(1 for b in chunk if b in HANDLED_SIGNALS)


# --- the handler ------------------------------------------------------------------------


def _handle(signum: int, frame) -> None:
    arrivals = max(1, _drain())
    if _State.critical_depth:
        _State.deferred.extend([signum] * arrivals)
        return
    if _State.guards:
        _State.guards[-1].on_signal(signum, arrivals, frame)
        return
    exit_now(signum)


def exit_now(signum: int, last_line: str | None = None) -> None:
    """End the process at once: registered temporary files removed, stdout
    flushed, `last_line` (what a guard's command would have printed, "interrupted:
    1 of 6 documents completed, ...") and one line on stderr, exit code
    128 + signum. Never returns."""
    for path in list(_State.remove_on_exit):
        try:
            os.unlink(path)
        except OSError:
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
            if stream is sys.stderr and stream.isatty():
                os.write(2, b"\x1b[?25h")  # a progress bar may have hidden the cursor
        except Exception:  # a full or closed stream: the line below still goes out
            pass
    try:
        if last_line:
            os.write(2, f"{last_line}\n".encode())
        os.write(2, f"Error: interrupted by {signal.Signals(signum).name}\n".encode())
    except OSError:
        pass
    os._exit(128 + signum)


def in_c_callback(frame) -> bool:
    """Whether `frame` runs inside a Python function that C code called back
    (llama.cpp's log callback), where a raised exception would be lost."""
    while frame is not None:
        if (frame.f_globals.get("__name__"), frame.f_code.co_name) in _C_CALLBACKS:
            return True
        frame = frame.f_back
    return False


def process_handlers_installed() -> bool:
    return _State.installed


def install_process_handlers() -> None:
    """The program's first statement: one handler for SIGINT and SIGTERM for
    the whole process (see the module docstring). Main thread only."""
    if _State.installed:
        return
    for signum in HANDLED_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _handle)
    _open_wakeup()
    _State.installed = True


@contextmanager
def guarded(guard: Guard) -> Iterator[Guard]:
    """Route SIGINT/SIGTERM to `guard.on_signal` while the block runs. Without
    the process handlers, installs the handler for the block only (a no-op
    outside the main thread, where signals cannot be handled)."""
    previous: dict[int, object] = {}
    opened = None
    if not _State.installed:
        try:
            for signum in HANDLED_SIGNALS:
                previous[signum] = signal.signal(signum, _handle)
        except ValueError:
            pass  # not the main thread
        else:
            opened = _open_wakeup()
    _drain()  # bytes of signals handled before this guard are not arrivals for it
    _State.guards.append(guard)
    try:
        yield guard
    finally:
        _State.guards.remove(guard)
        _close_wakeup(opened)
        for signum, handler in previous.items():
            # None: the handler was installed outside Python and cannot be restored.
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


# --- sections a signal must not cut -----------------------------------------------------


@contextmanager
def critical() -> Iterator[None]:
    """Hold SIGINT/SIGTERM back while the block runs (both are blocked for this
    thread, and the handler defers those another thread received). When it
    ends, the open guard records them (`hold`) or, with none open, the
    process ends (exit_now)."""
    old = None
    if hasattr(signal, "pthread_sigmask"):
        old = signal.pthread_sigmask(signal.SIG_BLOCK, set(HANDLED_SIGNALS))
    _State.critical_depth += 1
    try:
        yield
    finally:
        _State.critical_depth -= 1
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        if not _State.critical_depth and _State.deferred:
            pending, _State.deferred = _State.deferred, []
            if _State.guards:
                for signum in pending:
                    _State.guards[-1].hold(signum)
            elif _State.installed:
                exit_now(pending[0])


@contextmanager
def removed_on_exit(path: str | os.PathLike) -> Iterator[None]:
    """While the block runs, `exit_now` deletes `path` (a temporary file)."""
    key = os.fspath(path)
    _State.remove_on_exit.add(key)
    try:
        yield
    finally:
        _State.remove_on_exit.discard(key)
