"""The end of ``glimmer run``: the verdict table, the findings and the run verdict.

Rows are nodes (and whole Pair/Group units), columns the planned tests; a cell is the unit's
phase, and for a unit that did not pass, the reading that missed its gate or the start of the
runner's message. When that matrix is wider than the terminal, rich would have to break test
and metric names mid-word to fit it; the same verdicts are then shown one row per node, naming
only the tests that did not pass, so every word stays whole. Formatting only: phases,
violations and counters come from the run's status.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from glimmer.api.run import BurnInRun
from glimmer.cli.layout import fits, wide
from glimmer.cli.run_evidence import (
    Finding,
    cell_message,
    findings,
    gate_text,
    plan_of,
    reading_text,
    unit_label,
)
from glimmer.contract.vocab import TERMINAL_PHASES, Phase, Scope
from glimmer.engine.progress import progress_of
from glimmer.plan.units import PlanUnits, scope_of
from glimmer.reports.matrix import columns, judged_elsewhere, presented
from glimmer.verdict.text import plural

PHASE_STYLE = {
    Phase.PASSED: "green",
    Phase.FAILED: "bold red",
    Phase.ERROR: "bold yellow",
    Phase.SKIPPED: "dim",
    Phase.CANCELLED: "magenta",
    Phase.RUNNING: "cyan",
    Phase.PENDING: "dim",
}
CELL_MESSAGE_CHARS = 48
# Above this many rows, nodes where every unit passed fold into one row.
MAX_ROWS = 30


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cell(finding: Finding | None, phase: Phase) -> Text:
    text = Text(phase.value, style=PHASE_STYLE.get(phase, ""))
    if finding is not None:
        detail = (
            reading_text(finding.evidence[0])
            if finding.evidence
            else _short(cell_message(finding), CELL_MESSAGE_CHARS)
        )
        if detail:
            text.append(f"\n{detail}", style="")
    return text


def _rows(run: BurnInRun) -> tuple[list[str], dict[str, dict[str, Text]]]:
    """The planned tests and, per unit label, its cell for each test it has a result of."""
    plan = plan_of(run)
    every = [r for r in ((run.status.results if run.status else None) or ()) if not r.synthetic]
    # A gpuClass matrix shows as its parent, one verdict per node (reports.matrix).
    column = columns(plan)
    results = presented(every)
    names = [t.name for t in plan.tests] if plan else [r.name for r in results]
    tests = list(dict.fromkeys(column.get(t, t) for t in names))
    rows: dict[str, dict[str, Text]] = {}
    if plan is not None and any(scope_of(t.spec) is Scope.NODE for t in plan.tests):
        # Every distinct target has a row, even before any of its units has a result.
        for node in PlanUnits(plan).distinct:
            rows.setdefault(node, {})
    by_unit = {(f.unit, f.test): f for f in findings(run)}
    for result in results:
        label = unit_label(result)
        cell = _cell(by_unit.get((label, result.name)), result.phase)
        shown = rows.setdefault(label, {})
        name = column.get(result.name, result.name)
        # Two cells judging one node (both errored on a GPU no class lists): the first that
        # did not pass stays.
        if name not in shown or shown[name].plain.startswith(Phase.PASSED.value):
            shown[name] = cell
    return tests, rows


def _folded(tests: list[str], rows: dict[str, dict[str, Text]]) -> tuple[list[str], list[str]]:
    """Labels shown on a row of their own, and those folded into one "N more nodes" row."""
    passed = [label for label, cells in rows.items() if _all_passed(cells, tests)]
    if len(rows) > MAX_ROWS and len(passed) > 1:
        kept = set(passed)
        return [label for label in rows if label not in kept], passed
    return list(rows), []


def verdict_table(run: BurnInRun) -> Table:
    """Nodes (and Pair/Group units) × planned tests."""
    tests, rows = _rows(run)
    table = Table(box=box.SIMPLE_HEAD, title="Verdicts", title_justify="left", pad_edge=False)
    table.add_column("node", no_wrap=True)
    for test in tests:
        table.add_column(test, overflow="fold")
    shown, passed = _folded(tests, rows)
    for label in shown:
        cells = rows[label]
        table.add_row(label, *(cells.get(t, Text("-", style="dim")) for t in tests))
    if passed:
        cell = Text(Phase.PASSED.value, style=PHASE_STYLE[Phase.PASSED])
        table.add_row(f"{len(passed)} more nodes", *(cell for _ in tests))
    return table


def narrow_verdict_table(run: BurnInRun) -> Table:
    """One row per unit: how many planned tests passed and what each other test showed."""
    tests, rows = _rows(run)
    table = Table(box=box.SIMPLE_HEAD, title="Verdicts", title_justify="left", pad_edge=False)
    table.add_column("node", no_wrap=True)
    table.add_column("passed", no_wrap=True, justify="right")
    table.add_column("tests that did not pass")
    shown, passed = _folded(tests, rows)
    for label in shown:
        cells = rows[label]
        good = sum(1 for t in tests if t in cells and cells[t].plain == Phase.PASSED.value)
        others = Text()
        for test in tests:
            cell = cells.get(test)
            if cell is not None and cell.plain == Phase.PASSED.value:
                continue
            if others:
                others.append("\n")
            others.append(f"{test}: ", style="bold")
            if cell is None:
                others.append("-", style="dim")
                continue
            phase, _, detail = cell.plain.partition("\n")
            others.append(phase, style=cell.style)
            if detail:
                others.append(f" {detail}")
        table.add_row(label, f"{good}/{len(tests)}", others)
    if passed:
        table.add_row(f"{len(passed)} more nodes", f"{len(tests)}/{len(tests)}", "")
    return table


def fitting_verdict_table(console: Console, run: BurnInRun) -> Table:
    """The test matrix when it fits ``console`` at its natural width, else the narrow form."""
    table = verdict_table(run)
    if fits(console, table):
        return table
    return narrow_verdict_table(run)


def _all_passed(cells: dict[str, Text], tests: list[str]) -> bool:
    return all(t in cells and cells[t].plain == Phase.PASSED.value for t in tests)


def finding_line(finding: Finding) -> Text:
    """``✗ node  test  metric=value (gate >= 70)  message`` on one line."""
    line = Text("  ")
    line.append("✗ " if finding.phase is Phase.FAILED else "! ", style=PHASE_STYLE[finding.phase])
    line.append(f"{finding.unit}  {finding.test}  ", style="bold")
    line.append(f"{finding.phase.value}  ")
    if finding.evidence:
        parts = []
        for item in finding.evidence:
            reading = item.reading if item.reading is not None else "not reported"
            gate = gate_text(item)
            parts.append(f"{item.metric}={reading}" + (f" (gate {gate})" if gate else ""))
        line.append("; ".join(parts) + "  ", style="bold")
    line.append(finding.message or "(no message)")
    return line


def render_findings(console: Console, run: BurnInRun) -> None:
    """One line per unit that did not pass, or a line saying there is none."""
    found = findings(run)
    if not found:
        phase = run.status.phase if run.status else Phase.PENDING
        if phase in TERMINAL_PHASES:
            console.print("Findings: none — every unit passed or was skipped as declared.")
        else:
            # A suspended (or otherwise unsettled) run has no verdict: say so, never "passed".
            console.print(
                f"Findings: none so far — the run is still {phase.value}; "
                "units without a result have not been judged."
            )
        return
    console.print(f"Findings ({len(found)}):")
    for finding in found:
        console.print(finding_line(finding), soft_wrap=True)


def _took(run: BurnInRun, simulated: bool) -> str:
    status = run.status
    if status is None or status.started_at is None or status.finished_at is None:
        return ""
    seconds = (status.finished_at - status.started_at).total_seconds()
    hours, rest = divmod(round(seconds), 3600)
    clock = " simulated" if simulated else ""  # a real host's run took real time
    return f"; {hours}h{rest // 60:02d}m{rest % 60:02d}s{clock}"


def verdict_line(run: BurnInRun, simulated: bool = True) -> Text:
    """``Run acceptance: Failed — 108 passed, 2 failed, 0 errored, 0 skipped of 110 units``."""
    status = run.status
    units = progress_of(run).total
    phase = status.phase if status else Phase.PENDING
    line = Text("Run ")
    line.append(run.name, style="bold")
    line.append(": ")
    line.append(phase.value, style=PHASE_STYLE.get(phase, ""))
    if status is not None:
        declined = sum(judged_elsewhere(r) for r in status.results or [])
        why = f" ({declined} by per-product cells of another GPU class)" if declined else ""
        took = _took(run, simulated)
        line.append(
            f" — {status.passed} passed, {status.failed} failed, {status.errored} errored, "
            f"{status.skipped} skipped{why} of {units} {plural(units, 'unit')}{took}"
        )
    return line


def render_verdict(console: Console, run: BurnInRun, *, simulated: bool = True) -> None:
    """The table, the findings and the run verdict (its duration on the simulator's clock,
    or on a real one)."""
    out = wide(console)
    table = fitting_verdict_table(out, run)
    if table.row_count:
        out.print(table)
    render_findings(console, run)
    console.print()
    console.print(verdict_line(run, simulated), soft_wrap=True)
