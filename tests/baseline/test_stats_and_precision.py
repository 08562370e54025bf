"""Robust statistics and the outward rounding of bounds."""

from __future__ import annotations

import math
import re

from hypothesis import given
from hypothesis import strategies as st

from glimmer.api.threshold import VALUE_PATTERN
from glimmer.baseline.precision import round_down, round_up
from glimmer.baseline.stats import MAD_TO_SIGMA, mad, median, summarize

finite = st.floats(allow_nan=False, allow_infinity=False)
_VALUE = re.compile(VALUE_PATTERN)


def test_median_and_scaled_mad() -> None:
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert mad([1.0, 2.0, 3.0, 4.0, 100.0]) == MAD_TO_SIGMA * 1.0  # the outlier moves nothing
    s = summarize([5.0, 1.0, 3.0])
    assert (s.n, s.median, s.low, s.high) == (3, 3.0, 1.0, 5.0)


@given(finite)
def test_rounding_down_never_rises_and_reads_back_as_a_bound(x: float) -> None:
    text = round_down(x)
    assert _VALUE.match(text), text
    assert math.isfinite(float(text)) and float(text) <= x


@given(finite)
def test_rounding_up_never_falls_and_reads_back_as_a_bound(x: float) -> None:
    text = round_up(x)
    assert _VALUE.match(text), text
    assert math.isfinite(float(text)) and float(text) >= x


def test_three_significant_digits_toward_the_loose_side() -> None:
    assert (round_down(95.61873), round_up(95.61873)) == ("95.6", "95.7")
    assert (round_down(2619.0), round_up(2619.0)) == ("2610", "2620")
    assert (round_down(0.1), round_up(0.1)) == ("0.1", "0.1")
    assert (round_down(1.234567e-6), round_up(1.234567e-6)) == ("1.23e-6", "1.24e-6")
    assert (round_down(-3.21), round_up(-3.21)) == ("-3.21", "-3.21")
    assert round_down(0.0) == "0"
