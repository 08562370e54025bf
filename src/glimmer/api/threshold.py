"""A gate on one metric, as written in a test, a variant or a plan.

The wire form is checked here (metric grammar, comparison enum, finite-decimal value) so that a
typo is refused at load with the field named. Evaluation works on the neutral contract value.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from glimmer.api.base import Wire
from glimmer.contract.vocab import Applicability, Comparison
from glimmer.contract.vocab import Threshold as ContractThreshold

METRIC_PATTERN = r"^[a-z][a-zA-Z0-9]*$"
# Finite decimals only: NaN, Inf and words can never be a bound.
VALUE_PATTERN = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"

_METRIC = re.compile(METRIC_PATTERN)
_VALUE = re.compile(VALUE_PATTERN)


def _metric(name: str) -> str:
    if not _METRIC.match(name):
        raise ValueError(
            f"metric {name!r} is not a canonical metric name "
            "(lowerCamelCase letters and digits, such as busBandwidthGBs)"
        )
    return name


def _value(text: str) -> str:
    if not _VALUE.match(text):
        raise ValueError(
            f'value {text!r} is not a finite decimal number (write it quoted, such as "0", '
            '"10.8" or "1e3")'
        )
    return text


MetricName = Annotated[
    str, AfterValidator(_metric), Field(json_schema_extra={"pattern": METRIC_PATTERN})
]
BoundValue = Annotated[
    str, AfterValidator(_value), Field(json_schema_extra={"pattern": VALUE_PATTERN})
]


class Threshold(Wire):
    """``{metric, comparison, value, applicability}``: one gate, compared exactly."""

    metric: MetricName
    comparison: Comparison
    value: BoundValue
    applicability: Applicability = Applicability.REQUIRED

    def to_contract(self) -> ContractThreshold:
        """The neutral value the verdict rules evaluate."""
        return ContractThreshold(
            metric=self.metric,
            comparison=self.comparison.value,
            value=self.value,
            applicability=self.applicability.value,
        )


# The engine converts a test's gates at every harvest (about 65 times a node in an acceptance
# run), and a pinned plan's list is one object for the whole run: the conversion is kept per list
# object. The entry holds the list itself, so its id cannot be reused while it is kept.
_CONVERTED = 256
_converted: dict[int, tuple[list[Threshold], tuple[ContractThreshold, ...]]] = {}


def to_contract(thresholds: list[Threshold] | None) -> tuple[ContractThreshold, ...]:
    """Convert a (possibly absent) list of gates, keeping their order."""
    if not thresholds:
        return ()
    kept = _converted.get(id(thresholds))
    if kept is not None and kept[0] is thresholds and len(kept[1]) == len(thresholds):
        return kept[1]
    converted = tuple(t.to_contract() for t in thresholds)
    if len(_converted) >= _CONVERTED:
        _converted.clear()
    _converted[id(thresholds)] = (thresholds, converted)
    return converted
