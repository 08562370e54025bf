"""fabric-soak's window statistics and port-counter delta (§9.15), as pure functions."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

# Port error counters whose movement during a soak is a link problem (sysfs names).
ERROR_COUNTERS = (
    "symbol_error",
    "link_error_recovery",
    "link_downed",
    "port_rcv_errors",
    "port_rcv_remote_physical_errors",
    "local_link_integrity_errors",
    "excessive_buffer_overrun_errors",
    "port_xmit_discards",
)


@dataclass(frozen=True)
class WindowStats:
    minimum: float
    p1: float  # nearest-rank 1st percentile
    mean: float
    peak: float
    std_dev: float


def window_stats(samples: list[float]) -> WindowStats | None:
    if not samples:
        return None
    ordered = sorted(samples)
    mean = sum(ordered) / len(ordered)
    std = math.sqrt(sum((s - mean) ** 2 for s in ordered) / len(ordered))
    rank = max(1, math.ceil(0.01 * len(ordered)))
    return WindowStats(ordered[0], ordered[rank - 1], mean, ordered[-1], std)


def read_counters(sysfs: Path, device: str, port: int) -> dict[str, int]:
    """The readable error counters of one port; an unreadable one is left out."""
    base = sysfs / "class" / "infiniband" / device / "ports" / str(port) / "counters"
    out: dict[str, int] = {}
    for name in ERROR_COUNTERS:
        try:
            out[name] = int((base / name).read_text().strip())
        except (OSError, ValueError):
            continue
    return out


def counter_delta(before: dict[str, int], after: dict[str, int]) -> int | None:
    """How far the counters readable at both ends moved; None when none was readable or one
    went backwards (a reset: the delta would be a guess)."""
    common = [name for name in before if name in after]
    if not common:
        return None
    if any(after[name] < before[name] for name in common):
        return None
    return sum(after[name] - before[name] for name in common)
