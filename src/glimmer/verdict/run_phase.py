"""The run's phase over its results, and the four counters (§2.11c).

Only required results decide: Failed beats Error, Error beats Passed. Skipped never decides (a
run whose every test skipped is Passed), and an optional test's failure is recorded but does
not fail the run. A synthetic result (empty kind: the run could not be resolved or admitted) is
always required.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from glimmer.contract.vocab import Phase


@dataclass(frozen=True)
class ResultView:
    """What the run phase needs to know about one result."""

    kind: str
    phase: Phase
    required: bool = True

    @property
    def synthetic(self) -> bool:
        return self.kind == ""

    @property
    def decides(self) -> bool:
        return self.required or self.synthetic


@dataclass(frozen=True)
class Counters:
    """Counts of results by terminal phase; four separate numbers, never folded together."""

    passed: int = 0
    failed: int = 0
    errored: int = 0
    skipped: int = 0


def run_phase(results: Iterable[ResultView]) -> Phase:
    """Failed if a deciding result Failed, else Error if one is Error, else Passed."""
    deciding = [r.phase for r in results if r.decides]
    if Phase.FAILED in deciding:
        return Phase.FAILED
    if Phase.ERROR in deciding:
        return Phase.ERROR
    return Phase.PASSED


def count_results(results: Iterable[ResultView]) -> Counters:
    """Count every result (required or not) by its phase; other phases are not counted."""
    phases = [r.phase for r in results]
    return Counters(
        passed=phases.count(Phase.PASSED),
        failed=phases.count(Phase.FAILED),
        errored=phases.count(Phase.ERROR),
        skipped=phases.count(Phase.SKIPPED),
    )
