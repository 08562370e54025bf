"""The ``glimmer`` command: one Typer app; each command module registers its own commands.

A new command is a row of :data:`COMMANDS` (name, module, first paragraph of its help): the app
imports a command's module only when that command is resolved, so start-up stays what the
command uses (``--version`` and ``--help`` load no command module at all).

Error policy lives here once: bad input (InputError) prints one line naming the file, object and
field and exits 2, never with a traceback.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from glimmer import __version__

if TYPE_CHECKING:
    import typer

    from glimmer.errors import InputError

# Every command: its name, the module (under glimmer.cli) whose ``register(app)`` adds it, and
# the first paragraph of its help, in the order ``glimmer --help`` lists them. The app loads a
# command's module only when that command runs (or its own help is asked for), so a command
# pays for what it uses and ``--help`` for none of them; a test keeps this table equal to what
# the modules register.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    (
        "run",
        "run_cmd",
        "Run a burn-in profile on the simulated fleet, this host or a Slurm cluster and settle\n"
        "its verdict.",
    ),
    (
        "validate",
        "resources",
        "Check that every document in PATH... is a valid glimmer resource (burn-in, "
        "certification,\nFleet: a Fleet is checked by every rule `glimmer fleet validate` "
        "applies).",
    ),
    (
        "crds",
        "resources",
        "Print the CustomResourceDefinitions of the burn-in kinds as multi-document YAML.",
    ),
    (
        "lint",
        "lint_cmd",
        "Lint every gate: Malformed gates refuse a run, Unsound ones are reported and run anyway.",
    ),
    (
        "metrics",
        "metrics_cmd",
        "Show the metric registry, or what glimmer knows about one metric NAME.",
    ),
    (
        "demo",
        "demo",
        "Burn in the simulated ai-factory fleet and find the two faults planted in it.",
    ),
    (
        "merge",
        "merge_cmd",
        "Merge every Group rank's record into one verdict about the collective.",
    ),
    (
        "report",
        "report_cmd",
        "Write JUnit, HTML, Markdown and NVVS-compatible JSON reports of a run.",
    ),
    (
        "fingerprint",
        "fingerprint_cmd",
        "Print the NodeFingerprint (salient identity and its v1 digest) of this host or of\n"
        "simulated fleet nodes.",
    ),
    ("profiles", "profiles_cmd", "List the built-in profiles and tests, with each test's gates."),
    ("fleet", "fleet", "Declared GPU fleets: validate, inspect, export and generate them."),
    (
        "baseline",
        "baseline_cmd",
        "Fleet baselines: strip a profile's gates, measure, derive gates from the fleet.",
    ),
    (
        "sink",
        "sink_cmd",
        "Sinks: serve delivered envelopes as Prometheus metrics; flush the outbox.",
    ),
    ("schedule", "schedule_cmd", "BurnInSchedules: fire runs on a cron schedule."),
    ("operator", "operator_cmd", "The Kubernetes operator: reconcile BurnInRuns in a cluster."),
    (
        "reap",
        "slurm_run",
        "Release the nodes runs of a state directory left drained once those runs are gone.",
    ),
    (
        "certify",
        "certify_cmd",
        "Certification: render Kubeflow Trainer objects, run categories, report.",
    ),
)

VERSION_LINE = f"glimmer {__version__}"


def _build() -> typer.Typer:
    # Typer, Click and rich are imported here rather than at module level, so that
    # ``glimmer --version`` (answered before the app is built) imports none of them.
    import typer

    from glimmer.cli.help_style import CONTEXT_SETTINGS
    from glimmer.cli.lazy_group import CommandRef, lazy_group

    refs = [CommandRef(name, f"glimmer.cli.{module}", text) for name, module, text in COMMANDS]
    built = typer.Typer(
        name="glimmer",
        help="Evidence-backed fitness verdicts for GPU nodes, links and clusters.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings=CONTEXT_SETTINGS,
        cls=lazy_group(refs),
    )

    def _version(value: bool) -> None:
        if value:
            typer.echo(VERSION_LINE)
            raise typer.Exit(0)

    @built.callback()
    def _root(
        version: bool = typer.Option(
            False,
            "--version",
            help="Print the version and exit.",
            callback=_version,
            is_eager=True,
        ),
    ) -> None:
        """glimmer: burn-in, certification and a simulated fleet, with fail-closed verdicts."""

    return built


_built: list[typer.Typer] = []


def _the_app() -> typer.Typer:
    if not _built:
        _built.append(_build())
    return _built[0]


def __getattr__(name: str) -> typer.Typer:
    # ``app`` is built on first use (the tests and the docs checks walk it); main() builds it
    # only for a command line that is more than ``--version``.
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _the_app()


def _say_error(error: InputError) -> None:
    # A plain write, not the rich console: an error stays on one line however long it is.
    print(f"error: {error}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script. Returns (and exits with) the process exit code.

    Every way a command line can be wrong ends here as exit 2 and one ``error:`` line on
    stderr, never a traceback: glimmer's own input errors (naming file, object and field) and
    Click's usage errors (an unknown option, a missing value, a bad choice) alike.
    """
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        # The commonest question answered without building the app or importing Typer.
        print(VERSION_LINE)
        code = 0
    else:
        if argv is None:  # this process is the command (not a caller's own, such as a test's)
            from glimmer.cli.collector import tune

            tune()
        code = _run(args)
    if argv is None:
        sys.exit(code)
    return code


def _run(argv: list[str]) -> int:
    from glimmer.cli.help_style import is_usage_error, shows_help, styled, usage_line
    from glimmer.errors import InputError, InputErrors

    try:
        command = styled(_the_app())
        returned = command.main(args=argv, prog_name="glimmer", standalone_mode=False)
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
    return code
