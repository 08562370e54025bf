"""Cumulative counters under faults: the integral over time of the intensity reaching an entity.

A counter (ECC errors, NVLink CRC flits, link-down events) grows at ``rate × intensity`` while a
fault reaches its entity. Overlapping faults of one mode combine by maximum at every instant
(specs/fleet.md §4.4), so the integral is of the maximum, not a sum of integrals. Most entities
are reached by one fault at a time; those are integrated in one vectorised step, and only
entities with overlapping faults walk their breakpoints.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np

from glimmer.sim.arrays import FloatArray, IntArray
from glimmer.sim.faults import Fault, effective_intensity


def _integral_of_max(intervals: list[tuple[float, float, float]]) -> float:
    """∫ max(levels of intervals covering s) ds for (start, end, level) intervals."""
    points = sorted({p for s, e, _ in intervals for p in (s, e)})
    total = 0.0
    for a, b in itertools.pairwise(points):
        level = max((lv for s, e, lv in intervals if s <= a and e >= b), default=0.0)
        total += level * (b - a)
    return total


def integrate(
    faults: Sequence[Fault],
    reach: Callable[[str], IntArray],
    n: int,
    since: float,
    until: float,
) -> FloatArray:
    """Per entity (``n`` of them), ∫ max intensity dt over [since, until) in seconds."""
    out = np.zeros(n)
    if until <= since:
        return out
    ents: list[IntArray] = []
    starts: list[float] = []
    ends: list[float] = []
    levels: list[float] = []
    for f in faults:
        level = effective_intensity(f.intensity)
        lo = since if f.window.start is None else max(since, f.window.start)
        hi = until if f.window.end is None else min(until, f.window.end)
        if level <= 0.0 or hi <= lo:
            continue
        idx = reach(f.target)
        if idx.size == 0:
            continue
        ents.append(idx)
        starts.extend([lo] * idx.size)
        ends.extend([hi] * idx.size)
        levels.extend([level] * idx.size)
    if not ents:
        return out
    ent = np.concatenate(ents)
    start, end, level_arr = np.array(starts), np.array(ends), np.array(levels)
    counts = np.bincount(ent, minlength=n)
    single = counts[ent] == 1
    out[ent[single]] = level_arr[single] * (end[single] - start[single])
    for e in np.unique(ent[~single]).tolist():
        rows = np.flatnonzero(ent == e)
        out[e] = _integral_of_max(
            [(float(start[r]), float(end[r]), float(level_arr[r])) for r in rows]
        )
    return out
