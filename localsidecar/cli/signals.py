"""Ctrl-C and SIGTERM as an `Interrupted` exception raised at safe points.

Inside `graceful_interrupts()` (built on localsidecar.io.interrupts, which owns
the process's one handler):
- the first SIGINT or SIGTERM is only recorded; `guard.check()` raises
  Interrupted(signum) at the next safe point the command chooses (between
  documents: finish the current one; between rounds: discard it), and leaving
  the block raises it if nobody checked;
- a second SIGINT/SIGTERM raises Interrupted at once (the user will not wait),
  however soon after the first: signals that arrive together during one C call
  are counted, not merged. The current document is then discarded; lines
  already written stay whole (ResultWriter appends inside interrupts.critical;
  a signal held back there stops the command at the next check, which every
  command makes right after writing a result).
  If the signal lands inside llama.cpp's log callback, where an exception
  would be lost, the program ends at once instead (interrupts.exit_now, the
  guard's `last_line` first: "interrupted: N of M documents completed") and
  the library records it for the next check();
- a KeyboardInterrupt escaping the block becomes Interrupted(SIGINT).
Interrupted is a ClickException with exit_code 128 + signum (130 SIGINT, 143
SIGTERM), so even uncaught it ends the command with one line and the right
code, never a traceback.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

from localsidecar.io import interrupts

HANDLED_SIGNALS = interrupts.HANDLED_SIGNALS


class Interrupted(click.ClickException, interrupts.Interruption):
    def __init__(self, signum: int) -> None:
        self.signum = int(signum)
        self.signal_name = signal.Signals(self.signum).name
        super().__init__(f"interrupted by {self.signal_name}")
        self.exit_code = 128 + self.signum


def completed_line(done: int, total: int, out: str | None = None, what: str = "documents") -> str:
    """The line a command prints on stderr when an interrupt stopped it."""
    return f"interrupted: {done} of {total} {what} completed" + (f", saved in {out}" if out else "")


class InterruptGuard:
    """Records the first signal; `check()` turns it into Interrupted."""

    def __init__(self) -> None:
        self.signum: int | None = None
        # the line the command prints when an interrupt stops it: printed by exit_now too
        self.last_line: Callable[[], str] | None = None

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def check(self) -> None:
        if self.signum is not None:
            raise Interrupted(self.signum)

    def hold(self, signum: int) -> None:
        """A signal held back while a result was written: the next check() stops."""
        if self.signum is None:
            self.signum = signum

    def on_signal(self, signum: int, arrivals: int, frame) -> None:
        """interrupts' callback: record the first signal, stop on a second one
        (`arrivals` > 1: several came during one C call)."""
        first = self.signum is None
        if first:
            self.signum = signum
            if arrivals < 2:
                return
        if interrupts.in_c_callback(frame):
            if interrupts.process_handlers_installed():
                interrupts.exit_now(signum, self.last_line() if self.last_line else None)
            return  # in process: the next check() raises
        raise Interrupted(signum)


@contextmanager
def graceful_interrupts() -> Iterator[InterruptGuard]:
    guard = InterruptGuard()
    with interrupts.guarded(guard):
        try:
            yield guard
            guard.check()
        except KeyboardInterrupt:
            raise Interrupted(signal.SIGINT) from None
