"""Faults: a mode applied to a target with an intensity over a time window, and their capture.

A :class:`Fault` is what a fleet declaration or ``--fault MODE@TARGET[=INTENSITY]`` asks for.
Capture (specs/fleet.md §4.2) keeps, at one instant, the faults whose window contains it and
whose intensity is finite and positive, clamps intensity to 1, and folds several faults of the
same mode on the same target into one by maximum (§4.4: overlaps never add up). Which targets a
mode accepts and what they reach lives in :mod:`glimmer.sim.reach`; this module needs no
topology.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from glimmer.sim.modes import MODE_BY_NAME


@dataclass(frozen=True)
class Window:
    """A half-open interval [start, end) of simulated time in Unix seconds; None is unbounded.

    Half-open so that back-to-back windows never overlap at the seam and a fault that ends at t
    is already gone at t.
    """

    start: float | None = None
    end: float | None = None

    def contains(self, t: float) -> bool:
        """Whether the instant ``t`` (Unix seconds) lies inside the window."""
        return (self.start is None or self.start <= t) and (self.end is None or t < self.end)

    def overlap(self, lo: float, hi: float) -> float:
        """Seconds of the window inside [lo, hi); 0 when they do not meet."""
        a = lo if self.start is None else max(lo, self.start)
        b = hi if self.end is None else min(hi, self.end)
        return max(0.0, b - a)


ALWAYS = Window()


@dataclass(frozen=True)
class Fault:
    """A request to inject ``mode`` on ``target`` at ``intensity`` during ``window``."""

    mode: str
    target: str
    intensity: float = 1.0
    window: Window = ALWAYS

    def active_at(self, t: float) -> bool:
        """Active: inside its window with a finite, positive intensity (§4.2)."""
        return self.window.contains(t) and effective_intensity(self.intensity) > 0.0


@dataclass(frozen=True, order=True)
class CapturedFault:
    """One (mode, target) active at an instant, intensity in (0, 1]. Orders by (mode, target)."""

    mode: str
    target: str
    intensity: float


def effective_intensity(value: float) -> float:
    """The intensity a fault acts with: min(1, value); 0 for non-finite or non-positive input."""
    if not math.isfinite(value) or value <= 0.0:
        return 0.0
    return min(1.0, value)


def combine(intensities: Iterable[float]) -> float:
    """Overlapping faults of one mode combine by maximum, never by sum (§4.4); 0 when none."""
    return max((effective_intensity(i) for i in intensities), default=0.0)


def capture(faults: Iterable[Fault], t: float) -> tuple[CapturedFault, ...]:
    """The faults active at ``t``, one per (mode, target), sorted by (mode, target).

    Modes the simulator does not model (for example a consumer-local collection outage) are
    never captured, as in §4.2.
    """
    best: dict[tuple[str, str], float] = {}
    for fault in faults:
        if fault.mode not in MODE_BY_NAME or not fault.window.contains(t):
            continue
        level = effective_intensity(fault.intensity)
        if level <= 0.0:
            continue
        key = (fault.mode, fault.target)
        if level > best.get(key, 0.0):
            best[key] = level
    return tuple(sorted(CapturedFault(m, k, i) for (m, k), i in best.items()))
