"""Numbers for people and programs: the one rounding rule for record values
(JSON, CSV) and the one formatter for table cells."""

from __future__ import annotations

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
