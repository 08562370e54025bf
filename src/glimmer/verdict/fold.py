"""Segmented soaks: folding windows into one aggregate, and proving a soak lost early (§2.12).

A soak's verdict is about the whole soak, so each clean segment's readings are folded by the
registry's Aggregation: counters sum, floors keep the worst (Min), ceilings keep the worst
(Max), nameplates and lifetime counters keep the newest (Last). A bad reading (non-numeric or
non-finite) is sticky under Sum/Min/Max, so the aggregate's gate fails closed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from glimmer.contract.registry import Aggregation, aggregation_of
from glimmer.contract.vocab import Comparison, Threshold
from glimmer.verdict.evaluate import Cause, Violation, evaluate
from glimmer.verdict.numbers import format_fixed, read_float


def fold_value(aggregation: Aggregation, prior: str, new: str) -> str:
    """Fold one new window reading into the prior aggregate value of one metric."""
    if aggregation is Aggregation.LAST:
        return new
    old_reading, new_reading = read_float(prior), read_float(new)
    if not old_reading.finite:
        return prior  # a bad aggregate stays bad
    if not new_reading.finite:
        return new
    assert old_reading.value is not None and new_reading.value is not None
    if aggregation is Aggregation.SUM:
        return format_fixed(old_reading.value + new_reading.value)
    if aggregation is Aggregation.MIN:
        return new if new_reading.value < old_reading.value else prior
    return new if new_reading.value > old_reading.value else prior  # MAX


def fold_metrics(aggregate: Mapping[str, str], window: Mapping[str, str]) -> dict[str, str]:
    """Fold one window's readings into the aggregate (a new dict; neither input changes).

    A key new to the aggregate is copied; otherwise it is combined by its registry
    Aggregation (unregistered names: Last). Sums are written in Go's shortest fixed form (3,
    not 3.0); Min and Max keep the original string of the winning reading.
    """
    folded = dict(aggregate)
    for name, value in window.items():
        folded[name] = (
            fold_value(aggregation_of(name), folded[name], value) if name in folded else value
        )
    return folded


def fold_unmeasurable(
    prior: Iterable[str], declared: Iterable[str], aggregate: Mapping[str, str]
) -> frozenset[str]:
    """Names still unmeasurable after a window: every ``n/a`` so far, less those that now have
    an aggregated value (a later window that measured a key outranks an earlier ``n/a``)."""
    return (frozenset(prior) | frozenset(declared)) - aggregate.keys()


def segments_required(duration_seconds: int, segment_seconds: int) -> int:
    """``ceil(duration / segment)`` with the default duration 600 for 0, at least 1."""
    duration = duration_seconds if duration_seconds > 0 else 600
    if segment_seconds <= 0:
        return 1
    return max(1, -(-duration // segment_seconds))


def _provable(violation: Violation, gate: Threshold, aggregate: Mapping[str, str]) -> bool:
    """True when no later window could retract this violation (the fold is monotone in the
    gated direction)."""
    if violation.cause != Cause.MEASUREMENT:
        return False
    aggregation = aggregation_of(gate.metric)
    comparison = gate.comparison
    if aggregation is Aggregation.SUM and comparison == Comparison.LESS_THAN_OR_EQUAL:
        return True
    if aggregation is Aggregation.SUM and comparison == Comparison.EQUAL:
        got, want = read_float(aggregate[gate.metric]), read_float(gate.value)
        return got.value is not None and want.value is not None and got.value > want.value
    if aggregation is Aggregation.MIN and comparison == Comparison.GREATER_THAN_OR_EQUAL:
        return True
    return aggregation is Aggregation.MAX and comparison == Comparison.LESS_THAN_OR_EQUAL


def provable_violations(
    aggregate: Mapping[str, str],
    unmeasurable: Iterable[str],
    thresholds: Sequence[Threshold],
) -> tuple[Violation, ...]:
    """The violations of the aggregate so far that no remaining segment could undo.

    Only hardware findings (cause Measurement) count, and only where the fold moves one way:
    a Sum under LessThanOrEqual, a Sum under Equal once it is above the value, a Min under
    GreaterThanOrEqual, a Max under LessThanOrEqual. A metric not reported yet never aborts.
    """
    result = evaluate(aggregate, unmeasurable, thresholds)
    return tuple(v for v in result.violations if _provable(v, thresholds[v.index], aggregate))
