"""The evidence behind a settled result: which gates its readings miss, for a reader.

A result's recorded violations are the gates that decided it. A runner-declared Fail records
none (the runner's own finding is honoured, §2.11b), yet its readings usually still show the
number that fell short; re-reading the test's gates over the recorded readings names it. Only
measured shortfalls are named then, never a gate whose metric a failing runner did not print.
Nothing here changes a verdict: it explains one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from glimmer.contract.registry import Aggregation, aggregation_of
from glimmer.contract.vocab import Threshold
from glimmer.verdict.evaluate import Cause, evaluate


@dataclass(frozen=True)
class RecordedViolation:
    """A violation as a result stores it: the gate's index in the test's list and its metric."""

    index: int
    metric: str
    kind: str = ""
    reason: str = ""


@dataclass(frozen=True)
class GateEvidence:
    """One gate a result's readings miss: the reading (None when not reported) and the gate."""

    metric: str
    reading: str | None
    comparison: str  # "" when the gate is not known (a violation of a gate no longer listed)
    bound: str
    kind: str
    reason: str
    recorded: bool  # True: a recorded violation; False: re-read from the readings


def _gate_of(index: int, metric: str, gates: Sequence[Threshold]) -> Threshold | None:
    if 0 <= index < len(gates) and gates[index].metric == metric:
        return gates[index]
    return next((g for g in gates if g.metric == metric), None)


def gate_evidence(
    metrics: Mapping[str, str],
    unmeasurable: Iterable[str],
    gates: Sequence[Threshold],
    recorded: Sequence[RecordedViolation] = (),
    *,
    cut_short: bool = False,
) -> list[GateEvidence]:
    """The gates a settled result's readings miss, in gate order.

    Recorded violations win: each is matched to its gate by index (or metric). Without any, the
    gates are evaluated over the readings and only measured shortfalls (``Unsatisfied``) are
    returned. Empty when the readings meet every gate: the runner's message is the evidence.
    ``cut_short``: a segmented soak that ended before its last window; metrics that accumulate
    across windows (Sum) had no chance to reach their gates, so they are never named as the
    shortfall.
    """
    if recorded:
        out = []
        for v in recorded:
            gate = _gate_of(v.index, v.metric, gates)
            out.append(
                GateEvidence(
                    metric=v.metric,
                    reading=metrics.get(v.metric),
                    comparison=gate.comparison if gate else "",
                    bound=gate.value if gate else "",
                    kind=v.kind,
                    reason=v.reason,
                    recorded=True,
                )
            )
        return out
    evaluation = evaluate(metrics, unmeasurable, gates)
    return [
        GateEvidence(
            metric=v.metric,
            reading=metrics.get(v.metric),
            comparison=gates[v.index].comparison,
            bound=gates[v.index].value,
            kind=v.kind,
            reason=v.reason,
            recorded=False,
        )
        for v in evaluation.violations
        if v.cause == Cause.MEASUREMENT
        and not (cut_short and aggregation_of(v.metric) is Aggregation.SUM)
    ]
