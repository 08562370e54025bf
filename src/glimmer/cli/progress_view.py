"""Live progress of ``glimmer run``, fed by the driver's callback after every pass.

On a terminal: a progress bar and a compact grid of the units by node and test, one glyph per
phase, redrawn at most every ``interval`` seconds of wall time (a simulated run makes hundreds
of passes a second). Elsewhere (a pipe, a file, a test): no live view, only a few plain lines
as the settled units cross each quarter. The phases come from
:func:`glimmer.engine.progress.progress_of`; nothing is decided here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from glimmer.api.pinned import PLAN_ANNOTATION
from glimmer.api.run import BurnInRun
from glimmer.contract.vocab import Phase
from glimmer.engine.progress import RunProgress, progress_of

if TYPE_CHECKING:
    # Annotation only: the name imports the simulator.
    from glimmer.backends.common.registry import SimBackend

GLYPH: dict[Phase | None, tuple[str, str]] = {
    None: ("·", "dim"),
    Phase.PENDING: ("·", "dim"),
    Phase.RUNNING: ("▸", "cyan"),
    Phase.PASSED: ("✓", "green"),
    Phase.FAILED: ("✗", "bold red"),
    Phase.ERROR: ("!", "bold yellow"),
    Phase.SKIPPED: ("-", "dim"),
    Phase.CANCELLED: ("c", "magenta"),
}
MAX_ROWS = 24
QUARTERS = (0.25, 0.5, 0.75, 1.0)


def _clock(seconds: float) -> str:
    hours, rest = divmod(int(seconds), 3600)
    return f"{hours:d}:{rest // 60:02d}:{rest % 60:02d}"


def _interesting(phases: list[Phase | None]) -> int:
    # Rows with a unit that did not pass first, then rows at work, then the rest.
    if any(p in (Phase.FAILED, Phase.ERROR, Phase.CANCELLED) for p in phases):
        return 0
    return 1 if Phase.RUNNING in phases else 2


def unit_grid(progress: RunProgress) -> Table:
    """Nodes (rows) × tests (numbered columns), a glyph per unit; the busiest rows first."""
    tests = list(dict.fromkeys(test for test, _ in progress.units))
    nodes = list(dict.fromkeys(node for _, node in progress.units))
    table = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False)
    table.add_column("node", no_wrap=True, style="bold")
    for i, _ in enumerate(tests, 1):
        table.add_column(str(i), justify="center")
    rows = [(node, [progress.units.get((t, node)) for t in tests]) for node in nodes]
    shown = {node for node, _ in sorted(rows, key=lambda row: _interesting(row[1]))[:MAX_ROWS]}
    for node, phases in rows:
        if node not in shown:
            continue
        cells = []
        for test, phase in zip(tests, phases, strict=True):
            glyph, style = (
                GLYPH.get(phase, ("?", "")) if (test, node) in progress.units else ("", "")
            )
            cells.append(Text(glyph, style=style))
        table.add_row(node, *cells)
    if len(rows) > MAX_ROWS:
        table.add_row(Text(f"… {len(rows) - MAX_ROWS} more nodes", style="dim"))
    return table


def legend(progress: RunProgress) -> Text:
    """``1 host-fault-counters  2 sustained-clock …`` and what each glyph means."""
    tests = list(dict.fromkeys(test for test, _ in progress.units))
    text = Text("  ".join(f"{i} {t}" for i, t in enumerate(tests, 1)), style="dim")
    text.append("\n")
    for phase in (Phase.RUNNING, Phase.PASSED, Phase.FAILED, Phase.ERROR, Phase.SKIPPED):
        glyph, style = GLYPH[phase]
        text.append(glyph, style=style)
        text.append(f" {phase.value.lower()}  ", style="dim")
    return text


def summary(progress: RunProgress, simulated: float) -> str:
    """``55/110 units settled, 22 running, 1 not passed — simulated 0:05:32``."""
    bad = sum(
        1 for p in progress.units.values() if p in (Phase.FAILED, Phase.ERROR, Phase.CANCELLED)
    )
    return (
        f"{progress.settled}/{progress.total} units settled, {progress.running} running, "
        f"{bad} not passed — simulated {_clock(simulated)}"
    )


class ProgressView:
    """A context manager whose :meth:`update` is the driver's progress callback."""

    def __init__(
        self,
        console: Console,
        *,
        live: bool,
        interval: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console
        self.interval = interval
        self.clock = clock
        self._live = Live(console=console, auto_refresh=False) if live else None
        self._last_draw = -float("inf")
        self._start: float | None = None
        self._quarter = 0
        self._latest: tuple[BurnInRun, float] | None = None
        self._plan: tuple[str, int] | None = None

    def __enter__(self) -> ProgressView:
        if self._live is not None:
            self._live.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._live is not None:
            if self._latest is not None:
                run, simulated = self._latest
                self._live.update(self._render(progress_of(run), simulated), refresh=True)
            self._live.__exit__(kind, error, trace)

    def update(self, run: BurnInRun, backend: SimBackend) -> None:
        """Record the run after a pass; redraw or print when it is time.

        Reading every unit's phase costs a walk over the plan and the results, too much to do
        after each of the thousands of passes of a large run: between draws only the status
        counters and the number of planned units (read once per plan) are looked at.
        """
        if self._start is None:
            self._start = backend.t
        simulated = backend.t - self._start
        self._latest = (run, simulated)
        if self._live is not None:
            now = self.clock()
            if now - self._last_draw >= self.interval:
                self._last_draw = now
                self._live.update(self._render(progress_of(run), simulated), refresh=True)
            return
        total = self._total(run)
        status = run.status
        counted = status.passed + status.failed + status.errored + status.skipped if status else 0
        crossed = sum(1 for q in QUARTERS if total and counted >= q * total)
        if crossed > self._quarter:
            self._quarter = crossed
            progress = progress_of(run)
            pct = round(progress.fraction * 100)
            self.console.print(f"  [{pct:3d}%] {summary(progress, simulated)}", markup=False)

    def _total(self, run: BurnInRun) -> int:
        plan = (run.metadata.annotations or {}).get(PLAN_ANNOTATION)
        if plan is None or self._plan is None or plan != self._plan[0]:
            self._plan = (plan or "", progress_of(run).total)
        return self._plan[1]

    def _render(self, progress: RunProgress, simulated: float) -> RenderableType:
        bar = Table.grid(padding=(0, 1))
        bar.add_row(
            ProgressBar(total=max(progress.total, 1), completed=progress.settled, width=40),
            Text(summary(progress, simulated)),
        )
        return Group(bar, unit_grid(progress), legend(progress))
