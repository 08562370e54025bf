"""The Threshold model: metric grammar, comparison enum, finite-decimal bounds, contract form."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from glimmer.api.threshold import Threshold, to_contract
from glimmer.contract.vocab import Applicability, Comparison
from glimmer.contract.vocab import Threshold as ContractThreshold


def _gate(**fields: object) -> dict[str, object]:
    return {"metric": "miscompares", "comparison": "Equal", "value": "0", **fields}


@pytest.mark.parametrize("value", ["0", "10.8", "-1", "+.5", "5.", "1e3", "1E-3", "0089"])
def test_finite_decimals_are_accepted_as_bounds(value: str) -> None:
    assert Threshold.model_validate(_gate(value=value)).value == value


@pytest.mark.parametrize(
    "value",
    ["NaN", "nan", "inf", "-Inf", "Infinity", "1e", "e3", ".", "", " 1", "1 ", "0x10", "zero"],
)
def test_anything_but_a_finite_decimal_is_refused_as_a_bound(value: str) -> None:
    with pytest.raises(ValidationError, match="finite decimal"):
        Threshold.model_validate(_gate(value=value))


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_a_bound_that_loads_always_parses_to_a_finite_float(x: float) -> None:
    text = repr(x)
    try:
        gate = Threshold.model_validate(_gate(value=text))
    except ValidationError:
        return
    assert float(gate.value) == float(gate.value)  # never NaN
    assert abs(float(gate.value)) != float("inf")


@pytest.mark.parametrize("metric", ["Bandwidth", "bus_bandwidth", "1st", "bus-bw", "", "p99.9"])
def test_a_metric_outside_the_grammar_is_refused(metric: str) -> None:
    with pytest.raises(ValidationError, match="canonical metric name"):
        Threshold.model_validate(_gate(metric=metric))


def test_a_comparison_must_be_one_of_the_four() -> None:
    with pytest.raises(ValidationError, match="GreaterThanOrEqual"):
        Threshold.model_validate(_gate(comparison="GreaterThan"))


def test_applicability_defaults_to_required_and_is_not_written_back() -> None:
    gate = Threshold.model_validate(_gate())
    assert gate.applicability is Applicability.REQUIRED
    assert "applicability" not in gate.model_dump(exclude_unset=True)


def test_a_gate_converts_to_the_contract_value_keeping_text() -> None:
    gate = Threshold(
        metric="busBandwidthGBs",
        comparison=Comparison.GREATER_THAN_OR_EQUAL,
        value="10.8",
        applicability=Applicability.REQUIRED_IF_MEASURABLE,
    )
    assert gate.to_contract() == ContractThreshold(
        "busBandwidthGBs", "GreaterThanOrEqual", "10.8", "RequiredIfMeasurable"
    )


def test_an_absent_list_of_gates_converts_to_none() -> None:
    assert to_contract(None) == ()
    assert [t.metric for t in to_contract([Threshold.model_validate(_gate())])] == ["miscompares"]
