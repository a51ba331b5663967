"""Numbers for people and programs: the one rounding rule for record values
(JSON, CSV) and the one formatter for table cells."""

from __future__ import annotations

import os
from typing import Any


def rounded(x: float | None, digits: int = 4) -> float | None:
    """`x` rounded to `digits` decimals as a float; None (a value that does not
    exist, e.g. a rate over zero tokens) stays None."""
    return None if x is None else round(float(x), digits)


def cell(value: Any, spec: str | None = None, *, unit: str = "") -> str:
    """Text of one table cell: "-" for a missing value, yes/no for a flag, a
    number in format `spec` followed by `unit` (without `spec`: floats ".3f",
    integers as they are), anything else as str()."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return format(value, spec or ".3f") + unit
    if isinstance(value, int):
        return (format(value, spec) if spec else str(value)) + unit
    return str(value)


def alpha_cell(x: float | None, signed: bool = False) -> str:
    """An α, or with `signed` a difference of α, in a table: four decimals."""
    return cell(x, "+.4f" if signed else ".4f")


# C0 controls, DEL and C1 controls: a newline splits a line, ESC and CSI drive the terminal
_ESCAPED = {c: repr(chr(c))[1:-1] for c in (*range(0x20), *range(0x7F, 0xA0))}


def shown(text: str) -> str:
    """`text` as a person's terminal shows it safely: control characters (a
    newline, NUL, ESC) as their escapes (\\n, \\x00, \\x1b), everything else
    as it is. For ids, file names and model output in lines and tables; JSON
    output escapes them by itself."""
    return text.translate(_ESCAPED)


TABLE_COLUMNS = 100  # every table fits
MAX_COLUMNS = 10_000


def columns(value: str | None, default: int = TABLE_COLUMNS) -> int:
    """The width $COLUMNS asks for, or `default` when it is unset or not a
    whole number from 1 to MAX_COLUMNS (COLUMNS=abc is the environment's
    mistake, not a reason to lose a finished run's table)."""
    text = (value or "").strip()
    return int(text) if text.isascii() and text.isdigit() and 0 < int(text) <= MAX_COLUMNS else default


def drop_bad_terminal_size(env=None) -> None:
    """Remove COLUMNS and LINES from the environment when they are not a
    size `columns` accepts: rich reads them for every console and fails
    (COLUMNS=²) or prints nothing (COLUMNS=0) otherwise."""
    env = os.environ if env is None else env
    for name in ("COLUMNS", "LINES"):
        if name in env and columns(env[name], default=0) == 0:
            del env[name]
