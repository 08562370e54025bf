"""The threshold linter (burnin.md §4.3) and the whole-test checks built on it."""

from __future__ import annotations

import pytest

from glimmer.contract.vocab import Threshold
from glimmer.verdict.lint import (
    Problem,
    Severity,
    TestDefinition,
    has_malformed,
    lint_test,
    lint_thresholds,
    soak_problems,
)

GTE, EQ, NE = "GreaterThanOrEqual", "Equal", "NotEqual"
RIM = "RequiredIfMeasurable"


def severities(thresholds: list[Threshold], kind: str = "custom") -> list[tuple[int | None, str]]:
    return [(p.index, p.severity.value) for p in lint_thresholds(thresholds, kind)]


def test_sound_gates_report_nothing() -> None:
    gates = [
        Threshold("busBandwidthGBs", GTE, "10.8"),
        Threshold("miscompares", EQ, "0"),
        Threshold("sustainedClockSpreadPct", "LessThanOrEqual", "5", RIM),
    ]
    assert lint_thresholds(gates[:2], "nccl") == []
    assert lint_thresholds(gates) == []


@pytest.mark.parametrize(
    "gate",
    [
        Threshold("Bad_Name", GTE, "1"),
        Threshold("", GTE, "1"),
        Threshold("max-rel", GTE, "1"),
        Threshold("1st", GTE, "1"),
        Threshold("m", GTE, "NaN"),
        Threshold("m", GTE, "Inf"),
        Threshold("m", GTE, "ten"),
        Threshold("m", "GreaterThan", "1"),
    ],
)
def test_malformed_gates(gate: Threshold) -> None:
    problems = lint_thresholds([gate])
    assert [p.severity for p in problems] == [Severity.MALFORMED]
    assert has_malformed(problems)


def test_exact_compare_on_a_unit_suffix_is_unsound() -> None:
    (problem,) = lint_thresholds([Threshold("sustainedClockPct", EQ, "83")])
    assert problem.severity is Severity.UNSOUND
    assert "Pct" in problem.reason


@pytest.mark.parametrize("comparison", [EQ, NE])
def test_exact_compare_with_a_non_integer_bound_is_unsound(comparison: str) -> None:
    assert severities([Threshold("ratio", comparison, "0.5")]) == [(0, "Unsound")]
    assert severities([Threshold("ratio", comparison, "1e3")]) == []
    assert severities([Threshold("ratio", comparison, "2.0")]) == []


def test_unregistered_metric_is_unsound_only_on_a_built_in_kind() -> None:
    gate = Threshold("myCustomFigure", GTE, "1")
    assert lint_thresholds([gate]) == []
    assert lint_thresholds([gate], "my-own-kind") == []
    (problem,) = lint_thresholds([gate], "clockprobe")
    assert problem.severity is Severity.UNSOUND
    assert "not registered" in problem.reason


def test_spread_gate_must_be_required_if_measurable_on_any_kind() -> None:
    gate = Threshold("sustainedClockSpreadPct", "LessThanOrEqual", "5")
    assert severities([gate]) == [(0, "Unsound")]
    relaxed = Threshold("sustainedClockSpreadPct", "LessThanOrEqual", "5", RIM)
    assert severities([relaxed]) == []


def test_gate_on_evidence_quotes_the_registry_description() -> None:
    (problem,) = lint_thresholds([Threshold("pdWedgeSuspected", EQ, "0")])
    assert problem.severity is Severity.UNSOUND
    assert "GB10 power-delivery wedge signature" in problem.reason


def test_gate_on_a_metric_the_kind_never_emits_names_what_it_does_emit() -> None:
    (problem,) = lint_thresholds([Threshold("bandwidthGbps", GTE, "80")], "fabric-soak")
    assert problem.severity is Severity.UNSOUND
    assert "fabric-soak never emits" in problem.reason
    assert "minBandwidthGbps" in problem.reason
    # The same gate on the kind that does emit it is fine, and custom kinds are unknowable.
    assert lint_thresholds([Threshold("bandwidthGbps", GTE, "80")], "ib-write-bw") == []
    assert lint_thresholds([Threshold("bandwidthGbps", GTE, "80")], "custom") == []


def test_several_problems_per_gate_are_all_reported() -> None:
    problems = lint_thresholds([Threshold("Bad_Name", "Bogus", "NaN")])
    assert [p.severity for p in problems] == [Severity.MALFORMED] * 3
    assert {p.index for p in problems} == {0}


def test_problem_text_form() -> None:
    problem = Problem(2, "bandwidthGbps", Severity.UNSOUND, "why")
    assert str(problem) == "threshold 2 (bandwidthGbps, Unsound): why"
    field = Problem(None, "", Severity.MALFORMED, "why", field="soak")
    assert str(field) == "soak (Malformed): why"


def test_duration_on_a_burst_kind_is_unsound() -> None:
    problems = lint_test(TestDefinition(kind="compute-smoke", duration_seconds=120))
    assert [(p.field, p.severity) for p in problems] == [("durationSeconds", Severity.UNSOUND)]
    assert lint_test(TestDefinition(kind="compute-smoke")) == []
    assert lint_test(TestDefinition(kind="clockprobe", duration_seconds=120)) == []


def test_soak_on_a_burst_kind_is_malformed() -> None:
    problems = lint_test(
        TestDefinition(kind="fingerprint-probe", duration_seconds=3600, segment_seconds=600)
    )
    assert [(p.field, p.severity) for p in problems] == [("soak", Severity.MALFORMED)]


def test_soak_shapes_the_plan_refuses_are_malformed() -> None:
    assert soak_problems("thermal-soak", 3600, 900, 1) == []
    fields = [p.field for p in soak_problems("thermal-soak", 600, 299, 2)]
    assert fields == ["soak.segmentSeconds", "repeatCount"]
    assert [p.field for p in soak_problems("thermal-soak", 0, 300, 1)] == ["durationSeconds"]
    assert [p.field for p in soak_problems("thermal-soak", 600, 900, 1)] == ["soak.segmentSeconds"]
    assert all(p.severity is Severity.MALFORMED for p in soak_problems("x", 0, 0, 3))


def test_readiness_probe_on_perftests_control_port_is_unsound() -> None:
    def fields(**kwargs: object) -> list[str]:
        return [p.field for p in lint_test(TestDefinition(**kwargs))]  # type: ignore[arg-type]

    assert fields(kind="fabric-soak", readiness_tcp_port=18515) == ["runner.readinessProbe"]
    assert fields(kind="ib-write-bw", readiness_tcp_port=18516) == ["runner.readinessProbe"]
    assert fields(kind="ib-write-bw", readiness_tcp_port=18510) == []
    moved = {"BURNIN_PERFTEST_PORT": "20000"}
    assert fields(kind="ib-write-bw", readiness_tcp_port=18515, env=moved) == []
    assert fields(kind="ib-write-bw", readiness_tcp_port=20000, env=moved) == [
        "runner.readinessProbe"
    ]
    assert fields(kind="tcp-baseline", readiness_tcp_port=5201) == []


def test_summary_names_five_problems_then_counts() -> None:
    from glimmer.verdict.lint import summarize

    problems = lint_thresholds([Threshold(f"m{i}", GTE, "NaN") for i in range(7)])
    text = summarize(problems, prefix="gpu-burn: ")
    assert text.startswith('gpu-burn: threshold 0 (m0, Malformed): value "NaN" is not a finite')
    assert text.count("gpu-burn: ") == 5
    assert text.endswith("; and 2 more")
