"""Click entry point: the `localsidecar` group and the error boundary.

Every command raises UserError (or lets BackendError / OSError escape); the
group turns them into one line on stderr and exit code 2, never a traceback.
Anything else is a bug: one line naming it and where it happened, exit code 1
(LOCALSIDECAR_DEBUG=1 shows the traceback instead).
"""

from __future__ import annotations

import os
import sys
import traceback

import click

from .errors import UserError


class _Group(click.Group):
    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Like Click's standalone mode, but every error is one line on stderr."""
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as exc:
            cmd = exc.ctx.command_path if exc.ctx else "localsidecar"
            click.echo(f"Error: {exc.format_message()} (see '{cmd} --help')", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(130)
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)

    def invoke(self, ctx: click.Context):
        from .backend import BackendError

        try:
            return super().invoke(ctx)
        except BackendError as exc:
            raise UserError(str(exc)) from None
        except BrokenPipeError:
            # the reader went away (`localsidecar models | head`): stop quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)
        except MemoryError:
            raise UserError("out of memory; try a smaller --ctx or --max-chars") from None
        except OSError as exc:
            name = f": {exc.filename}" if getattr(exc, "filename", None) else ""
            raise UserError(f"{exc.strerror or exc}{name}") from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            if os.environ.get("LOCALSIDECAR_DEBUG"):
                raise
            raise _InternalError(exc) from None


class _InternalError(click.ClickException):
    """An exception no command expected: a bug, reported in one line."""

    exit_code = 1

    def __init__(self, exc: BaseException) -> None:
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
        what = " ".join(f"{type(exc).__name__}: {exc}".split())
        super().__init__(f"internal error{where} ({what}); please report it with the output of "
                         "`localsidecar doctor` (LOCALSIDECAR_DEBUG=1 shows the traceback)")


@click.group(cls=_Group, name="localsidecar")
@click.version_option(package_name="localsidecar")
def main() -> None:
    """Speculative summarization on llama.cpp, with hashtags written by the draft model."""


def _register() -> None:
    from .cli_run import run_cmd
    from .cli_models import doctor_cmd, models_cmd, pull_cmd
    from .cli_acceptance import acceptance_cmd, sweep_cmd
    from .cli_hashtags import hashtags_eval_cmd
    from .cli_quant import quant_cmd

    main.add_command(run_cmd)
    main.add_command(pull_cmd)
    main.add_command(models_cmd)
    main.add_command(doctor_cmd)
    main.add_command(acceptance_cmd)
    main.add_command(sweep_cmd)
    main.add_command(hashtags_eval_cmd)
    main.add_command(quant_cmd)


_register()

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
