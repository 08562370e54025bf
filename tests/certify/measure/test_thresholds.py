"""Threshold expressions (specs/certify.md §7.5; §9.2 scenario 29)."""

from __future__ import annotations

import math

import pytest

from glimmer.certify.measure.threshold import (
    ThresholdError,
    Violation,
    holds,
    unknown_keys,
    violations,
)


@pytest.mark.parametrize(
    ("expr", "value", "ok"),
    [
        ("value >= 400", 400.0, True),
        ("value >= 400", 399.9999, False),
        ("value > 400", 400.0, False),
        ("value <= 1.5", 1.5, True),
        ("value < 1.5", 1.5, False),
        ("value >= 0.9 && value <= 1.0", 0.95, True),
        ("value >= 0.9 && value <= 1.0", 1.01, False),
        ("value / 480 >= 0.9", 440.0, True),
        ("(value < 10) || value > 100", 150.0, True),
        ("!(value < 10)", 5.0, False),
        ("value == 2e2", 200.0, True),
        ("-value < 0", 3.0, True),
    ],
)
def test_boundaries_ranges_and_ratios(expr: str, value: float, ok: bool) -> None:
    assert holds(expr, value) is ok


@pytest.mark.parametrize(
    ("expr", "why"),
    [
        ("value >=", "ends too early"),
        ("value + 1", "must return a bool"),
        ("size > 3", "unknown name"),
        ("value > 3 $", "unexpected text"),
        ("value && true", "a bool was expected"),
        ("(value > 1", "ends too early"),
        ("(value > 1 2", "missing"),
        ("value / 0 > 1", "division by zero"),
    ],
)
def test_invalid_expressions_are_errors(expr: str, why: str) -> None:
    with pytest.raises(ThresholdError, match=why):
        holds(expr, 1.0)


def test_non_finite_value_never_passes() -> None:
    assert not holds("value != 5", math.nan)
    assert not holds("value > 0", math.inf)


def test_unknown_keys_sorted_and_violations_sorted_by_key() -> None:
    gates = {"zeta": "value > 1", "alpha": "value > 1", "goodputRatio": "value >= 0.9"}
    assert unknown_keys(gates) == ["alpha", "zeta"]
    got = violations(
        {
            "goodputRatio": "value >= 0.9",
            "busBandwidthGBps": "value >= 400",
            "avgStepTimeSec": "value < 1",
        },
        {"goodputRatio": 0.5, "busBandwidthGBps": 300.0},
    )
    assert [v.key for v in got] == ["busBandwidthGBps", "goodputRatio"]  # missing one skipped
    assert got[0].message == (
        'Threshold "busBandwidthGBps" violated: measured 300.0000, expression: value >= 400'
    )
    assert Violation("k", 1.0, "e").message.startswith('Threshold "k"')
