"""The option groups (cli/args.py, cli/options.py): each command takes a few
frozen values instead of one parameter per option, a group's field defaults
are its options' defaults, and a group is built from Click's values once."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import os

import click
import pytest

from localsidecar.cli import COMMANDS
from localsidecar.cli.args import LayoutArgs, ModelArgs, OutputArgs, SpecArgs
from localsidecar.cli.options import OptionGroup, grouped, option
from localsidecar.decoding.defaults import DEFAULT_MAX_TOKENS, EXTRACT_MAX_TOKENS
from localsidecar.decoding.engine import TARGET_ONLY
from localsidecar.decoding.layouts import Mode, Reveal

MOST_PARAMETERS = 12


def _command(name: str) -> click.Command:
    module, attr, _ = COMMANDS[name]
    return getattr(importlib.import_module(f"localsidecar.cli.{module}"), attr)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_no_command_function_takes_a_dozen_parameters(name):
    function = inspect.unwrap(_command(name).callback)
    assert len(inspect.signature(function).parameters) <= MOST_PARAMETERS


@pytest.fixture
def no_env(monkeypatch):
    """No LOCALSIDECAR_* variable (conftest sets the threads and the models dir)."""
    for name in [n for n in os.environ if n.startswith("LOCALSIDECAR_")]:
        monkeypatch.delenv(name)


def _built_by_click(group: type[OptionGroup], argv: list[str]) -> OptionGroup:
    """The group a command showing all its options receives for `argv`."""
    built = []

    def command(args) -> None:
        built.append(args)

    command.__annotations__ = {"args": group}  # not a string: the class is local to this test
    help = dict.fromkeys(("as_json", "csv_file", "plot_file"), "x")  # helps each command gives its own
    names = [f.name for f in dataclasses.fields(group)]
    click.command()(group.options(*names, help=help)(grouped(command))).main(argv, standalone_mode=False)
    return built[0]


@pytest.mark.parametrize("group", [ModelArgs, SpecArgs, OutputArgs, LayoutArgs])
def test_a_group_built_without_options_has_the_options_defaults(group, no_env):
    """A command that does not show an option gets the value Click would give it."""
    assert _built_by_click(group, []) == group()


def test_a_group_is_built_from_the_values_click_parsed(no_env):
    model = _built_by_click(ModelArgs, ["--ctx", "512", "--threads", "1", "--draft", "d.gguf", "--verbose"])
    assert model == ModelArgs(n_ctx=512, threads=1, draft="d.gguf", verbose=True)
    assert model.engine_config(soft_tokens=9).n_ctx == 512 and model.engine_config().threads == 1
    spec = _built_by_click(SpecArgs, ["--draft-max", "3", "--soft-tokens", "0", "--numbers", "free"])
    assert spec.config().draft_max == 3 and spec.config().numbers == "free" and spec.soft_limit is None


def test_max_tokens_auto_is_by_summary_mode(no_env):
    """--max-tokens auto bounds a free summary at DEFAULT_MAX_TOKENS and an extract at
    EXTRACT_MAX_TOKENS (its settings set its length); a number bounds both."""
    spec = _built_by_click(SpecArgs, [])
    assert spec.max_tokens == "auto"
    assert spec.config().max_tokens == DEFAULT_MAX_TOKENS == 128 and spec.config().summary == "free"
    assert spec.config("extract").max_tokens == EXTRACT_MAX_TOKENS > DEFAULT_MAX_TOKENS
    given = _built_by_click(SpecArgs, ["--max-tokens", "40"])
    assert given.config().max_tokens == given.config("extract").max_tokens == 40
    with pytest.raises(click.BadParameter):
        _built_by_click(SpecArgs, ["--max-tokens", "0"])


def test_run_mode_and_reveal_are_enums():
    assert LayoutArgs(mode="masked", reveal="overlap") == LayoutArgs(mode=Mode.MASKED, reveal=Reveal.OVERLAP)
    assert isinstance(LayoutArgs().mode, Mode) and LayoutArgs().need_draft
    assert LayoutArgs(mode=TARGET_ONLY).mode == TARGET_ONLY and not LayoutArgs(mode=TARGET_ONLY).need_draft
    with pytest.raises(ValueError):
        LayoutArgs(mode="rebase")


def test_two_groups_of_one_command_never_share_an_option():
    @dataclasses.dataclass(frozen=True)
    class Other(OptionGroup):
        max_tokens: int = option("--max-tokens", default=1, help="x")

    def command(spec: SpecArgs, other: Other) -> None: ...

    command.__annotations__ = {"spec": SpecArgs, "other": Other, "return": None}
    with pytest.raises(TypeError, match="max_tokens"):
        grouped(command)
