"""Threshold evaluation: every gate of a test against what one execution declared (§4.2).

Every gate is evaluated, in spec order, and every violation is kept. The rules fail closed: a
metric that is missing, unreadable, not finite, or both reported and declared ``n/a`` violates
its gate. Only a runner's explicit ``n/a`` under ``RequiredIfMeasurable`` relaxes a gate, and
then the gate is recorded as not evaluated. Comparisons are exact float64 compares.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from glimmer.contract.vocab import Applicability, Comparison, Threshold
from glimmer.verdict.numbers import format_g, read_float
from glimmer.verdict.text import name_some, plural, quote

UNMEASURABLE_REASON = "unmeasurable on this hardware"
MAX_NAMED_VIOLATIONS = 4  # Appendix A: violations named in a result message


class ViolationKind(StrEnum):
    CONTRADICTORY = "Contradictory"
    UNMEASURABLE_REQUIRED = "UnmeasurableRequired"
    NOT_REPORTED = "NotReported"
    NON_NUMERIC = "NonNumeric"
    NON_FINITE = "NonFinite"
    THRESHOLD_VALUE_NON_NUMERIC = "ThresholdValueNonNumeric"
    THRESHOLD_VALUE_NON_FINITE = "ThresholdValueNonFinite"
    UNSATISFIED = "Unsatisfied"


class Cause(StrEnum):
    """Who a violation indicts: the hardware, the evidence, or the profile's author."""

    MEASUREMENT = "Measurement"
    EVIDENCE = "Evidence"
    AUTHORING = "Authoring"


# Kinds not listed here (including kinds a future version invents) are Evidence: when in doubt
# the evidence is blamed, never the hardware.
_CAUSE_OF_KIND: Mapping[str, Cause] = {
    ViolationKind.UNSATISFIED: Cause.MEASUREMENT,
    ViolationKind.THRESHOLD_VALUE_NON_NUMERIC: Cause.AUTHORING,
    ViolationKind.THRESHOLD_VALUE_NON_FINITE: Cause.AUTHORING,
}

# The word a summary uses for each cause: what the reader should go and look at.
CAUSE_WORDS: Mapping[str, str] = {
    Cause.MEASUREMENT: "hardware",
    Cause.EVIDENCE: "not measured",
    Cause.AUTHORING: "profile error",
}

# Exact comparisons. An unknown comparison has no entry and is never satisfied. NaN never
# reaches these (it is refused earlier), and ``!=`` on NaN would otherwise be true.
_COMPARE: Mapping[str, Callable[[float, float], bool]] = {
    Comparison.GREATER_THAN_OR_EQUAL: operator.ge,
    Comparison.LESS_THAN_OR_EQUAL: operator.le,
    Comparison.EQUAL: operator.eq,
    Comparison.NOT_EQUAL: operator.ne,
}


def cause_of(kind: str) -> Cause:
    """The cause of a violation kind; any kind not known here counts as Evidence."""
    return _CAUSE_OF_KIND.get(kind, Cause.EVIDENCE)


def word_for_cause(cause: str) -> str:
    """The human word for a cause in a summary; an unknown cause reads as ``not measured``."""
    return CAUSE_WORDS.get(cause, CAUSE_WORDS[Cause.EVIDENCE])


def compare(got: float, comparison: str, want: float) -> bool:
    """Exact comparison; an unknown comparison is never satisfied."""
    check = _COMPARE.get(comparison)
    return check is not None and check(got, want)


@dataclass(frozen=True)
class Violation:
    """One violated gate: its index in the spec's list, the metric, why, and whom it indicts."""

    index: int
    metric: str
    kind: str
    cause: str
    reason: str


@dataclass(frozen=True)
class NotEvaluated:
    """A gate skipped because the runner declared its metric ``n/a`` (RequiredIfMeasurable)."""

    metric: str
    reason: str = UNMEASURABLE_REASON


@dataclass(frozen=True)
class Evaluation:
    """The outcome of evaluating every gate of a test once."""

    violations: tuple[Violation, ...] = ()
    not_evaluated: tuple[NotEvaluated, ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        return not self.violations

    @property
    def message(self) -> str:
        """The first violation's reason (frozen format); empty when every gate passed."""
        return self.violations[0].reason if self.violations else ""

    def not_evaluated_message(self) -> str:
        """``not evaluated: X is unmeasurable on this hardware; …``, or empty."""
        return not_evaluated_message(self.not_evaluated)

    def violation_summary(self) -> str:
        """``and N more gate(s) failed: …`` naming the violations after the first, or empty."""
        return violation_summary(self.violations)


def not_evaluated_message(entries: Sequence[NotEvaluated]) -> str:
    """Name every gate that was not evaluated, or return an empty string when there are none."""
    if not entries:
        return ""
    return "not evaluated: " + "; ".join(f"{e.metric} is {e.reason}" for e in entries)


def violation_summary(violations: Sequence[Violation]) -> str:
    """Summarise the violations after the first: at most four named, each with its cause word.

    ``and 2 more gates failed: m2 (hardware), m3 (not measured)``; empty for fewer than two.
    """
    rest = list(violations[1:])
    if not rest:
        return ""
    named = [f"{v.metric} ({word_for_cause(v.cause)})" for v in rest]
    noun = plural(len(rest), "gate")
    verb = "failed"
    return f"and {len(rest)} more {noun} {verb}: {name_some(named, MAX_NAMED_VIOLATIONS)}"


def _violation(index: int, metric: str, kind: ViolationKind, reason: str) -> Violation:
    return Violation(index=index, metric=metric, kind=kind, cause=cause_of(kind), reason=reason)


def _check(
    index: int,
    gate: Threshold,
    metrics: Mapping[str, str],
    unmeasurable: frozenset[str],
) -> Violation | NotEvaluated | None:
    """Evaluate one gate: a violation, a not-evaluated note, or None when it is satisfied."""
    name = gate.metric
    if name in unmeasurable:
        if name in metrics:
            return _violation(
                index,
                name,
                ViolationKind.CONTRADICTORY,
                f"metric {quote(name)} was reported as {quote(metrics[name])} AND declared "
                "unmeasurable; the runner's output is self-contradictory",
            )
        if gate.applicability == Applicability.REQUIRED_IF_MEASURABLE:
            return NotEvaluated(metric=name)
        return _violation(
            index,
            name,
            ViolationKind.UNMEASURABLE_REQUIRED,
            f"metric {quote(name)} is unmeasurable on this hardware and this threshold is "
            "Required; set applicability=RequiredIfMeasurable if an unmeasurable reading is "
            "acceptable on such hardware",
        )
    if name not in metrics:
        return _violation(
            index,
            name,
            ViolationKind.NOT_REPORTED,
            f"metric {quote(name)} was not reported by the runner",
        )
    raw = metrics[name]
    got = read_float(raw)
    if got.value is None:
        return _violation(
            index,
            name,
            ViolationKind.NON_NUMERIC,
            f"metric {quote(name)}={quote(raw)} is not numeric",
        )
    if not got.finite:
        return _violation(
            index,
            name,
            ViolationKind.NON_FINITE,
            f"metric {quote(name)}={quote(raw)} is not a finite measurement",
        )
    want = read_float(gate.value)
    if want.value is None:
        return _violation(
            index,
            name,
            ViolationKind.THRESHOLD_VALUE_NON_NUMERIC,
            f"threshold value {quote(gate.value)} for {quote(name)} is not numeric",
        )
    if not want.finite:
        return _violation(
            index,
            name,
            ViolationKind.THRESHOLD_VALUE_NON_FINITE,
            f"threshold value {quote(gate.value)} for {quote(name)} is not a finite number",
        )
    if compare(got.value, gate.comparison, want.value):
        return None
    return _violation(
        index,
        name,
        ViolationKind.UNSATISFIED,
        f"{name}: got {format_g(got.value)}, need {gate.comparison} {format_g(want.value)}",
    )


def evaluate(
    metrics: Mapping[str, str],
    unmeasurable: Iterable[str],
    thresholds: Sequence[Threshold],
) -> Evaluation:
    """Evaluate every threshold, in order, against one set of metrics and ``n/a`` names.

    Passed iff there is no violation. On failure the not-evaluated list holds only the entries
    found before the first violation (frozen behaviour of the original: absence from it is no
    proof that a gate ran).
    """
    declared = frozenset(unmeasurable)
    violations: list[Violation] = []
    skipped: list[NotEvaluated] = []
    skipped_before_first_violation = 0
    for index, gate in enumerate(thresholds):
        found = _check(index, gate, metrics, declared)
        if isinstance(found, Violation):
            if not violations:
                skipped_before_first_violation = len(skipped)
            violations.append(found)
        elif isinstance(found, NotEvaluated):
            skipped.append(found)
    if violations:
        skipped = skipped[:skipped_before_first_violation]
    return Evaluation(violations=tuple(violations), not_evaluated=tuple(skipped))
