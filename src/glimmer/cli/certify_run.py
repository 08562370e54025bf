"""``glimmer certify run`` and ``glimmer certify report``: a certification on the simulated fleet,
and the report card of a saved result (specs/certify.md §8).

Formatting only: selecting nodes, running categories, isolating and judging are
:mod:`glimmer.certify`'s work. Exit codes: 0 certified (PASSED, or INCOMPLETE when nodes of
other architectures were left out and nothing failed), 1 not certified (the failed nodes are
named), 2 bad input.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from glimmer.api.budget import check_size
from glimmer.backends.common.registry import SIM
from glimmer.certify.report_card import WIDTH, render
from glimmer.certify.result import FAILED, NOT_A_RESULT, CertResult, from_doc, to_doc
from glimmer.certify.spec import load_certification
from glimmer.cli.conventions import DEFAULT_SEED, SeedOpt
from glimmer.cli.output import console, print_json
from glimmer.errors import InputError, Location
from glimmer.fleet.faultspec import SYNTAX, parse_faults
from glimmer.fleet.load import load_topology


class Output(StrEnum):
    TABLE = "table"
    JSON = "json"


@contextmanager
def _flag(name: str) -> Iterator[None]:
    """An error about a flag's value that names no file is located at the flag, so the user
    knows which argument to fix."""
    try:
        yield
    except InputError as e:
        if e.location.file is None and e.location.field is None:
            raise InputError(e.message, Location(field=name)) from None
        raise


def _exit_code(result: CertResult) -> int:
    return 1 if result.result == FAILED else 0


def run(
    file: Annotated[str, typer.Option("--file", "-f", help="A Certification YAML file.")],
    fleet: Annotated[
        str, typer.Option("--fleet", help="Built-in fleet (ai-factory, hgx-1k …) or a file.")
    ] = "ai-factory",
    fault: Annotated[
        list[str] | None, typer.Option("--fault", help=f"Plant a fault: {SYNTAX}. Repeatable.")
    ] = None,
    seed: SeedOpt = DEFAULT_SEED,
    output: Annotated[
        Output, typer.Option("--output", "-o", help="table (the report card) or json.")
    ] = Output.TABLE,
) -> None:
    """Run a Certification's categories on the simulated fleet, isolate bad nodes and print the
    report card."""
    spec = load_certification(file)
    planted = parse_faults(list(fault or []))
    with _flag("--fleet"):
        topology = load_topology(fleet)
    with _flag("--fault"):
        twin = SIM.fleet_twin(topology, planted)
    result = SIM.certify(twin, spec, seed=seed, faults=[f.render() for f in planted])
    if output is Output.JSON:
        print_json(to_doc(result))
    else:
        typer.echo(render(result, card_width()), nl=False)
    raise typer.Exit(_exit_code(result))


def card_width() -> int:
    """The report card's width: the terminal's when it is narrower than the card, else the
    card's own (off a terminal, as in a CI log, the card is never narrowed)."""
    if console.is_terminal:
        return min(WIDTH, console.width)
    return WIDTH


def report(
    result: Annotated[str, typer.Argument(help="A result saved from `certify run -o json`.")],
) -> None:
    """Print the report card of a saved certification result."""
    check_size(result, "certification-result")  # refused before it is read when oversized
    try:
        doc = json.loads(Path(result).read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror}", Location(file=result)) from None
    except UnicodeDecodeError:
        raise InputError(f"{NOT_A_RESULT}: not UTF-8 text", Location(file=result)) from None
    except json.JSONDecodeError as e:
        raise InputError(f"{NOT_A_RESULT}: not JSON ({e})", Location(file=result)) from None
    got = from_doc(doc, result)
    typer.echo(render(got, card_width()), nl=False)
    raise typer.Exit(_exit_code(got))


def register(certify_app: typer.Typer) -> None:
    """Add ``run`` and ``report`` to the ``certify`` sub-app."""
    certify_app.command("run")(run)
    certify_app.command("report")(report)
