"""`--help` of the group and of every command, byte for byte as saved in
tests/data/cli_help/ (NAME.COLUMNS.txt), at 80 and 200 columns: a refactoring
of how commands take their options must not change what a user reads.
The group runs in this process as the console script does, its width taken
from COLUMNS (CliRunner would force 80 columns whatever COLUMNS says).

A deliberate change to an option or a help text rewrites the files:
    python -m tests.test_cli_help --write
and the diff of tests/data/cli_help/ is then part of the change.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path
from unittest import mock

import pytest

from localsidecar.cli import COMMANDS, main

HELP_DIR = Path(__file__).resolve().parent / "data" / "cli_help"
WIDTHS = (80, 200)
NAMES = ("localsidecar", *COMMANDS)


def help_text(name: str, columns: int) -> str:
    args = ["--help"] if name == "localsidecar" else [name, "--help"]
    stdout = io.StringIO()
    with mock.patch.dict(os.environ, {"COLUMNS": str(columns)}), contextlib.redirect_stdout(stdout):
        code = main.main(args, prog_name="localsidecar", standalone_mode=False)
    assert code == 0, stdout.getvalue()
    return stdout.getvalue()


def saved(name: str, columns: int) -> Path:
    return HELP_DIR / f"{name}.{columns}.txt"


def test_every_command_has_saved_help():
    assert sorted(p.name for p in HELP_DIR.iterdir()) == sorted(
        saved(n, c).name for n in NAMES for c in WIDTHS
    )


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("name", NAMES)
def test_help_unchanged(name, columns):
    assert help_text(name, columns) == saved(name, columns).read_text(encoding="utf-8")


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    HELP_DIR.mkdir(parents=True, exist_ok=True)
    for old in HELP_DIR.glob("*.txt"):
        old.unlink()
    for n in NAMES:
        for c in WIDTHS:
            saved(n, c).write_text(help_text(n, c), encoding="utf-8")
