"""Live progress of a run, read from the run object alone (for progress bars and tables).

Every planned unit (:mod:`glimmer.plan.units`: (test, node) per distinct target of a Node test,
one per Pair or Group test) with the phase of its result, or None while it has none yet. Works
on any substrate: the status is the truth.
"""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.api.pinned import PlanError, decode_plan
from glimmer.api.run import BurnInRun
from glimmer.contract.vocab import TERMINAL_PHASES, Phase
from glimmer.engine.keys import PLAN_ANNOTATION
from glimmer.plan.units import Key, PlanUnits

Unit = Key  # (planned test, first node of the unit)


@dataclass(frozen=True)
class RunProgress:
    """How far a run is: units planned, settled and running, and each unit's phase."""

    phase: Phase
    units: dict[Unit, Phase | None]

    @property
    def total(self) -> int:
        return len(self.units)

    @property
    def settled(self) -> int:
        return sum(1 for p in self.units.values() if p in TERMINAL_PHASES)

    @property
    def running(self) -> int:
        return sum(1 for p in self.units.values() if p is Phase.RUNNING)

    @property
    def fraction(self) -> float:
        return self.settled / self.total if self.total else 0.0


def progress_of(run: BurnInRun) -> RunProgress:
    """The progress of ``run``; a run with no readable plan has only its results."""
    status = run.status
    phase = status.phase if status else Phase.PENDING
    units: dict[Unit, Phase | None] = {}
    value = (run.metadata.annotations or {}).get(PLAN_ANNOTATION)
    if value is not None:
        try:
            plan = decode_plan(value)
        except PlanError:
            plan = None
        if plan is not None:
            units = dict.fromkeys(unit.key for unit in PlanUnits(plan))
    for result in (status.results if status else None) or ():
        units[(result.name, (result.nodes or [""])[0])] = result.phase
    return RunProgress(phase, units)
