"""``glimmer report RUN [--format F] [-o DIR] [--fleet F]``: reports of a finished run.

RUN is a BurnInRun as ``glimmer run --output json`` writes it (JSON or YAML). Formatting only:
the reports are glimmer.reports' work. Bad input (an unreadable run, an unknown format or
fleet) is one line on stderr and exit 2; on success the paths written are printed, one a line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from glimmer.fleet.load import load_topology
from glimmer.fleet.topology import Topology
from glimmer.reports import formats_of, read_run, write_reports

DEFAULT_DIR = "glimmer-report"


def report(
    run: Annotated[
        str,
        typer.Argument(
            metavar="RUN", help="A BurnInRun file, as written by `glimmer run --output json`."
        ),
    ],
    formats: Annotated[
        list[str] | None,
        typer.Option(
            "--format",
            "-f",
            help="junit, html, md, nvvs or all (default); repeat or comma-separate for several.",
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--output-dir", "-o", help="Folder to write into (created if missing).")
    ] = Path(DEFAULT_DIR),
    fleet: Annotated[
        str | None,
        typer.Option(
            "--fleet",
            help="Built-in fleet name or Fleet file: places the run's nodes in their racks on "
            "the HTML map (otherwise nodes are grouped by host-name prefix).",
        ),
    ] = None,
) -> None:
    """Write JUnit, HTML, Markdown and NVVS-compatible JSON reports of a run."""
    wanted = formats_of(formats or ["all"])
    burnin_run = read_run(run)
    topology: Topology | None = load_topology(fleet) if fleet else None
    for path in write_reports(burnin_run, out, wanted, topology):
        typer.echo(str(path))


def register(app: typer.Typer) -> None:
    """Add ``glimmer report`` to the app."""
    app.command("report")(report)
