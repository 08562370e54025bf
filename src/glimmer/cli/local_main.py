"""``glimmer run --backend local``: this host through the one engine, as an exit code.

The flags were read by :mod:`.run_cmd`; preparing the run (its inputs, the backend over the
state directory, this host's half of Pair and Group tests) is :mod:`.local_run`'s.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from glimmer.cli import local_run
from glimmer.cli.local_halves import describe_half, half_lines
from glimmer.cli.local_run import LocalFlags
from glimmer.cli.output import console, print_json
from glimmer.cli.plan_view import plan_json, render_plan
from glimmer.cli.run_cmd import EXIT_CODES, RunOutput, exit_code
from glimmer.cli.run_finish import report_to, show_final
from glimmer.cli.run_inputs import SinkFlags, sink_set_for
from glimmer.contract.vocab import Phase
from glimmer.plan.decision import Refused
from glimmer.plan.preview import preview
from glimmer.reports.folder import refuse_unwritable


def main(
    flags: LocalFlags,
    *,
    output: RunOutput,
    dry: bool,
    report: str | None,
    sinks: SinkFlags,
) -> int:
    """``--backend local``: this host through the one engine, as an exit code."""
    local = local_run.prepare(flags, lambda objects: sink_set_for(sinks, objects, simulated=False))
    out_dir = Path(report) if report is not None else None
    if out_dir is not None:
        refuse_unwritable(out_dir, "--report")
    human = output is RunOutput.TABLE
    if dry:
        decision = preview(local.run, local.profile, local.tests, local.nodes, datetime.now(UTC))
        if human:
            render_plan(console, local.run, decision)
            for line in half_lines(local.halved, local.half):
                console.print(f"Half: {line}", markup=False, soft_wrap=True)
        else:
            print_json(plan_json(local.run, decision))
        return EXIT_CODES[Phase.ERROR] if isinstance(decision, Refused) else 0
    for line in local.warnings:
        print(f"warning: {line}", file=sys.stderr)
    how = local_run.start_or_resume(local.backend, local.run)
    if human:
        console.print(
            f"[bold]glimmer run[/bold] {local.run.name}: BurnInRun on this host (backend local)"
        )
        say = console.print
        say(f"  node     {local.node}", markup=False)
        say(f"  profile  {local.run.spec.profile_ref}", markup=False)
        say(f"  state    {local.state_dir} ({how})", markup=False, soft_wrap=True)
        if local.half is not None:
            say(f"  half     {describe_half(local.half)}", markup=False, soft_wrap=True)
        console.print()
    final = local_run.drive(local, human)
    show_final(final, human)
    if flags.results_dir is not None:
        from glimmer.cli.results_dir import write_results

        written = write_results(Path(flags.results_dir), local, final)
        if human:
            console.print(f"Results: {written}", markup=False, soft_wrap=True)
        else:
            print(f"results: {written}", file=sys.stderr)
    if out_dir is not None:
        report_to(final, out_dir, human)
    return exit_code(final)
