"""How isolation cuts the nodes into groups at each stage (specs/certify.md §7.4): screening
groups, bisection halves, cross-boundary mixes and confirmation pairs. Pure functions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from glimmer.certify.grouping import NodeInfo

UNKNOWN_DOMAIN = "unknown"


@dataclass(frozen=True)
class Cell:
    """A named set of nodes (sorted) and the domains they come from."""

    name: str
    nodes: tuple[str, ...]
    domains: tuple[str, ...] = ()


def domains_of(nodes: Sequence[NodeInfo], key: str | None) -> dict[str, str]:
    """Node -> domain under ``key``; a node without the label is in domain ``unknown``."""
    if not key:
        return {}
    return {n.name: n.labels.get(key, UNKNOWN_DOMAIN) for n in nodes}


def screen_groups(nodes: Sequence[NodeInfo], key: str | None) -> list[Cell]:
    """One group per domain value, domains sorted (``screen-<i>``); without a key, chunks of
    K = max(⌈√N⌉, 2) in name order — √N balances the screening jobs against the depth of the
    bisection that follows."""
    names = sorted(n.name for n in nodes)
    if key:
        dom = domains_of(nodes, key)
        by: dict[str, list[str]] = {}
        for n in names:
            by.setdefault(dom[n], []).append(n)
        return [Cell(f"screen-{i}", tuple(by[d]), (d,)) for i, d in enumerate(sorted(by))]
    k = max(math.ceil(math.sqrt(len(names))), 2)
    return [
        Cell(f"screen-{i}", tuple(names[j : j + k])) for i, j in enumerate(range(0, len(names), k))
    ]


def split(cell: Cell, domain_of: Mapping[str, str], round_no: int, index: int) -> tuple[Cell, Cell]:
    """Halves of a failed group: by domain when it spans several (domain list split at its
    midpoint, so a rack stays whole as long as possible), else by sorted name at len/2."""
    doms = sorted({domain_of.get(n, UNKNOWN_DOMAIN) for n in cell.nodes}) if domain_of else []
    if len(doms) > 1:
        left = set(doms[: len(doms) // 2])
        a = tuple(n for n in cell.nodes if domain_of.get(n, UNKNOWN_DOMAIN) in left)
        b = tuple(n for n in cell.nodes if domain_of.get(n, UNKNOWN_DOMAIN) not in left)
        da, db = tuple(sorted(left)), tuple(d for d in doms if d not in left)
    else:
        half = len(cell.nodes) // 2
        a, b = cell.nodes[:half], cell.nodes[half:]
        da = db = tuple(doms)
    return (
        Cell(f"bisect-{round_no}-{index}a", a, da),
        Cell(f"bisect-{round_no}-{index}b", b, db),
    )


def mixes(a: Sequence[str], b: Sequence[str], index: int) -> list[Cell]:
    """Cross-boundary probes of two halves that passed alone: first halves together (mix0)
    and second halves together (mix1, only when it has two nodes or more)."""
    ha, hb = max(len(a) // 2, 1), max(len(b) // 2, 1)
    out = [Cell(f"cross-{index}-mix0", tuple(sorted([*a[:ha], *b[:hb]])))]
    second = tuple(sorted([*a[ha:], *b[hb:]]))
    if len(second) >= 2:
        out.append(Cell(f"cross-{index}-mix1", second))
    return out


def confirmation_groups(suspects: Sequence[str], healthy: Sequence[str]) -> list[Cell]:
    """``confirm-<i>`` = [suspect, healthy[i mod |healthy|]]: the rotation spreads references
    so confirmations rarely share a node. None without a healthy reference or suspects."""
    if not healthy:
        return []
    return [Cell(f"confirm-{i}", (s, healthy[i % len(healthy)])) for i, s in enumerate(suspects)]
