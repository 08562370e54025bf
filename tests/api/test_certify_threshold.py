"""Threshold expressions are read and checked when a certification file loads (issue 9 item 1):
an expression that could never judge a measured value is an authoring error, refused with the
field and line, and never reaches a Job where it would read as a hardware verdict."""

from __future__ import annotations

import math
import operator

import pytest
from hypothesis import given
from hypothesis import strategies as st

import glimmer.api.certify.kinds  # noqa: F401  (registers the certification kinds)
from glimmer.api.certify.threshold import ThresholdError, evaluate, parse
from glimmer.api.load import load_text
from glimmer.errors import InputErrors

CERT = """\
apiVersion: certify.glimmer.ai/v1alpha1
kind: Certification
metadata: {{name: c}}
spec:
  target: {{nodeSelector: {{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options:
        thresholds:
          busBandwidthGBps: {expression}
"""

OPS = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt,
    ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
}  # fmt: skip
finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)


@pytest.mark.parametrize(
    ("expression", "why"),
    [
        ('"value >>= fast"', "unexpected '>='"),
        ('"value >= abc"', "unknown name 'abc'"),
        ('"400"', "must return a bool"),
        ('"value => 400"', "'=>' is not CEL; write '>='"),
        ('"value >= 1e999"', "too large for a double"),
        ('"value >= 1e308 * 10"', "overflows a double"),
        ('"value / (2 - 2) > 1"', "division by zero"),
        ('"true"', "never reads 'value'"),
        ('"300 <= value <= 500"', "comparisons do not chain"),
        ('"value >== 400"', "'>==' is not an operator"),
    ],
)
def test_a_threshold_that_cannot_gate_a_value_is_refused_at_load_with_field_and_line(
    expression: str, why: str
) -> None:
    with pytest.raises(InputErrors) as e:
        load_text(CERT.format(expression=expression), "cert.yaml")
    (error,) = e.value.errors
    assert error.location.field == "spec.categories[0].options.thresholds.busBandwidthGBps"
    assert (error.location.file, error.location.line) == ("cert.yaml", 11)
    assert error.location.obj == "Certification/c"
    assert why in error.message


def test_an_unknown_threshold_key_is_refused_at_load_with_the_nearest_key() -> None:
    text = CERT.format(expression='"value >= 400"').replace("busBandwidthGBps", "busbw")
    with pytest.raises(InputErrors) as e:
        load_text(text, "cert.yaml")
    (error,) = e.value.errors
    assert error.location.field == "spec.categories[0].options.thresholds.busbw"
    assert "unknown threshold key 'busbw'" in error.message


@given(op=st.sampled_from(sorted(OPS)), bound=finite, value=finite)
def test_a_comparison_with_a_finite_bound_judges_as_python_compares(
    op: str, bound: float, value: float
) -> None:
    tree = parse(f"value {op} {bound!r}")
    assert evaluate(tree, value) is OPS[op](value, bound)


@given(text=st.text(alphabet="value0123456789.eE+-*/()<>=!&| truefalsx", max_size=30))
def test_any_text_either_parses_to_a_gate_or_is_refused_with_a_threshold_error(
    text: str,
) -> None:
    try:
        tree = parse(text)
    except ThresholdError:
        return
    # What loads always yields a verdict for an ordinary measurement: a bool, or (only when
    # the measurement itself zeroes a divisor) the documented ThresholdError.
    for value in (0.0, 1.0, 400.0, -3.5):
        try:
            assert evaluate(tree, value) in (True, False)
        except ThresholdError as e:
            assert "division by zero" in str(e)


@given(value=st.sampled_from([math.inf, -math.inf, math.nan]))
def test_a_non_finite_measurement_never_passes_a_loaded_gate(value: float) -> None:
    for text in ("value >= 400", "value != 5", "!(value < 0)", "value <= 1e300"):
        assert evaluate(parse(text), value) is False
