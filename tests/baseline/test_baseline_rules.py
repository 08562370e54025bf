"""The rule that turns a fleet's distribution into a gate (glimmer.baseline.rules)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from glimmer.baseline.collect import MetricSamples, Sample
from glimmer.baseline.rules import (
    CEILING,
    COUNTER,
    FLOOR,
    NAMEPLATE,
    RULES,
    Declined,
    Gate,
    Shape,
    Skipped,
    derive_gate,
    rule_for,
)
from glimmer.contract.registry import METRICS, Aggregation, ThresholdUse, lookup
from glimmer.contract.vocab import Applicability, Comparison

FLOOR_METRIC = "bandwidthGbps"  # Acceptance, Min
CEILING_METRIC = "latencyUs"  # Acceptance, Max
COUNTER_METRIC = "xidEvents"  # Acceptance, Sum, no unit
NAMEPLATE_METRIC = "deviceCount"  # Acceptance, Last, no unit

values = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_subnormal=False)
samples = st.lists(st.tuples(values, st.booleans()), min_size=1, max_size=60).map(
    lambda xs: [Sample(f"node-{i:03d}", v, clean) for i, (v, clean) in enumerate(xs)]
)
ks = st.floats(min_value=0, max_value=12, allow_nan=False)
margins = st.floats(min_value=0, max_value=0.2, allow_nan=False)


def found(metric: str, readings: list[Sample], na: tuple[str, ...] = ()) -> MetricSamples:
    return MetricSamples(metric, list(readings), list(na))


def gate_of(outcome: Gate | Declined | Skipped) -> Gate:
    assert isinstance(outcome, Gate), outcome
    return outcome


@given(samples, ks)
def test_the_derived_floor_is_at_or_below_every_clean_sample(
    readings: list[Sample], k: float
) -> None:
    gate = gate_of(derive_gate(found(FLOOR_METRIC, readings), k=k, min_samples=1))
    assert gate.threshold.comparison is Comparison.GREATER_THAN_OR_EQUAL
    bound = float(gate.threshold.value)
    assert all(bound <= s.value for s in readings if s.clean)


@given(samples, ks)
def test_the_derived_ceiling_is_at_or_above_every_clean_sample(
    readings: list[Sample], k: float
) -> None:
    gate = gate_of(derive_gate(found(CEILING_METRIC, readings), k=k, min_samples=1))
    assert gate.threshold.comparison is Comparison.LESS_THAN_OR_EQUAL
    bound = float(gate.threshold.value)
    assert all(bound >= s.value for s in readings if s.clean)


@given(st.data(), samples, ks, st.sampled_from([FLOOR_METRIC, CEILING_METRIC, COUNTER_METRIC]))
def test_the_gate_does_not_depend_on_the_order_of_the_samples(
    data: st.DataObject, readings: list[Sample], k: float, metric: str
) -> None:
    shuffled = data.draw(st.permutations(readings))
    assert derive_gate(found(metric, readings), k=k, min_samples=1) == derive_gate(
        found(metric, shuffled), k=k, min_samples=1
    )


@given(samples)
def test_a_floor_never_goes_below_zero_when_no_sample_did(readings: list[Sample]) -> None:
    positive = [Sample(s.unit, abs(s.value), s.clean) for s in readings]
    gate = gate_of(derive_gate(found(FLOOR_METRIC, positive), k=50, min_samples=1))
    assert float(gate.threshold.value) >= 0


def _fleet(vals: list[float], clean: bool = True) -> list[Sample]:
    return [Sample(f"n{i:02d}", v, clean) for i, v in enumerate(vals)]


def test_a_floor_is_median_minus_k_mad_rounded_down_to_three_digits() -> None:
    # median 100, raw MAD 1 -> scaled 1.4826; 100 - 4*1.4826 = 94.0696 -> 94.0
    gate = gate_of(derive_gate(found(FLOOR_METRIC, _fleet([99, 100, 101, 99, 101, 100, 100])), k=4))
    assert (gate.threshold.value, gate.raw is not None) == ("94", True)
    assert gate.summary.median == 100 and gate.worst is not None and gate.worst.value == 99
    assert gate.loosened_for == ()


def test_the_worst_clean_unit_loosens_a_floor_and_is_named_for_review() -> None:
    readings = [*_fleet([100.0] * 9), Sample("slow-node", 80.0, True)]
    gate = gate_of(derive_gate(found(FLOOR_METRIC, readings), k=6))
    assert gate.threshold.value == "80"
    assert [s.unit for s in gate.loosened_for] == ["slow-node"]


def test_an_indicted_unit_does_not_loosen_the_floor() -> None:
    readings = [*_fleet([100, 101, 99, 100, 100, 102, 98]), Sample("bad-node", 50.0, False)]
    gate = gate_of(derive_gate(found(FLOOR_METRIC, readings), k=6))
    assert float(gate.threshold.value) > 50


def test_a_counter_zero_everywhere_gets_equal_zero() -> None:
    gate = gate_of(derive_gate(found(COUNTER_METRIC, _fleet([0.0] * 8))))
    assert (gate.threshold.comparison, gate.threshold.value) == (Comparison.EQUAL, "0")
    assert gate.rule is COUNTER


def test_a_counter_nonzero_somewhere_is_reported_not_gated() -> None:
    outcome = derive_gate(found("iterationsCompleted", _fleet([0, 0, 0, 0, 3, 0])))
    assert isinstance(outcome, Declined)
    assert "nonzero on 1 of 6" in outcome.reason and "n04" in outcome.reason


def test_a_nameplate_the_fleet_agrees_on_gets_equal_that_value() -> None:
    gate = gate_of(derive_gate(found(NAMEPLATE_METRIC, _fleet([8.0] * 6))))
    assert (gate.threshold.comparison, gate.threshold.value) == (Comparison.EQUAL, "8")
    mixed = derive_gate(found(NAMEPLATE_METRIC, _fleet([8, 8, 8, 4, 8, 8])))
    assert isinstance(mixed, Declined) and "differs" in mixed.reason


def test_a_metric_some_unit_declared_na_is_required_if_measurable() -> None:
    gate = gate_of(derive_gate(found("eccErrors", _fleet([0.0] * 6), na=("gb10-01",))))
    assert gate.threshold.applicability is Applicability.REQUIRED_IF_MEASURABLE
    assert gate.unmeasurable == 1


def test_a_spread_metric_is_always_required_if_measurable() -> None:
    gate = gate_of(derive_gate(found("sustainedClockSpreadPct", _fleet([0.5, 0.7, 0.6, 0.8, 1.0]))))
    assert gate.threshold.applicability is Applicability.REQUIRED_IF_MEASURABLE


def test_too_few_samples_make_no_gate() -> None:
    outcome = derive_gate(found(FLOOR_METRIC, _fleet([1.0, 2.0, 3.0, 4.0])), min_samples=5)
    assert isinstance(outcome, Declined) and "only 4 sample(s), fewer than 5" in outcome.reason


def test_a_metric_a_passing_unit_did_not_report_makes_no_gate() -> None:
    metric = MetricSamples(FLOOR_METRIC, _fleet([1.0] * 6), missing=["quiet-node"])
    outcome = derive_gate(metric)
    assert isinstance(outcome, Declined) and "quiet-node" in outcome.reason


def test_a_metric_that_was_not_a_number_somewhere_makes_no_gate() -> None:
    metric = MetricSamples(FLOOR_METRIC, _fleet([1.0] * 6), unreadable=[("odd-node", "NaN")])
    outcome = derive_gate(metric)
    assert isinstance(outcome, Declined) and "odd-node" in outcome.reason


def test_evidence_labels_and_unregistered_names_are_never_gated() -> None:
    assert derive_gate(found("gpuName", _fleet([1.0] * 6))) is Skipped.EVIDENCE
    assert derive_gate(found("ratedBoostClockMHz", _fleet([1.0] * 6))) is Skipped.EVIDENCE
    assert derive_gate(found("gpuIdleSamples", _fleet([0.0] * 6))) is Skipped.UNREGISTERED


def test_the_rule_table_covers_every_aggregation_and_reads_the_registry() -> None:
    assert set(RULES) == set(Aggregation)
    assert (RULES[Aggregation.MIN], RULES[Aggregation.MAX]) == (FLOOR, CEILING)
    assert (RULES[Aggregation.SUM], RULES[Aggregation.LAST]) == (COUNTER, NAMEPLATE)
    # A Sum with a unit is an accumulated quantity: a floor, never Equal on a unit.
    elapsed = lookup("elapsedS")
    assert elapsed is not None and rule_for(elapsed) is FLOOR
    for spec in METRICS:
        if spec.use is ThresholdUse.ACCEPTANCE:
            assert rule_for(spec).shape in set(Shape)


@pytest.mark.parametrize(("metric", "bound"), [(FLOOR_METRIC, "693"), (CEILING_METRIC, "707")])
def test_a_distribution_with_no_spread_keeps_a_margin_of_one_percent(
    metric: str, bound: str
) -> None:
    gate = gate_of(derive_gate(found(metric, _fleet([700.0] * 6))))
    assert (gate.threshold.value, gate.margin) == (bound, 7.0)
    exact = gate_of(derive_gate(found(metric, _fleet([700.0] * 6)), min_margin=0))
    assert exact.threshold.value == "700"


def test_a_saturated_link_is_not_gated_at_its_line_rate() -> None:
    # RDMA at line rate: a MAD of hundredths puts the bare floor at 399, failing the next
    # healthy link that measures 398.9; the 1 % margin puts it at 395.
    link = _fleet([399.45, 399.5, 399.48, 399.47, 399.52, 399.46])
    gate = gate_of(derive_gate(found(FLOOR_METRIC, link)))
    assert gate.threshold.value == "395"
    assert gate_of(derive_gate(found(FLOOR_METRIC, link), min_margin=0)).threshold.value == "399"
