"""Click entry point: the `localsidecar` group and the error boundary.

Every command raises UserError (or lets BackendError / OSError escape); the
group turns them into one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import sys

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
        except MemoryError:
            raise UserError("out of memory; try a smaller --ctx or --max-chars") from None
        except OSError as exc:
            name = f": {exc.filename}" if getattr(exc, "filename", None) else ""
            raise UserError(f"{exc.strerror or exc}{name}") from None


@click.group(cls=_Group)
@click.version_option(package_name="localsidecar")
def main() -> None:
    """Speculative summarization on llama.cpp, with hashtags written by the draft model."""


def _register() -> None:
    from .cli_run import run_cmd
    from .cli_models import doctor_cmd, models_cmd, pull_cmd
    from .cli_acceptance import acceptance_cmd, sweep_cmd

    main.add_command(run_cmd)
    main.add_command(pull_cmd)
    main.add_command(models_cmd)
    main.add_command(doctor_cmd)
    main.add_command(acceptance_cmd)
    main.add_command(sweep_cmd)


_register()

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
