"""The command line's own error: bad options or arguments, one line, exit 2.
The library raises LocalsidecarError; the group in localsidecar.cli turns
both into the same one-line message."""

from __future__ import annotations

import click


class UserError(click.ClickException):
    """Bad input the user can fix: one line, exit 2."""

    exit_code = 2

    def format_message(self) -> str:
        return " ".join(str(self.message).split("\n"))
