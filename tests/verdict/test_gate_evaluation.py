"""Threshold evaluation (burnin.md §4.2): order of checks, kinds, causes, exact compares."""

from __future__ import annotations

import pytest

from glimmer.contract.vocab import Threshold
from glimmer.verdict.evaluate import (
    Cause,
    NotEvaluated,
    Violation,
    ViolationKind,
    cause_of,
    evaluate,
    not_evaluated_message,
    violation_summary,
)

GTE, LTE, EQ, NE = "GreaterThanOrEqual", "LessThanOrEqual", "Equal", "NotEqual"
RIM = "RequiredIfMeasurable"


def gate(metric: str, comparison: str, value: str, applicability: str = "") -> Threshold:
    return Threshold(metric, comparison, value, applicability)


def only(metrics: dict[str, str], threshold: Threshold, na: set[str] | None = None) -> Violation:
    result = evaluate(metrics, na or set(), [threshold])
    assert len(result.violations) == 1
    return result.violations[0]


def test_satisfied_gates_pass_with_no_message() -> None:
    result = evaluate({"busBandwidthGBs": "12.0"}, set(), [gate("busBandwidthGBs", GTE, "10.8")])
    assert result.passed
    assert result.message == ""
    assert result.violations == ()


def test_no_thresholds_is_a_pass() -> None:
    assert evaluate({}, set(), []).passed


def test_reported_and_declared_unmeasurable_is_contradictory_evidence() -> None:
    v = only({"eccErrors": "0"}, gate("eccErrors", EQ, "0", RIM), {"eccErrors"})
    assert v.kind == ViolationKind.CONTRADICTORY
    assert v.cause == Cause.EVIDENCE
    assert v.reason == (
        'metric "eccErrors" was reported as "0" AND declared unmeasurable; '
        "the runner's output is self-contradictory"
    )


def test_unmeasurable_under_required_if_measurable_is_not_evaluated() -> None:
    result = evaluate({}, {"eccErrors"}, [gate("eccErrors", EQ, "0", RIM)])
    assert result.passed
    assert result.not_evaluated == (NotEvaluated("eccErrors", "unmeasurable on this hardware"),)
    assert result.not_evaluated_message() == (
        "not evaluated: eccErrors is unmeasurable on this hardware"
    )


@pytest.mark.parametrize("applicability", ["", "Required", "required", "Sometimes"])
def test_unmeasurable_under_required_or_unknown_applicability_fails(applicability: str) -> None:
    v = only({}, gate("eccErrors", EQ, "0", applicability), {"eccErrors"})
    assert v.kind == ViolationKind.UNMEASURABLE_REQUIRED
    assert v.cause == Cause.EVIDENCE
    assert v.reason.startswith(
        'metric "eccErrors" is unmeasurable on this hardware and this threshold is Required; '
        "set applicability=RequiredIfMeasurable"
    )


@pytest.mark.parametrize("applicability", ["", "Required", RIM])
def test_missing_metric_fails_under_every_applicability(applicability: str) -> None:
    v = only({"other": "1"}, gate("xidEvents", EQ, "0", applicability))
    assert v.kind == ViolationKind.NOT_REPORTED
    assert v.cause == Cause.EVIDENCE
    assert v.reason == 'metric "xidEvents" was not reported by the runner'


@pytest.mark.parametrize("value", ["", "abc", "1,5", " 1", "1 ", "+nan", "0x10", "true", "n/a"])
def test_unparseable_metric_value_is_non_numeric(value: str) -> None:
    v = only({"m": value}, gate("m", GTE, "0"))
    assert v.kind == ViolationKind.NON_NUMERIC
    assert v.reason == f'metric "m"="{value}" is not numeric'


@pytest.mark.parametrize("value", ["NaN", "nan", "Inf", "-inf", "+Infinity", "INFINITY"])
def test_non_finite_metric_value_fails_as_not_a_finite_measurement(value: str) -> None:
    v = only({"m": value}, gate("m", NE, "0"))
    assert v.kind == ViolationKind.NON_FINITE
    assert v.cause == Cause.EVIDENCE
    assert v.reason == f'metric "m"="{value}" is not a finite measurement'


def test_threshold_value_problems_blame_the_profile() -> None:
    bad = only({"m": "1"}, gate("m", GTE, "ten"))
    assert bad.kind == ViolationKind.THRESHOLD_VALUE_NON_NUMERIC
    assert bad.cause == Cause.AUTHORING
    assert bad.reason == 'threshold value "ten" for "m" is not numeric'
    inf = only({"m": "1"}, gate("m", GTE, "Inf"))
    assert inf.kind == ViolationKind.THRESHOLD_VALUE_NON_FINITE
    assert inf.cause == Cause.AUTHORING
    assert inf.reason == 'threshold value "Inf" for "m" is not a finite number'


def test_metric_checks_come_before_threshold_value_checks() -> None:
    assert only({}, gate("m", GTE, "NaN")).kind == ViolationKind.NOT_REPORTED
    assert only({"m": "x"}, gate("m", GTE, "NaN")).kind == ViolationKind.NON_NUMERIC


def test_unsatisfied_gate_blames_the_hardware_with_go_g_formatting() -> None:
    v = only({"sustainedClockPct": "65.50"}, gate("sustainedClockPct", GTE, "70"))
    assert v.kind == ViolationKind.UNSATISFIED
    assert v.cause == Cause.MEASUREMENT
    assert v.reason == "sustainedClockPct: got 65.5, need GreaterThanOrEqual 70"
    big = only({"elapsedS": "1234567"}, gate("elapsedS", GTE, "2e6"))
    assert big.reason == "elapsedS: got 1.234567e+06, need GreaterThanOrEqual 2e+06"


@pytest.mark.parametrize(
    ("got", "comparison", "want", "holds"),
    [
        ("70", GTE, "70", True),
        ("69.99999999999999", GTE, "70", False),
        ("70", LTE, "70", True),
        ("70.00000000000001", LTE, "70", False),
        ("0", EQ, "0", True),
        ("0.0", EQ, "0", True),
        ("-0", EQ, "0", True),
        ("1e-300", EQ, "0", False),
        ("0.1", EQ, "0.1", True),
        ("1", NE, "0", True),
        ("0", NE, "0", False),
    ],
)
def test_comparisons_are_exact(got: str, comparison: str, want: str, holds: bool) -> None:
    assert evaluate({"m": got}, set(), [gate("m", comparison, want)]).passed is holds


@pytest.mark.parametrize("comparison", ["", "GreaterThan", "greaterThanOrEqual", "=="])
def test_unknown_comparison_is_never_satisfied(comparison: str) -> None:
    v = only({"m": "5"}, gate("m", comparison, "5"))
    assert v.kind == ViolationKind.UNSATISFIED
    assert v.reason == f"m: got 5, need {comparison} 5"


def test_every_gate_is_evaluated_and_violations_keep_spec_order() -> None:
    gates = [
        gate("a", GTE, "10"),
        gate("b", EQ, "0"),
        gate("c", EQ, "0"),
        gate("d", LTE, "1", RIM),
    ]
    result = evaluate({"a": "5", "b": "0"}, {"d"}, gates)
    assert [(v.index, v.metric) for v in result.violations] == [(0, "a"), (2, "c")]
    assert result.message == result.violations[0].reason


def test_not_evaluated_is_truncated_to_entries_before_the_first_violation() -> None:
    gates = [
        gate("x", EQ, "0", RIM),
        gate("a", GTE, "10"),
        gate("y", EQ, "0", RIM),
    ]
    failed = evaluate({"a": "1"}, {"x", "y"}, gates)
    assert [e.metric for e in failed.not_evaluated] == ["x"]
    passed = evaluate({"a": "11"}, {"x", "y"}, gates)
    assert [e.metric for e in passed.not_evaluated] == ["x", "y"]


def test_cause_mapping_defaults_unknown_kinds_to_evidence() -> None:
    assert cause_of("Unsatisfied") == Cause.MEASUREMENT
    assert cause_of("ThresholdValueNonNumeric") == Cause.AUTHORING
    assert cause_of("ThresholdValueNonFinite") == Cause.AUTHORING
    for kind in ("NotReported", "Contradictory", "NonFinite", "SomethingNew", ""):
        assert cause_of(kind) == Cause.EVIDENCE


def test_violation_summary_names_at_most_four_after_the_first() -> None:
    def v(i: int, cause: str) -> Violation:
        return Violation(i, f"m{i}", "k", cause, "r")

    assert violation_summary([v(1, "Measurement")]) == ""
    assert violation_summary([v(1, "Measurement"), v(2, "Authoring")]) == (
        "and 1 more gate failed: m2 (profile error)"
    )
    many = [v(i, "Measurement") for i in range(1, 8)]
    many[2] = v(3, "Evidence")
    assert violation_summary(many) == (
        "and 6 more gates failed: m2 (hardware), m3 (not measured), m4 (hardware), "
        "m5 (hardware), and 2 more"
    )


def test_not_evaluated_message_is_empty_without_entries() -> None:
    assert not_evaluated_message([]) == ""
    assert not_evaluated_message([NotEvaluated("a"), NotEvaluated("b")]) == (
        "not evaluated: a is unmeasurable on this hardware; b is unmeasurable on this hardware"
    )


def test_quotes_in_values_are_escaped_like_go() -> None:
    v = only({"m": 'x"y\n'}, gate("m", GTE, "0"))
    assert v.reason == 'metric "m"="x\\"y\\n" is not numeric'
