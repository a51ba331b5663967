"""The `localsidecar` Click group and the error boundary.

Every command raises UserError, or lets the library's LocalsidecarError or an
OSError escape; the group turns them into one line on stderr and exit code 2, never a traceback.
A failed write to stdout is the program's StdoutWriter's own error
(localsidecar.io.streams), a LocalsidecarError like any other.
Anything else is a bug: one line naming it and where it happened, exit code 1
(LOCALSIDECAR_DEBUG=1 shows the traceback instead).
Signal handlers and the standard streams are the entry point's
(localsidecar.__main__), not this module's: importing it installs nothing.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback

import click

from localsidecar.cli.errors import UserError
from localsidecar.errors import LocalsidecarError
from localsidecar.io.formatting import drop_bad_terminal_size, shown
from localsidecar.io.streams import reader_gone_is_broken_pipe


class _Group(click.Group):
    """Click's group with the project's error boundary."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Like Click's standalone mode, but every error is one line on stderr."""
        drop_bad_terminal_size()  # COLUMNS=abc: the default width, not a failure after the work
        reader_gone_is_broken_pipe()  # `| head -1`: exit 141, not rich's exit 1
        try:
            try:
                rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
                _flush_stdout()  # a full stdout fails here, not in the interpreter's exit
            except BrokenPipeError:
                _reader_gone()
            except LocalsidecarError as exc:  # outside a command: stdout failed in --help, --version
                raise UserError(str(exc)) from None
            except OSError as exc:  # outside a command: --help, --version, usage errors
                raise _os_error(exc) from None
        except click.UsageError as exc:
            cmd = exc.ctx.command_path if exc.ctx else "localsidecar"
            _say(f"Error: {exc.format_message()} (see '{cmd} --help')")
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            _say(f"Error: {exc.format_message()}")
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(130)
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except LocalsidecarError as exc:
            raise UserError(str(exc)) from None
        except BrokenPipeError:
            _reader_gone()
        except MemoryError:
            raise UserError("out of memory; try a smaller --ctx or --max-chars") from None
        except OSError as exc:
            raise _os_error(exc) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            if os.environ.get("LOCALSIDECAR_DEBUG"):
                raise
            raise _InternalError(exc) from None


def _reader_gone() -> None:
    """The reader of stdout went away (`localsidecar models | head`): stop quietly."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(141)


def _say(line: str) -> None:
    """The error line on stderr, control characters shown as escapes (a file
    name or document id may hold them), never raising."""
    try:
        click.echo(shown(line), err=True)
    except (OSError, ValueError):
        pass  # stderr is gone: the exit code still tells


def _os_error(exc: OSError) -> UserError:
    """One line for an OSError no command turned into a message (a write to
    stdout fails as the StdoutWriter's own StdoutError instead)."""
    if getattr(exc, "filename", None):
        return UserError(f"{exc.strerror or exc}: {exc.filename}")
    return UserError(f"{exc.strerror or exc}")


def _flush_stdout() -> None:
    """Flush stdout: a full stdout fails here (StdoutError, one line, exit 2),
    not in the interpreter's exit."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _reader_gone()
    except ValueError:
        pass  # stdout closed by the caller: nothing to flush


class _InternalError(click.ClickException):
    """An exception no command expected: a bug, reported in one line."""

    exit_code = 1

    def __init__(self, exc: BaseException) -> None:
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
        what = " ".join(f"{type(exc).__name__}: {exc}".split())
        super().__init__(
            f"internal error{where} ({what}); please report it with the output of "
            "`localsidecar doctor` (LOCALSIDECAR_DEBUG=1 shows the traceback)"
        )


# name -> (module, attribute, one-line help). Commands are imported only when
# they run (or when their own --help is asked for), so `localsidecar --help`,
# `models`, `pull` and `doctor` work without loading llama.cpp.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "run": ("run", "run_cmd", "Summaries by speculative decoding, hashtags by the draft."),
    "tag": ("tag", "tag_cmd", "Summaries and hashtags written into Markdown notes' front matter."),
    "acceptance": ("acceptance", "acceptance_cmd", "Acceptance rate α of the draft under each layout."),
    "sweep": ("acceptance", "sweep_cmd", "α by hidden suffix length and by summary depth."),
    "hashtags-eval": (
        "hashtags",
        "hashtags_eval_cmd",
        "Score the hashtags of each layout and of the target.",
    ),
    "quant": ("quant", "quant_cmd", "Compare quantizations of the draft or the target."),
    "models": ("models", "models_cmd", "List the named pairs and what is on this machine."),
    "pull": ("models", "pull_cmd", "Download a named pair into the hub cache."),
    "doctor": ("models", "doctor_cmd", "What a bug report needs: versions, threads, models."),
}


class _LazyGroup(_Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[name]
        return getattr(importlib.import_module(f"localsidecar.cli.{module}"), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, short) for name, (_, _, short) in COMMANDS.items()])


@click.group(cls=_LazyGroup, name="localsidecar")
@click.version_option(package_name="localsidecar")
def main() -> None:
    """Speculative summarization on llama.cpp, with hashtags written by the draft model."""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
