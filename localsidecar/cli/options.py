"""Parameter types, their limits, and option groups: a frozen dataclass whose
fields are Click options (`option`, `OptionGroup`, `grouped`). The groups the
commands share are in cli/args.py.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self

import click
from rich.console import Console

from localsidecar.io.formatting import columns


class FiniteFloatRange(click.FloatRange):
    """click.FloatRange that also refuses nan and inf (which pass every range check)."""

    def convert(self, value, param, ctx):
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return rv


# Logits are float32: outside float32's normal range a temperature rounds to 0
# or to infinity, where logits / T overflows to NaN (1e-300) or is NaN for the
# grammar's -inf (3.5e38: llama.cpp's grammar sampler aborted the process).
# The sampling code is guarded against both (distributions.softmax,
# backend.GrammarSampler); the option keeps the values meaningful.
MIN_TEMPERATURE = 1.1754944e-38  # numpy.finfo(numpy.float32).tiny
MAX_TEMPERATURE = 3.4028235e38  # numpy.finfo(numpy.float32).max
MAX_SEED = 2**32 - 1  # llama.cpp's samplers take a uint32 seed
MAX_THREADS = 512  # GGML_MAX_N_THREADS; far more threads crash inside ggml
MAX_INT32 = 2**31 - 1  # llama.cpp's n_ctx, n_gpu_layers


class TemperatureType(click.ParamType):
    """0 (greedy) or a float in [MIN_TEMPERATURE, MAX_TEMPERATURE]."""

    name = "float"

    def convert(self, value, param, ctx):
        rv = click.FLOAT.convert(value, param, ctx)
        if rv != 0 and not MIN_TEMPERATURE <= rv <= MAX_TEMPERATURE:  # nan fails both comparisons
            self.fail(
                f"{value!r} is not 0 or a number from {MIN_TEMPERATURE:.8g} to {MAX_TEMPERATURE:.8g}.",
                param,
                ctx,
            )
        return rv


SEED_TYPE = click.IntRange(0, MAX_SEED)
TEMPERATURE_HELP = (
    f"0: greedy; above 0: rejection sampling. 0 or {MIN_TEMPERATURE:.2g} to {MAX_TEMPERATURE:.2g} "
    "(float32, the logits' type; outside it the temperature rounds to 0 or infinity)."
)


def cap_threads(ctx, param, value: int | None) -> int | None:
    """More threads than logical CPUs only make the threads wait for each other
    (--threads 512 took 88 s for 24 tokens on 2 CPUs): capped, with a note."""
    cpus = os.cpu_count()
    if value is not None and cpus and value > cpus:
        click.echo(
            f"note: --threads {value} is more than this machine's {cpus} logical CPUs; using {cpus}", err=True
        )
        return cpus
    return value


class AutoOrInt(click.ParamType):
    """'auto' or an integer from `lo` to `hi` (--draft-max, --ctx, --max-tokens)."""

    def __init__(self, lo: int, hi: int) -> None:
        self.lo, self.hi = lo, hi
        self.name = f"auto|{lo}..{hi if hi < MAX_INT32 else ''}"

    def convert(self, value, param, ctx):
        if isinstance(value, int) or str(value).strip().lower() != "auto":
            try:
                n = int(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is neither 'auto' nor an integer.", param, ctx)
            if not self.lo <= n <= self.hi:
                self.fail(f"{value!r} is not 'auto' or in the range {self.lo}<=x<={self.hi}.", param, ctx)
            return n
        return "auto"


DRAFT_MAX_TYPE = AutoOrInt(1, 64)
CTX_TYPE = AutoOrInt(64, MAX_INT32)  # llama.cpp's n_ctx is an int32
MAX_TOKENS_TYPE = AutoOrInt(1, MAX_INT32)


PROMPTS_HELP = "JSON file with any of: instruction, suffix, hashtag_lead, deferred, system."


def table_console() -> Console:
    """Tables on stdout: a terminal's width (as rich decides what a terminal
    is); without one (a pipe, a file) COLUMNS or 100 columns, no colours.
    io.tables fits every table to it."""
    console = Console(highlight=False)
    if console.is_terminal:
        return console
    return Console(width=columns(os.environ.get("COLUMNS")), no_color=True, highlight=False)


# --- option groups ------------------------------------------------------------------------


def stacked(*decorators: Callable[[Callable], Callable]) -> Callable[[Callable], Callable]:
    """One decorator applying `decorators` so that their options show in --help in this order."""

    def decorate(f: Callable) -> Callable:
        for d in reversed(decorators):
            f = d(f)
        return f

    return decorate


_OPTION = "click_option"


def option(*decls: str, **attrs: Any) -> Any:
    """A field of an OptionGroup and its Click option: `decls` and `attrs` as
    click.option takes them; the field's name is the parameter's. The field's
    default is the option's (False for a flag, None when not given), and a
    command that does not show the option gets it."""
    default = attrs.get("default", False if attrs.get("is_flag") else None)
    return dataclasses.field(default=default, metadata={_OPTION: (decls, attrs)})


class OptionGroup:
    """Base of a frozen dataclass whose fields are options (`option`).

    A command shows some of a group's options where its --help lists them
    (`options`), and takes the whole group as one parameter annotated with the
    class (`grouped`). Adding an option to a group is adding one field."""

    SHOWN: ClassVar[tuple[str, ...]] = ()  # what options() shows without names; (): every field

    @classmethod
    def options(
        cls,
        *names: str,
        help: Mapping[str, str] | None = None,
        defaults: Mapping[str, Any] | None = None,
    ) -> Callable[[Callable], Callable]:
        """A decorator adding the options of the fields `names` (default: SHOWN),
        in that order in --help; `help`: field name -> this command's help text;
        `defaults`: field name -> this command's default (shown in --help)."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        decorators = []
        for name in names or cls.SHOWN or tuple(fields):
            decls, attrs = fields[name].metadata[_OPTION]
            if help and name in help:
                attrs = {**attrs, "help": help[name]}
            if defaults and name in defaults:
                attrs = {**attrs, "default": defaults[name], "show_default": True}
            if not attrs.get("help"):
                raise TypeError(f"{cls.__name__}.{name}: every option has a help text")
            decorators.append(click.option(*decls, name, **attrs))
        return stacked(*decorators)

    @classmethod
    def option_like(cls, name: str, **attrs: Any) -> Any:
        """A field for another group: the option of field `name`, `attrs` changed."""
        decls, own = next(f for f in dataclasses.fields(cls) if f.name == name).metadata[_OPTION]
        return option(*decls, **{**own, **attrs})

    @classmethod
    def take(cls, values: dict[str, Any]) -> Self:
        """The group of Click's `values`, its fields taken out of them."""
        names = [f.name for f in dataclasses.fields(cls) if f.name in values]
        return cls(**{n: values.pop(n) for n in names})


def grouped(command: Callable) -> Callable:
    """Decorate a command's function (below its options): each parameter
    annotated with an OptionGroup receives that group, built once from the
    values Click parsed; the other parameters receive their values as usual.
    Two groups of one command never share a field name."""
    hints = typing.get_type_hints(command)
    groups = {n: t for n, t in hints.items() if isinstance(t, type) and issubclass(t, OptionGroup)}
    owner: dict[str, str] = {}
    for param, group in groups.items():
        for f in dataclasses.fields(group):
            if f.name in owner:
                raise TypeError(f"{command.__name__}: {param} and {owner[f.name]} both have {f.name}")
            owner[f.name] = param

    @functools.wraps(command)
    def callback(**values: Any) -> Any:
        for param, group in groups.items():
            values[param] = group.take(values)
        return command(**values)

    return callback
