"""Ctrl-C and SIGTERM as an `Interrupted` exception raised at safe points.

Inside `graceful_interrupts()`:
- the first SIGINT or SIGTERM is only recorded; `guard.check()` raises
  Interrupted(signum) at the next safe point the command chooses (between
  documents: finish the current one; between rounds: discard it), and leaving
  the block raises it if nobody checked;
- a second SIGINT/SIGTERM raises Interrupted at once (the user will not wait);
  the current document is then discarded, lines already written stay whole
  (ResultWriter blocks both signals while it writes);
- a KeyboardInterrupt escaping the block becomes Interrupted(SIGINT).
The previous handlers are restored on exit. Interrupted is a ClickException
with exit_code 128 + signum (130 SIGINT, 143 SIGTERM), so even uncaught it
ends the command with one line and the right code, never a traceback.
"""

from __future__ import annotations

import signal
from contextlib import contextmanager
from typing import Iterator

import click

HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(click.ClickException):
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

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def check(self) -> None:
        if self.signum is not None:
            raise Interrupted(self.signum)

    def _handle(self, signum: int, frame) -> None:
        if self.signum is not None:
            raise Interrupted(signum)
        self.signum = signum


@contextmanager
def graceful_interrupts() -> Iterator[InterruptGuard]:
    guard = InterruptGuard()
    previous: dict[int, object] = {}
    try:
        for signum in HANDLED_SIGNALS:
            previous[signum] = signal.signal(signum, guard._handle)
    except ValueError:
        pass  # not the main thread: signals stay as they were; KeyboardInterrupt is still mapped
    try:
        yield guard
        guard.check()
    except KeyboardInterrupt:
        raise Interrupted(signal.SIGINT) from None
    finally:
        for signum, handler in previous.items():
            # None: the handler was installed outside Python and cannot be restored.
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
