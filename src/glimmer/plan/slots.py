"""Slots (§2.6, invariant 9): what a unit costs against ``maxConcurrentNodes``.

The cap is a facility interlock: how many nodes one run drives at once. A unit costs one slot
per node it loads (Node 1, Pair 2, Group N), checked once when the unit starts; a node the run
already holds (a live execution, or an unsettled result between segments, repeats and retries)
is already counted, so a unit costs only the nodes it would newly take.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from glimmer.verdict.units import units_of

# maxConcurrentNodes unset or below 1 reads as 1.
DEFAULT_CAP = 1


def effective_cap(max_concurrent_nodes: int | None) -> int:
    """The cap a pass applies: ``maxConcurrentNodes``, or 1 when unset or below 1."""
    if max_concurrent_nodes is None or max_concurrent_nodes < 1:
        return DEFAULT_CAP
    return max_concurrent_nodes


def unit_cost(scope: str, targets: Sequence[str]) -> int:
    """Slots one unit of ``scope`` takes over the run's ``targets``: a Node unit loads one node,
    a Pair unit its two ends, a Group unit every target (the nodes of the unit, as
    :mod:`glimmer.verdict.units` lists them; no targets, no unit, no cost)."""
    units = units_of(scope, targets)
    return len(units[0]) if units else 0


def slots_needed(busy: Collection[str], unit_nodes: Sequence[str]) -> int:
    """How many of the unit's distinct nodes are not already busy."""
    return sum(1 for node in dict.fromkeys(unit_nodes) if node not in busy)


def may_start(busy: Collection[str], unit_nodes: Sequence[str], cap: int) -> bool:
    """Whether a unit on ``unit_nodes`` may start while ``busy`` nodes are held under ``cap``.

    A unit whose nodes are all already held costs nothing and may always start; otherwise the
    nodes it newly takes must fit beside those held.
    """
    need = slots_needed(busy, unit_nodes)
    return need == 0 or len(busy) + need <= effective_cap(cap)
