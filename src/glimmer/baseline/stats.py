"""Robust summaries of one metric's distribution across a fleet.

The median and the median absolute deviation (MAD) are used, not the mean and the standard
deviation: a baseline fleet is *supposed* to be healthy, but one marginal part must not drag the
centre or inflate the spread of everybody else's gate. The MAD is scaled by 1.4826 so that it
estimates the standard deviation of normally distributed data: ``k`` then reads as "k sigmas".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# 1 / Phi^-1(3/4): makes the MAD a consistent estimator of sigma for normal data.
MAD_TO_SIGMA = 1.4826


def median(values: Sequence[float]) -> float:
    """The median; for an even count, the mean of the two middle values. Order-independent."""
    if not values:
        raise ValueError("the median of no values is undefined")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def mad(values: Sequence[float]) -> float:
    """The median absolute deviation from the median, scaled to estimate sigma."""
    centre = median(values)
    return MAD_TO_SIGMA * median([abs(v - centre) for v in values])


@dataclass(frozen=True)
class Summary:
    """What a gate's comment reports about its distribution."""

    n: int
    median: float
    mad: float
    low: float
    high: float


def summarize(values: Sequence[float]) -> Summary:
    """Count, median, scaled MAD, minimum and maximum of ``values`` (at least one)."""
    return Summary(len(values), median(values), mad(values), min(values), max(values))
