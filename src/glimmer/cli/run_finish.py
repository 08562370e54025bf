"""How a run on a real substrate ends on the terminal: its verdict (or the final BurnInRun as
JSON) and the report folder it was asked for. The same for this host and for Slurm."""

from __future__ import annotations

import sys
from pathlib import Path

from glimmer.api.dump import dump_json
from glimmer.api.run import BurnInRun
from glimmer.cli.output import console
from glimmer.cli.verdict_table import render_verdict
from glimmer.reports import write_reports
from glimmer.reports.folder import summary as report_summary


def show_final(final: BurnInRun, human: bool) -> None:
    """The verdict table for a person; the final BurnInRun as JSON otherwise."""
    if human:
        console.print()
        render_verdict(console, final, simulated=False)
    else:
        print(dump_json([final]), end="")


def report_to(final: BurnInRun, out_dir: Path, human: bool) -> None:
    """Write every report of ``final`` to ``out_dir`` and say where (stderr under JSON)."""
    paths = write_reports(final, out_dir, ["all"])
    line = report_summary(out_dir, paths)
    if human:
        console.print(f"Reports: {line}", markup=False, soft_wrap=True)
    else:
        print(f"reports: {line}", file=sys.stderr)
