"""Tables that fit the width they are printed at (a terminal's, or 100
columns in a pipe: cli.options.table_console).

A table whose columns cannot all be shown whole loses its least important
columns first (`fitted`), and says which; no cell is ever cut to an
ellipsis. Long free text (a path, a status) sits in a column that folds
(overflow="fold"), numbers and names in columns that never wrap (no_wrap),
whose whole width is their minimum width.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console, RenderableType
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table

ColumnSpec = tuple[str, dict[str, Any]]  # header, Table.add_column's keyword arguments


UNBOUNDED = 100_000  # a width no table reaches: measurements at it are not clamped to the console's


def _keep_whole(console: Console, table: Table) -> None:
    """A no_wrap column's minimum width is its widest cell (rich would cut it otherwise)."""
    options = console.options.update_width(UNBOUNDED)
    for column in table.columns:
        if column.no_wrap:
            cells = [column.header, *column.cells]
            column.min_width = max(Measurement.get(console, options, c).maximum for c in cells)


def needs(console: Console, table: Table) -> int:
    """The fewest columns `table` takes with every no_wrap cell whole."""
    _keep_whole(console, table)
    return Measurement.get(console, console.options.update_width(UNBOUNDED), table).minimum


def fitted(
    console: Console,
    columns: Sequence[ColumnSpec],
    rows: Sequence[Sequence[RenderableType]],
    drop: Sequence[str],
    **table: Any,
) -> tuple[Table, list[str]]:
    """The table of `columns` and `rows` (Table(**table)) without the columns
    named in `drop`, first ones first, that it must leave out to fit
    `console`'s width; and the headers left out."""
    removed: list[str] = []
    while True:
        keep = [i for i, (header, _) in enumerate(columns) if header not in removed]
        t = Table(**table)
        for i in keep:
            t.add_column(columns[i][0], **columns[i][1])
        for row in rows:
            t.add_row(*(row[i] for i in keep))
        if needs(console, t) <= console.width or len(removed) == len(drop):
            return t, removed
        removed.append(drop[len(removed)])


def print_fitted(
    console: Console,
    columns: Sequence[ColumnSpec],
    rows: Sequence[Sequence[RenderableType]],
    drop: Sequence[str],
    *,
    more: str = "--json",
    **table: Any,
) -> None:
    """Print the table `fitted` to the console, then one dim line naming the
    columns left out and where to see them (`more`)."""
    t, removed = fitted(console, columns, rows, drop, **table)
    console.print(t)
    if removed:
        console.print(
            f"[dim]left out at {console.width} columns: {escape(', '.join(removed))} "
            f"(shown by a wider terminal or {escape(more)})[/dim]",
            highlight=False,
        )
