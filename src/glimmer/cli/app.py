"""The ``glimmer`` command: one Typer app; each command module registers its own commands.

Error policy lives here once: bad input (InputError) prints one line naming the file, object and
field and exits 2, never with a traceback.
"""

from __future__ import annotations

import sys

import typer

from glimmer import __version__
from glimmer.cli import (
    baseline_cmd,
    certify_cmd,
    demo,
    fingerprint_cmd,
    fleet,
    lint_cmd,
    metrics_cmd,
    profiles_cmd,
    report_cmd,
    resources,
    run_cmd,
    schedule_cmd,
    sink_cmd,
)
from glimmer.cli.help_style import CONTEXT_SETTINGS, is_usage_error, shows_help, styled, usage_line
from glimmer.errors import InputError, InputErrors

app = typer.Typer(
    name="glimmer",
    help="Evidence-backed fitness verdicts for GPU nodes, links and clusters.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings=CONTEXT_SETTINGS,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"glimmer {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_version, is_eager=True
    ),
) -> None:
    """glimmer: burn-in, certification and a simulated fleet, with fail-closed verdicts."""


run_cmd.register(app)
resources.register(app)
lint_cmd.register(app)
metrics_cmd.register(app)
fleet.register(app)
demo.register(app)
baseline_cmd.register(app)
report_cmd.register(app)
sink_cmd.register(app)
schedule_cmd.register(app)
fingerprint_cmd.register(app)
certify_cmd.register(app)
profiles_cmd.register(app)


def _say_error(error: InputError) -> None:
    # A plain write, not the rich console: an error stays on one line however long it is.
    print(f"error: {error}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script. Returns (and exits with) the process exit code.

    Every way a command line can be wrong ends here as exit 2 and one ``error:`` line on
    stderr, never a traceback: glimmer's own input errors (naming file, object and field) and
    Click's usage errors (an unknown option, a missing value, a bad choice) alike.
    """
    try:
        returned = styled(app).main(args=argv, prog_name="glimmer", standalone_mode=False)
        code: int = returned if isinstance(returned, int) else 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except InputErrors as errs:
        for e in errs.errors:
            _say_error(e)
        code = 2
    except InputError as e:
        _say_error(e)
        code = 2
    except Exception as e:
        if shows_help(e):
            # Rich help is printed as it is made; plain help comes back as the message.
            text = str(e.format_message())  # type: ignore[attr-defined]
            if text.strip():
                print(text)
            code = 2
        elif is_usage_error(e):
            print(usage_line(e), file=sys.stderr)
            code = e.exit_code  # type: ignore[attr-defined]
        elif type(e).__name__ == "Abort":
            print("Aborted.", file=sys.stderr)
            code = 1
        else:
            raise
    if argv is None:
        sys.exit(code)
    return code
