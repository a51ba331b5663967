"""The one exception type the CLI turns into a clean one-line message."""

from __future__ import annotations

import click


class UserError(click.ClickException):
    """Bad input or an environment problem the user can fix: one line, exit 2."""

    exit_code = 2

    def format_message(self) -> str:
        return " ".join(str(self.message).split("\n"))
