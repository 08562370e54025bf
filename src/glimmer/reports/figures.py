"""The numbers behind the charts: each gated metric across units, and soak series over time.

Values are parsed here once. A value that is missing or not a finite number is kept as such
(``value=None``) so a chart can list it beside the plot instead of dropping it or drawing a 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from glimmer.contract.registry import Aggregation, aggregation_of
from glimmer.reports.units import Gate, Unit
from glimmer.verdict.evaluate import compare


@dataclass(frozen=True)
class Point:
    """One unit's value of a gated metric."""

    label: str  # the node, or the link/collective
    raw: str | None  # as reported; None when not reported
    value: float | None  # None when not reported or not a finite number
    word: str  # the unit's status word
    violated: bool  # this metric is among the gates the unit missed
    outside: bool  # violated, or the value lies on the failing side of the gate
    met: bool = False  # the unit failed, but on another gate: this reading meets this one

    @property
    def drawn(self) -> str:
        """The word this chart draws: a failed unit's reading that meets this gate is drawn as
        passing it (the chart is about this gate; the unit's verdict is in its tooltip)."""
        return "PASS" if self.met else self.word


@dataclass(frozen=True)
class Distribution:
    """A gated metric of one test across every unit that ran it."""

    test: str
    gate: Gate
    points: tuple[Point, ...]


@dataclass(frozen=True)
class Sample:
    """One reading of a soak: seconds since the run started and the value then."""

    offset_s: float
    value: float
    checkpoint: bool  # read mid-window (the attempt had not finished)


@dataclass(frozen=True)
class Series:
    """One unit's readings of a metric over a soak."""

    label: str
    word: str
    samples: tuple[Sample, ...]
    met: bool = False  # the unit failed, but not on this gate

    @property
    def drawn(self) -> str:
        return "PASS" if self.met else self.word


@dataclass(frozen=True)
class SeriesChart:
    """One gated metric of a soaked or checkpointed test, one series per unit."""

    test: str
    gate: Gate
    cumulative: bool  # Sum metrics are drawn as the running total the gate applies to
    series: tuple[Series, ...]


def number(raw: str | None) -> float | None:
    """A finite number, or None (missing, words, NaN and infinities are not drawn)."""
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _point(unit: Unit, gate: Gate) -> Point:
    raw = unit.metric(gate.metric)
    value = number(raw)
    bound = number(gate.value)
    violated = gate.metric in unit.missed
    # For display only: the verdict was settled by the engine; this marks where a dot falls.
    # An open result's value is a partial reading (a soak's total so far), not yet beyond.
    settled = unit.word not in ("RUNNING", "PENDING")
    beyond = (
        settled
        and value is not None
        and bound is not None
        and not compare(value, gate.comparison, bound)
    )
    met = unit.word == "FAIL" and value is not None and not (violated or beyond)
    return Point(unit.label, raw, value, unit.word, violated, violated or beyond, met)


def distributions(units: Sequence[Unit], tests: Sequence[str]) -> tuple[Distribution, ...]:
    """One distribution per (test, gated metric), in test order then gate order."""
    out: list[Distribution] = []
    for test in tests:
        ran = [u for u in units if u.name == test and not u.synthetic]
        if not ran:
            continue
        seen: set[str] = set()
        for gate in ran[0].gates:
            if gate.metric in seen:
                continue
            seen.add(gate.metric)
            points = tuple(_point(u, gate) for u in ran)
            out.append(Distribution(test, gate, points))
    return tuple(out)


def _samples(unit: Unit, metric: str, start: datetime, cumulative: bool) -> tuple[Sample, ...]:
    samples: list[Sample] = []
    total = 0.0
    for attempt in unit.attempts:
        # An errored window contributes nothing to the soak's fold, so it is not drawn either.
        if attempt.phase == "Error":
            continue
        at = attempt.finished_at or attempt.last_checkpoint_at
        value = number((attempt.metrics or {}).get(metric))
        if at is None or value is None:
            continue
        checkpoint = attempt.finished_at is None
        if cumulative:
            value = total + value
            if not checkpoint:
                total = value
        samples.append(Sample((at - start).total_seconds(), value, checkpoint))
    return tuple(samples)


def _series(unit: Unit, gate: Gate, start: datetime, cumulative: bool) -> Series:
    samples = _samples(unit, gate.metric, start, cumulative)
    # A running total is judged at its end; a per-window reading in every window.
    judged = samples[-1:] if cumulative else samples
    bound = number(gate.value)
    within = bound is not None and all(compare(s.value, gate.comparison, bound) for s in judged)
    met = unit.word == "FAIL" and bool(judged) and within and gate.metric not in unit.missed
    return Series(unit.label, unit.word, samples, met)


def soak_series(
    units: Sequence[Unit],
    tests: Sequence[str],
    checkpointed: frozenset[str],
    start: datetime | None,
) -> tuple[SeriesChart, ...]:
    """Series for every gated metric of tests that were segmented or checkpointed."""
    if start is None:
        return ()
    out: list[SeriesChart] = []
    for test in tests:
        ran = [u for u in units if u.name == test and not u.synthetic]
        if not ran or not (test in checkpointed or any(u.segmented for u in ran)):
            continue
        seen: set[str] = set()
        for gate in ran[0].gates:
            if gate.metric in seen:
                continue
            seen.add(gate.metric)
            cumulative = aggregation_of(gate.metric) is Aggregation.SUM
            series = tuple(_series(u, gate, start, cumulative) for u in ran)
            if any(s.samples for s in series):
                out.append(SeriesChart(test, gate, cumulative, series))
    return tuple(out)
