"""One figure for a node from its devices' figures (§9 preamble): the worst device's, by the
metric's direction in the registry. The runner programs fold their devices with it, and the
simulator folds its simulated devices with it, so the two cannot disagree on what "worst" is.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from functools import lru_cache
from typing import TypeGuard, TypeVar

from glimmer.contract.registry import Aggregation, aggregation_of

V = TypeVar("V")  # what a device's value may be besides a number (a label, n/a, None)

# Lifetime totals fold Last across a soak's windows but are summed across a node's devices.
LIFETIME = frozenset({"eccErrors", "remappedRows"})
# Unregistered names fold Last, which would hide a bad device behind the first; these are error
# ceilings by meaning (compute-smoke's maxRelError is maxRelativeError under another spelling,
# Appendix C.7), so the worst device is the largest.
CEILINGS = frozenset({"maxRelError"})
# Exactly these types are numbers to the fold; anything else (bool, a label, a subclass of a
# number) takes the general test.
_PLAIN_NUMBERS = frozenset({int, float})

Fold = Callable[[Iterable[int | float]], int | float]


@lru_cache(maxsize=4096)
def numeric_fold(name: str) -> Fold | None:
    """How the devices' numbers of canonical metric ``name`` fold (None: the first device's).

    It depends on the name alone, so it is decided once per name: a node's fold asks it for
    every printed figure on every call."""
    if name in LIFETIME:
        return sum
    if name in CEILINGS:
        return max
    agg = aggregation_of(name)
    if agg is Aggregation.SUM:
        return sum
    if agg is Aggregation.MIN:
        return min
    if agg is Aggregation.MAX:
        return max
    return None


def fold_devices(name: str, values: Sequence[V], once: Collection[str] = ()) -> V | int | float:
    """The node's value of canonical metric ``name`` from one value per device (in device
    order). Labels, and the names in ``once`` (a value about the whole execution), are the
    first device's."""
    if name in once:
        return values[0]
    return fold_by(numeric_fold(name), values)


def fold_by(rule: Fold | None, values: Sequence[V]) -> V | int | float:
    """:func:`fold_devices` with the name's :func:`numeric_fold` already in hand (a caller
    folding the same names on every call looks it up once)."""
    if rule is not None and _all_numbers(values):
        return rule(values)
    return values[0]


def _all_numbers(values: Sequence[object]) -> TypeGuard[Sequence[int | float]]:
    """Every value is an int or a float, and none is a bool."""
    # The set of the values' types answers for plain ints and floats at C speed; only a board
    # printing something else pays for the isinstance walk.
    if set(map(type, values)) <= _PLAIN_NUMBERS:
        return True
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
