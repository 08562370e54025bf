"""Which pairs of nodes a link sweep tests: one BurnInRun per pair, since a Pair unit takes
exactly two nodes.

The pairs come in rounds in which no node appears twice, so a sweep run under one node cap
keeps every node of a round busy at once instead of queueing behind a shared node:

* ``ring`` — every node with the next one, the last with the first (N pairs for N ≥ 3; one for
  two). Every node is in two pairs, so a bad node fails both of its pairs while a bad link fails
  one: the sweep can tell them apart. Two rounds for an even N, three for an odd one.
* ``all-pairs`` — every unordered pair, N(N−1)/2, in N−1 rounds (N rounds for an odd N) by the
  circle method of round-robin tournaments.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from glimmer.api.run import BurnInRun

Pair = tuple[str, str]
MAX_PAIRS = 50_000  # one sweep; more is a fleet-wide campaign, run as several


class PairShape(StrEnum):
    RING = "ring"
    ALL_PAIRS = "all-pairs"


class SweepError(ValueError):
    """The nodes given cannot make the sweep asked for (the message says why)."""


def _ring(nodes: Sequence[str]) -> list[Pair]:
    n = len(nodes)
    if n == 2:
        return [(nodes[0], nodes[1])]
    pairs = [(nodes[i], nodes[(i + 1) % n]) for i in range(n)]
    if n % 2 == 0:
        return pairs[0::2] + pairs[1::2]  # two perfect matchings
    # Odd: the even-indexed pairs but the last (it shares node 0 with the first), the odd
    # ones, then the closing pair alone.
    return pairs[0 : n - 1 : 2] + pairs[1::2] + [pairs[n - 1]]


def _all_pairs(nodes: Sequence[str]) -> list[Pair]:
    seats: list[str | None] = list(nodes)
    if len(seats) % 2:
        seats.append(None)  # the node paired with None sits the round out
    n = len(seats)
    pairs: list[Pair] = []
    for _ in range(n - 1):
        for i in range(n // 2):
            a, b = seats[i], seats[n - 1 - i]
            if a is not None and b is not None:
                pairs.append((a, b))
        seats = [seats[0], seats[-1], *seats[1:-1]]  # rotate all but the first seat
    return pairs


def pairs_of(nodes: Sequence[str], shape: PairShape) -> list[Pair]:
    """The pairs of ``nodes`` (in the order given) that ``shape`` tests, round by round."""
    if len(nodes) < 2:
        raise SweepError(f"a {shape.value} sweep needs at least two nodes; {len(nodes)} given")
    count = len(nodes) if shape is PairShape.RING else len(nodes) * (len(nodes) - 1) // 2
    if shape is PairShape.RING and len(nodes) == 2:
        count = 1
    if count > MAX_PAIRS:
        raise SweepError(
            f"a {shape.value} sweep of {len(nodes)} nodes is {count:,} pairs; at most "
            f"{MAX_PAIRS:,} in one sweep: narrow the nodes, or sweep a ring"
        )
    return _ring(nodes) if shape is PairShape.RING else _all_pairs(nodes)


def pair_runs(base: BurnInRun, pairs: Sequence[Pair]) -> list[BurnInRun]:
    """One run per pair: the base run's spec on the two nodes, named ``<base>-<index>``."""
    width = len(str(len(pairs)))
    runs = []
    for i, (a, b) in enumerate(pairs, start=1):
        target = base.spec.target.model_copy(update={"node_names": [a, b]})
        spec = base.spec.model_copy(update={"target": target, "max_concurrent_nodes": 2})
        meta = base.metadata.model_copy(update={"name": f"{base.name}-{i:0{width}d}"})
        runs.append(base.model_copy(update={"metadata": meta, "spec": spec}))
    return runs
