"""``glimmer report RUN [--format F] [-d DIR] [--fleet F]``: reports of a finished run.

RUN is a BurnInRun as ``glimmer run --output json`` writes it (JSON or YAML). Formatting only:
the reports are glimmer.reports' work. Bad input (an unreadable run, an unknown format or
fleet, a folder the reports cannot go to) is one line on stderr and exit 2, found before
anything is written; on success one line says where the reports went and how many of each
kind, as ``glimmer run`` does (a 10,000-node run writes 10,003 files).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from glimmer.fleet.load import load_topology
from glimmer.fleet.topology import Topology
from glimmer.reports import formats_of, read_run, write_reports
from glimmer.reports.folder import refuse_unwritable, summary

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
            help="junit, html, md, nvvs or all (default); repeat or comma-separate for several.",
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--output-dir", "-d", help="Folder to write into (created if missing).")
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
    refuse_unwritable(out, "--output-dir")
    burnin_run = read_run(run)
    topology: Topology | None = load_topology(fleet) if fleet else None
    written = write_reports(burnin_run, out, wanted, topology)
    typer.echo(f"Reports: {summary(out, written)}")


def register(app: typer.Typer) -> None:
    """Add ``glimmer report`` to the app."""
    app.command("report")(report)
