"""``glimmer lint [PATH...]``: the threshold linter over tests, profiles and variant cells.

Formatting only; the rules live in glimmer.verdict.lint and are applied by glimmer.plan.lint.
Exit 0 clean, 1 when only Unsound gates were found, 2 when any gate is Malformed or an input
does not load.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from rich.markup import escape

from glimmer.api.load import load_paths, silent_files
from glimmer.cli.fleet import fleet_problems
from glimmer.cli.output import console, print_json
from glimmer.errors import InputErrors
from glimmer.plan.builtin import builtin_profiles_dir
from glimmer.plan.lint import Finding, lint_loaded
from glimmer.verdict.lint import Severity


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"


def exit_code_of(findings: list[Finding]) -> int:
    """0 clean, 1 Unsound only, 2 any Malformed."""
    if any(f.severity is Severity.MALFORMED for f in findings):
        return 2
    return 1 if findings else 0


def _where(f: Finding) -> str:
    loc = f.location
    where = loc.file or ""
    if loc.line is not None:
        where += f":{loc.line}"
    return where


def _as_json(f: Finding) -> dict[str, object]:
    loc = f.location
    return {
        "file": loc.file,
        "line": loc.line,
        "document": loc.document,
        "object": loc.obj,
        "test": f.test,
        "field": loc.field,
        "severity": f.severity.value,
        "metric": f.problem.metric or None,
        "reason": f.problem.reason,
    }


def _report(findings: list[Finding], checked: int) -> None:
    # One finding a line, compiler style, so long reasons stay readable and greppable.
    for f in findings:
        style = "red" if f.severity is Severity.MALFORMED else "yellow"
        field = f" {f.location.field}" if f.location.field else ""
        console.print(
            f"{escape(_where(f))}: {escape(f.location.obj or '')} [bold]{escape(f.test)}[/bold]"
            f"{escape(field)} [{style}]{f.severity.value}[/{style}]: {escape(f.problem.reason)}",
            soft_wrap=True,
        )
    malformed = sum(1 for f in findings if f.severity is Severity.MALFORMED)
    console.print(
        f"lint: {checked} object(s) checked, {malformed} malformed, "
        f"{len(findings) - malformed} unsound"
    )


def lint(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[PATH]...",
            help="Files or folders of tests and profiles ('-' reads stdin). "
            "Without a PATH, the built-in profiles are linted.",
        ),
    ] = None,
    output: Annotated[
        OutputFormat, typer.Option("--output", "-o", help="table (default) or json.")
    ] = OutputFormat.TABLE,
) -> None:
    """Lint every gate: Malformed gates refuse a run, Unsound ones are reported and run anyway."""
    given = paths or [str(builtin_profiles_dir())]
    loaded = load_paths(given)
    silent = silent_files(given, loaded, [])
    if silent:
        raise InputErrors(silent)
    # A Fleet has no gates to lint, but it is glimmer's own kind: it is checked by the fleet
    # rules (as `glimmer validate` does) and counted, rather than refused as unknown.
    problems = fleet_problems(loaded)
    if problems:
        raise InputErrors(problems)
    findings = lint_loaded(loaded)
    if output is OutputFormat.JSON:
        print_json({"checked": len(loaded), "problems": [_as_json(f) for f in findings]})
    else:
        _report(findings, len(loaded))
    raise typer.Exit(exit_code_of(findings))


def register(app: typer.Typer) -> None:
    """Add ``glimmer lint`` to the app."""
    app.command("lint")(lint)
