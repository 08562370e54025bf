"""The ValidationFailed verdict of a Job's performance thresholds (specs/certify.md §7.5).

:mod:`measure.threshold` says whether one value meets one expression; this module is the Job
flow around it, as a pure function of what the controller knows (the thresholds, the values
measured so far, how long it has waited since the workload succeeded): unknown keys fail at
once; a key without a value waits until the measurement timeout; then the first violation in
key order fails the Job, and otherwise the thresholds are met.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from glimmer.certify.measure.threshold import (
    ThresholdError,
    Violation,
    holds,
    unknown_keys,
)

DEFAULT_MEASUREMENT_TIMEOUT = timedelta(minutes=5)

UNKNOWN_KEY = "UnknownThresholdKey"
INVALID_EXPRESSION = "InvalidThresholdExpression"
MEASUREMENT_TIMEOUT = "MeasurementTimeout"
VIOLATED = "ThresholdViolated"
MET = "ThresholdsMet"

BANDWIDTH_KEYS = ("busBandwidthGBps", "algBandwidthGBps")
GOODPUT_KEYS = ("goodputRatio", "avgTFLOPsPerGPU", "avgStepTimeSec")


@dataclass(frozen=True)
class Verdict:
    """The ValidationFailed condition to set; ``failed`` None means "not yet: requeue"."""

    failed: bool | None
    reason: str
    message: str


def go_duration(d: timedelta) -> str:
    """A whole-second duration the way Go prints it (5m0s, 1h0m0s, 30s): the original's
    messages carry it and users grep for them."""
    total = int(d.total_seconds())
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{seconds}s"
    return f"{minutes}m{seconds}s" if minutes else f"{seconds}s"


def _go_list(items: list[str]) -> str:
    return f"[{' '.join(items)}]"


def available(
    *,
    bandwidth_complete: bool = False,
    bandwidth: Mapping[str, float] | None = None,
    goodput_complete: bool = False,
    goodput: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """The values a threshold may read: bandwidth keys once the BandwidthMeasurement is
    Complete with results; goodput keys once the GoodputMeasurement is Complete and the value
    is above 0 (a zero there means "never measured", not "measured zero")."""
    out: dict[str, float] = {}
    if bandwidth_complete and bandwidth:
        out.update({k: v for k, v in bandwidth.items() if k in BANDWIDTH_KEYS})
    if goodput_complete and goodput:
        out.update({k: v for k, v in goodput.items() if k in GOODPUT_KEYS and v > 0})
    return out


def judge(
    thresholds: Mapping[str, str],
    measured: Mapping[str, float],
    waited: timedelta,
    timeout: timedelta = DEFAULT_MEASUREMENT_TIMEOUT,
) -> Verdict:
    """The §7.5 verdict after the workload Succeeded ``waited`` ago."""
    unknown = unknown_keys(thresholds)
    if unknown:
        return Verdict(True, UNKNOWN_KEY, f"unknown threshold keys: {_go_list(unknown)}")
    missing = sorted(k for k in thresholds if k not in measured)
    if missing:
        if waited < timeout:
            return Verdict(None, "", "")
        return Verdict(
            True,
            MEASUREMENT_TIMEOUT,
            f"Measurement data not available within {go_duration(timeout)} "
            f"for keys: {_go_list(missing)}",
        )
    for key in sorted(thresholds):
        expression, value = thresholds[key], measured[key]
        try:
            ok = holds(expression, value)
        except ThresholdError as e:
            return Verdict(True, INVALID_EXPRESSION, f'Threshold "{key}": {e}: {expression}')
        if not ok:
            return Verdict(True, VIOLATED, Violation(key, value, expression).message)
    return Verdict(False, MET, "All performance thresholds satisfied")
