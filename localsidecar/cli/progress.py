"""Progress of a command over its items (documents, or quant's variants), on stderr.

On a terminal: a bar of items done, the time so far, and the current item's
summary tokens as they are written. Not on a terminal (a log file, a pipe):
one plain line per finished item, e.g. `[3/10] bakery: 96 tokens, α 0.74, 4.1 s`.
`--quiet`: neither. Every command that loops over documents uses this one
class; results go to stdout, so progress never mixes with them.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console


def plural(n: int, word: str) -> str:
    """'1 document', '3 documents'."""
    return f"{n} {word}{'' if n == 1 else 's'}"


class Progress:
    """Use as a context manager around the loop; call `start(item)` before
    an item, `tokens(n)` as it writes (Engine.run's on_tokens), `done(...)`
    when it is finished."""

    def __init__(self, console: Console, total: int, *, quiet: bool = False, what: str = "documents"):
        self.console = console
        self.total = total
        self.quiet = quiet
        self.what = what
        self.count = 0
        self._item = ""
        self._t0 = time.perf_counter()
        self._bar = None
        self._task = None

    @property
    def live(self) -> bool:
        """A bar is drawn (a terminal, not --quiet)."""
        return self._bar is not None

    def __enter__(self) -> Progress:
        if not self.quiet and self.console.is_terminal and self.total > 0:
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self._bar = Bar(
                TextColumn(self.what),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[current]}"),
                console=self.console,
                transient=True,
            )
            self._task = self._bar.add_task(self.what, total=self.total, current="")
            self._bar.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def start(self, item: str) -> None:
        self._item = item
        self._t0 = time.perf_counter()
        self._show(item)

    def tokens(self, n: int) -> None:
        """The current item's summary holds n tokens (called after every token)."""
        if self._bar is not None:
            self._show(f"{self._item}: {plural(n, 'token')}")

    def _show(self, text: str) -> None:
        if self._bar is not None:
            self._bar.update(self._task, current=text)

    def done(
        self,
        item: str | None = None,
        *,
        tokens: int | None = None,
        alpha: float | None = None,
        seconds: float | None = None,
        detail: str = "",
    ) -> None:
        """One item finished: advance the bar, or print its line."""
        self.count += 1
        now = time.perf_counter()
        if seconds is None:
            seconds = now - self._t0  # since start(), or since the previous item without one
        self._t0 = now
        if self._bar is not None:
            self._bar.update(self._task, advance=1, current="")
            return
        if self.quiet:
            return
        parts = [plural(tokens, "token")] if tokens is not None else []
        parts += [f"α {alpha:.2f}"] if alpha is not None else []
        parts += [detail] if detail else []
        parts.append(f"{seconds:.1f} s")
        self.console.print(
            f"[{self.count}/{self.total}] {item or self._item}: {', '.join(parts)}",
            markup=False,
            highlight=False,
        )
