"""Segment folds and abortEarly (burnin.md §2.12), with fold properties."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from glimmer.contract.registry import METRICS, Aggregation
from glimmer.contract.vocab import Threshold
from glimmer.verdict.fold import (
    fold_metrics,
    fold_unmeasurable,
    fold_value,
    provable_violations,
    segments_required,
)


def test_a_new_key_is_copied_and_inputs_are_not_changed() -> None:
    aggregate = {"elapsedS": "300"}
    window = {"gpuTempC": "70"}
    folded = fold_metrics(aggregate, window)
    assert folded == {"elapsedS": "300", "gpuTempC": "70"}
    assert aggregate == {"elapsedS": "300"}


def test_fold_by_registry_aggregation() -> None:
    aggregate = {
        "elapsedS": "300",
        "gpuTempC": "80.0",
        "sustainedClockPct": "72.5",
        "eccErrors": "3",
        "someUnregistered": "a",
    }
    window = {
        "elapsedS": "300",
        "gpuTempC": "79",
        "sustainedClockPct": "71.50",
        "eccErrors": "4",
        "someUnregistered": "b",
    }
    assert fold_metrics(aggregate, window) == {
        "elapsedS": "600",  # Sum, shortest form
        "gpuTempC": "80.0",  # Max keeps the original string
        "sustainedClockPct": "71.50",  # Min keeps the original string
        "eccErrors": "4",  # Last (a lifetime counter)
        "someUnregistered": "b",  # unregistered: Last
    }


def test_sum_is_written_like_go_shortest_fixed() -> None:
    assert fold_value(Aggregation.SUM, "1.5", "1.5") == "3"
    assert fold_value(Aggregation.SUM, "0.1", "0.2") == "0.30000000000000004"
    assert fold_value(Aggregation.SUM, "1e21", "0") == "1000000000000000000000"


def test_bad_readings_are_sticky_under_sum_min_max() -> None:
    for aggregation in (Aggregation.SUM, Aggregation.MIN, Aggregation.MAX):
        assert fold_value(aggregation, "NaN", "5") == "NaN"
        assert fold_value(aggregation, "5", "oops") == "oops"
        assert fold_value(aggregation, "oops", "Inf") == "oops"
    assert fold_value(Aggregation.LAST, "NaN", "5") == "5"


def test_unmeasurable_fold_drops_names_that_now_have_a_value() -> None:
    assert fold_unmeasurable({"a", "b"}, {"c"}, {"b": "1"}) == frozenset({"a", "c"})


def test_segments_required_rounds_up_with_the_default_duration() -> None:
    assert segments_required(3600, 900) == 4
    assert segments_required(3601, 900) == 5
    assert segments_required(0, 300) == 2
    assert segments_required(100, 300) == 1


def gate(metric: str, comparison: str, value: str) -> Threshold:
    return Threshold(metric, comparison, value)


def test_abort_early_on_a_sum_that_already_exceeds_an_equal_zero() -> None:
    gates = [gate("xidEvents", "Equal", "0")]
    (proven,) = provable_violations({"xidEvents": "1"}, set(), gates)
    assert proven.metric == "xidEvents"
    assert provable_violations({"xidEvents": "0"}, set(), gates) == ()


def test_abort_early_on_monotone_folds_only() -> None:
    assert provable_violations(
        {"elapsedS": "900"}, set(), [gate("elapsedS", "LessThanOrEqual", "600")]
    )
    assert provable_violations(
        {"sustainedClockPct": "50"}, set(), [gate("sustainedClockPct", "GreaterThanOrEqual", "60")]
    )
    assert provable_violations(
        {"gpuTempC": "90"}, set(), [gate("gpuTempC", "LessThanOrEqual", "87")]
    )
    # A Min under a ceiling, a Sum under a floor, a Sum below an Equal could still change.
    assert not provable_violations(
        {"sustainedClockPct": "90"}, set(), [gate("sustainedClockPct", "LessThanOrEqual", "80")]
    )
    assert not provable_violations(
        {"elapsedS": "10"}, set(), [gate("elapsedS", "GreaterThanOrEqual", "600")]
    )
    assert not provable_violations(
        {"xidWindowsWatched": "1"}, set(), [gate("xidWindowsWatched", "Equal", "4")]
    )
    # Last-aggregated and unregistered metrics never abort.
    assert not provable_violations({"eccErrors": "5"}, set(), [gate("eccErrors", "Equal", "0")])
    assert not provable_violations({"mine": "5"}, set(), [gate("mine", "LessThanOrEqual", "0")])


def test_abort_early_never_fires_on_a_metric_not_yet_reported_or_bad_evidence() -> None:
    gates = [gate("xidEvents", "Equal", "0"), gate("gpuTempC", "LessThanOrEqual", "87")]
    assert provable_violations({}, set(), gates) == ()
    assert provable_violations({"xidEvents": "NaN", "gpuTempC": "x"}, set(), gates) == ()


MIN_MAX = sorted(m.name for m in METRICS if m.aggregation in (Aggregation.MIN, Aggregation.MAX))
readings = st.one_of(
    st.integers(-1000, 1000).map(str),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(repr),
    st.sampled_from(["NaN", "Inf", "-Inf", "oops", "1.0", "1", "01"]),
)


@given(name=st.sampled_from(MIN_MAX), a=readings, b=readings, c=readings)
def test_min_and_max_folds_are_associative(name: str, a: str, b: str, c: str) -> None:
    left = fold_metrics(fold_metrics({name: a}, {name: b}), {name: c})
    right = fold_metrics({name: a}, fold_metrics({name: b}, {name: c}))
    assert left == right


@given(a=readings, b=readings)
def test_a_bad_reading_never_folds_into_a_finite_one(a: str, b: str) -> None:
    from glimmer.verdict.numbers import read_float

    for name in ("elapsedS", "gpuTempC", "sustainedClockPct"):
        folded = fold_metrics({name: a}, {name: b})[name]
        if not (read_float(a).finite and read_float(b).finite):
            assert not read_float(folded).finite
