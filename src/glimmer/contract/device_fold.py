"""One figure for a node from its devices' figures (§9 preamble): the worst device's, by the
metric's direction in the registry. The runner programs fold their devices with it, and the
simulator folds its simulated devices with it, so the two cannot disagree on what "worst" is.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TypeVar

from glimmer.contract.registry import Aggregation, aggregation_of

V = TypeVar("V")  # what a device's value may be besides a number (a label, n/a, None)

# Lifetime totals fold Last across a soak's windows but are summed across a node's devices.
LIFETIME = frozenset({"eccErrors", "remappedRows"})
# Unregistered names fold Last, which would hide a bad device behind the first; these are error
# ceilings by meaning (compute-smoke's maxRelError is maxRelativeError under another spelling,
# Appendix C.7), so the worst device is the largest.
CEILINGS = frozenset({"maxRelError"})


def fold_devices(name: str, values: Sequence[V], once: Collection[str] = ()) -> V | int | float:
    """The node's value of canonical metric ``name`` from one value per device (in device
    order). Labels, and the names in ``once`` (a value about the whole execution), are the
    first device's."""
    numbers: list[int | float] = [
        v for v in values if isinstance(v, int | float) and not isinstance(v, bool)
    ]
    if len(numbers) != len(values) or name in once:
        return values[0]
    if name in LIFETIME:
        return sum(numbers)
    if name in CEILINGS:
        return max(numbers)
    agg = aggregation_of(name)
    if agg is Aggregation.SUM:
        return sum(numbers)
    if agg is Aggregation.MIN:
        return min(numbers)
    if agg is Aggregation.MAX:
        return max(numbers)
    return values[0]
