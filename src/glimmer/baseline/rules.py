"""The rule that turns a fleet's distribution of one metric into a gate, stated per Aggregation.

The registry already says which way a metric is bad: a soak folds a floor by Min (its worst
window is its lowest), a ceiling by Max, a windowed counter by Sum, and nameplates and lifetime
counters by Last. The same declaration picks the gate:

* **floor** (Min; and a Sum with a unit, an accumulated quantity such as ``elapsedS``):
  ``GreaterThanOrEqual min(median − margin, worst clean sample)``, rounded down;
* **ceiling** (Max): ``LessThanOrEqual max(median + margin, worst clean sample)``, rounded up;

  where ``margin = max(k·MAD, min_margin·|median|)``: k MADs, but never closer to the fleet
  than a fraction of its median (1 % by default), because a figure that saturates (a link at
  line rate, a clock at its cap) has a MAD near zero and a gate that close claims a
  repeatability no measurement has;
* **counter** (Sum, dimensionless): ``Equal 0`` when every sample was 0; a counter healthy parts
  accumulate (iterations, watched windows) is reported, not gated;
* **nameplate** (Last, dimensionless): ``Equal v`` when every sample was the same integer (a
  lifetime error count of 0, a device count of 8); anything else is reported, not gated.

Only Acceptance metrics get gates; evidence, labels and unregistered names (which declare no
direction) never do. A metric some unit declared ``n/a`` is gated RequiredIfMeasurable (and a
spread metric always is). No gate is made from fewer than ``min_samples`` readings, nor for a
metric some clean result did not report or reported as a non-number: that gate would fail a
healthy unit closed. The worst-clean clamp and the outward rounding together guarantee that
no clean unit measured in the baseline fails its gate (tests/baseline hold this as properties).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from glimmer.api.threshold import Threshold
from glimmer.baseline.collect import MetricSamples, Sample
from glimmer.baseline.precision import round_down, round_up
from glimmer.baseline.stats import Summary, summarize
from glimmer.contract.names import unit_of
from glimmer.contract.registry import (
    SPREAD_METRICS,
    Aggregation,
    MetricSpec,
    ThresholdUse,
    Unit,
    lookup,
)
from glimmer.contract.vocab import Applicability, Comparison

# k = 6, not the textbook 4: a node's figure is usually its worst device of several (a minimum
# of eight has a longer tail than the MAD of the node figures suggests), and a MAD taken from
# ~50 nodes is itself uncertain by ~17 %. Measured on the simulator (48 HGX nodes, acceptance,
# each of 24 seeded baselines against the 23 other seeds as healthy re-runs): k = 4 failed a
# healthy node in 84 of 552 re-runs, k = 5 in 4, k = 6 in none (docs/baselines.md).
DEFAULT_K = 6.0
DEFAULT_MIN_SAMPLES = 5
# A gate within 1 % of the fleet's median claims more repeatability than fleet measurements have.
DEFAULT_MIN_MARGIN = 0.01


class Shape(StrEnum):
    """Which way a metric goes bad, and so what kind of gate it gets."""

    FLOOR = "floor"
    CEILING = "ceiling"
    COUNTER = "counter"
    NAMEPLATE = "nameplate"


@dataclass(frozen=True)
class Rule:
    shape: Shape
    comparison: Comparison
    statement: str  # the rule in words: every gate's comment quotes it


FLOOR = Rule(
    Shape.FLOOR,
    Comparison.GREATER_THAN_OR_EQUAL,
    "floor: min(median - margin, worst clean sample), rounded down to 3 significant digits",
)
CEILING = Rule(
    Shape.CEILING,
    Comparison.LESS_THAN_OR_EQUAL,
    "ceiling: max(median + margin, worst clean sample), rounded up to 3 significant digits",
)
COUNTER = Rule(
    Shape.COUNTER,
    Comparison.EQUAL,
    "windowed counter: Equal 0 when every sample was 0, otherwise reported, not gated",
)
NAMEPLATE = Rule(
    Shape.NAMEPLATE,
    Comparison.EQUAL,
    "nameplate or lifetime count: Equal v when every sample was the same integer v",
)

# The rule, as data: the registry's window fold says which way a metric goes bad.
RULES: dict[Aggregation, Rule] = {
    Aggregation.MIN: FLOOR,
    Aggregation.MAX: CEILING,
    Aggregation.SUM: COUNTER,
    Aggregation.LAST: NAMEPLATE,
}


def rule_for(spec: MetricSpec) -> Rule:
    """The rule for a registered metric. A Sum that carries a unit (seconds elapsed, kernel
    milliseconds) is an accumulated quantity, not a count of bad events: a shortfall is what
    goes wrong, so it is a floor."""
    rule = RULES[spec.aggregation]
    if rule is COUNTER and spec.unit is not Unit.NONE:
        return FLOOR
    return rule


@dataclass(frozen=True)
class Gate:
    """A derived gate and everything its comment says it was made of."""

    threshold: Threshold
    rule: Rule
    summary: Summary
    k: float | None  # None for counters and nameplates
    margin: float | None  # max(k·MAD, min_margin·|median|); None for counters and nameplates
    raw: float | None  # median ∓ margin: the rule's bound before the clamp and the rounding
    worst: Sample | None  # the worst clean sample (floors and ceilings)
    loosened_for: tuple[Sample, ...]  # clean samples beyond the raw bound: review these units
    unmeasurable: int  # units that declared n/a


@dataclass(frozen=True)
class Declined:
    """A measured Acceptance metric that gets no gate, and why."""

    metric: str
    reason: str


class Skipped(StrEnum):
    """Metrics that never get a gate by the rule (reported in a test's comment as a count)."""

    EVIDENCE = "evidence or label"
    UNREGISTERED = "unregistered (no declared direction)"


def margin_of(summary: Summary, k: float, min_margin: float = 0.0) -> float:
    """How far from the median a bound sits: k MADs, or ``min_margin`` of the median's size,
    whichever is wider."""
    return max(k * summary.mad, min_margin * abs(summary.median))


def floor_bound(
    values: Sequence[float], clean: Sequence[float], k: float, min_margin: float = 0.0
) -> float:
    """The rule's floor before rounding: median − margin, never above the worst clean value,
    and never below zero when no value was negative (a negative floor on a rate says nothing)."""
    s = summarize(values)
    bound = s.median - margin_of(s, k, min_margin)
    if clean:
        bound = min(bound, min(clean))
    if bound < 0 <= s.low:
        bound = 0.0
    return bound


def ceiling_bound(
    values: Sequence[float], clean: Sequence[float], k: float, min_margin: float = 0.0
) -> float:
    """The rule's ceiling before rounding: median + margin, never below the worst clean value."""
    s = summarize(values)
    bound = s.median + margin_of(s, k, min_margin)
    if clean:
        bound = max(bound, max(clean))
    return bound


def _applicability(found: MetricSamples) -> Applicability:
    # A spread across devices is n/a on one device and under MIG, even where this fleet had none.
    if found.unmeasurable or found.metric in SPREAD_METRICS:
        return Applicability.REQUIRED_IF_MEASURABLE
    return Applicability.REQUIRED


def _gate(found: MetricSamples, rule: Rule, value: str) -> Threshold:
    return Threshold(
        metric=found.metric,
        comparison=rule.comparison,
        value=value,
        applicability=_applicability(found),
    )


def _some(units: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(sorted(units)[:limit])
    return shown + (f" and {len(units) - limit} more" if len(units) > limit else "")


def _refusal(found: MetricSamples, min_samples: int) -> str | None:
    total = len(found.samples) + len(found.unmeasurable) + len(found.missing)
    total += len(found.unreadable)
    if found.missing:
        return (
            f"not reported by {len(found.missing)} of {total} passing results "
            f"({_some(found.missing)}): a gate would fail them closed"
        )
    if found.unreadable:
        units = [u for u, _ in found.unreadable]
        return f"not a finite number on {_some(units)}: a gate would fail them closed"
    if not found.samples:
        return f"declared n/a on every unit ({total}): nothing to derive a bound from"
    if len(found.samples) < min_samples:
        return (
            f"only {len(found.samples)} sample(s), fewer than {min_samples}: too few to tell "
            "the fleet's spread"
        )
    return None


def _spread_gate(found: MetricSamples, rule: Rule, k: float, min_margin: float) -> Gate:
    values = [s.value for s in found.samples]
    clean = [s for s in found.samples if s.clean]
    summary = summarize(values)
    margin = margin_of(summary, k, min_margin)
    if rule.shape is Shape.FLOOR:
        raw = summary.median - margin
        bound = round_down(floor_bound(values, [s.value for s in clean], k, min_margin))
        worst = min(clean, key=lambda s: (s.value, s.unit), default=None)
        beyond = sorted((s for s in clean if s.value < raw), key=lambda s: (s.value, s.unit))
    else:
        raw = summary.median + margin
        bound = round_up(ceiling_bound(values, [s.value for s in clean], k, min_margin))
        worst = max(clean, key=lambda s: (s.value, s.unit), default=None)
        beyond = sorted((s for s in clean if s.value > raw), key=lambda s: (-s.value, s.unit))
    threshold = _gate(found, rule, bound)
    return Gate(
        threshold, rule, summary, k, margin, raw, worst, tuple(beyond), len(found.unmeasurable)
    )


def _exact_gate(found: MetricSamples, rule: Rule) -> Gate | Declined:
    values = [s.value for s in found.samples]
    summary = summarize(values)
    distinct = sorted(set(values))
    if rule.shape is Shape.COUNTER:
        if distinct != [0.0]:
            nonzero = [s.unit for s in found.samples if s.value != 0]
            return Declined(
                found.metric,
                f"counter was nonzero on {len(nonzero)} of {len(values)} units "
                f"({_some(nonzero)}; up to {summary.high:g}): reported, not gated",
            )
        value = "0"
    else:
        if unit_of(found.metric) is not Unit.NONE:
            return Declined(found.metric, "a Last-folded figure with a unit: no direction to gate")
        if len(distinct) != 1 or not distinct[0].is_integer():
            return Declined(
                found.metric,
                f"differs across units ({summary.low:g} to {summary.high:g}): reported, not gated",
            )
        value = str(int(distinct[0]))
    gate = _gate(found, rule, value)
    return Gate(gate, rule, summary, None, None, None, None, (), len(found.unmeasurable))


def derive_gate(
    found: MetricSamples,
    *,
    k: float = DEFAULT_K,
    min_samples: int = DEFAULT_MIN_SAMPLES,
    min_margin: float = DEFAULT_MIN_MARGIN,
) -> Gate | Declined | Skipped:
    """The gate the rule makes of one metric's samples, why it makes none, or that the metric
    is not one the rule gates at all."""
    spec = lookup(found.metric)
    if spec is None:
        return Skipped.UNREGISTERED
    if spec.use is not ThresholdUse.ACCEPTANCE:
        return Skipped.EVIDENCE
    refused = _refusal(found, min_samples)
    if refused is not None:
        return Declined(found.metric, refused)
    rule = rule_for(spec)
    if rule.shape in (Shape.FLOOR, Shape.CEILING):
        return _spread_gate(found, rule, k, min_margin)
    return _exact_gate(found, rule)
