"""Numbers are read and written as the Go original did (strconv.ParseFloat, %g, 'f' -1)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from glimmer.verdict.numbers import format_fixed, format_g, read_float


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", 0.0),
        ("1", 1.0),
        ("-1.5", -1.5),
        ("+.5", 0.5),
        ("5.", 5.0),
        ("1e3", 1000.0),
        ("1E-3", 0.001),
        ("1_000", 1000.0),
        ("0x1p-2", 0.25),
        ("0x1.8p1", 3.0),
        ("1e-400", 0.0),  # underflow is not an error in Go
    ],
)
def test_go_accepts_these_finite_spellings(text: str, value: float) -> None:
    reading = read_float(text)
    assert reading.finite
    assert reading.value == value


@pytest.mark.parametrize("text", ["NaN", "nan", "NAN"])
def test_nan_is_numeric_but_not_finite(text: str) -> None:
    reading = read_float(text)
    assert reading.numeric and not reading.finite
    assert reading.value is not None and math.isnan(reading.value)


@pytest.mark.parametrize("text", ["Inf", "+inf", "-Inf", "infinity", "-INFINITY"])
def test_infinities_are_numeric_but_not_finite(text: str) -> None:
    reading = read_float(text)
    assert reading.numeric and not reading.finite


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        " 1",
        "1 ",
        "+nan",
        "-nan",
        "infin",
        "1e",
        "e1",
        ".",
        "+",
        "_1",
        "1_",
        "1__0",
        "0x10",
        "1e400",
        "-1e400",
        "١",
        "1,0",
        "0b1",
        "1f",
    ],
)
def test_go_refuses_these(text: str) -> None:
    assert read_float(text).value is None


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3.0, "3"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e21, "1000000000000000000000"),
        (1e-7, "0.0000001"),
        (-0.0, "-0"),
        (123.456, "123.456"),
        (math.inf, "+Inf"),
        (-math.inf, "-Inf"),
        (math.nan, "NaN"),
    ],
)
def test_fixed_format_matches_go_f_minus_one(value: float, text: str) -> None:
    assert format_fixed(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (70.0, "70"),
        (65.5, "65.5"),
        (123456.0, "123456"),
        (1234567.0, "1.234567e+06"),
        (1e6, "1e+06"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (1e100, "1e+100"),
        (0.0, "0"),
    ],
)
def test_g_format_matches_go_percent_g(value: float, text: str) -> None:
    assert format_g(value) == text


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_fixed_format_round_trips(value: float) -> None:
    assert read_float(format_fixed(value)).value == value


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_g_format_round_trips(value: float) -> None:
    assert read_float(format_g(value)).value == value


@given(st.text())
def test_reading_never_raises(text: str) -> None:
    read_float(text)
