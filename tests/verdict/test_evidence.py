"""The evidence behind a settled result: recorded violations, else the gates its readings miss."""

from glimmer.contract.vocab import Threshold
from glimmer.verdict.evidence import RecordedViolation, gate_evidence

CLOCK = Threshold("sustainedClockPct", "GreaterThanOrEqual", "70")
THROTTLE = Threshold("throttleEvents", "Equal", "0")


def test_a_runner_declared_fail_shows_the_measured_shortfall() -> None:
    found = gate_evidence(
        {"sustainedClockPct": "19.54", "throttleEvents": "0"}, (), [CLOCK, THROTTLE]
    )
    assert [(e.metric, e.reading, e.comparison, e.bound, e.recorded) for e in found] == [
        ("sustainedClockPct", "19.54", "GreaterThanOrEqual", "70", False)
    ]


def test_a_metric_a_failing_runner_did_not_print_is_not_blamed() -> None:
    assert gate_evidence({"throttleEvents": "0"}, (), [CLOCK, THROTTLE]) == []


def test_recorded_violations_win_and_find_their_gate_by_index() -> None:
    recorded = [RecordedViolation(1, "throttleEvents", "Unsatisfied", "throttleEvents: got 3")]
    found = gate_evidence(
        {"throttleEvents": "3", "sustainedClockPct": "10"}, (), [CLOCK, THROTTLE], recorded
    )
    assert [(e.metric, e.reading, e.bound, e.recorded) for e in found] == [
        ("throttleEvents", "3", "0", True)
    ]


def test_a_recorded_violation_of_an_unlisted_gate_keeps_its_metric() -> None:
    found = gate_evidence({}, (), [], [RecordedViolation(4, "busBandwidthGBs", "NotReported")])
    assert found[0].metric == "busBandwidthGBs" and found[0].reading is None
    assert found[0].comparison == ""


def test_a_soak_cut_short_is_not_blamed_on_its_accumulating_metrics() -> None:
    elapsed = Threshold("elapsedS", "GreaterThanOrEqual", "13680")
    readings = {"elapsedS": "900.8", "sustainedClockPct": "41.2"}
    whole = gate_evidence(readings, (), [elapsed, CLOCK])
    assert [e.metric for e in whole] == ["elapsedS", "sustainedClockPct"]
    short = gate_evidence(readings, (), [elapsed, CLOCK], cut_short=True)
    assert [e.metric for e in short] == ["sustainedClockPct"]
