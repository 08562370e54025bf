"""The host's clock, and how a substrate reads host times through it.

The local and slurm substrates run on the wall clock: :class:`HostClock` answers the host's
time and passes host times (an execution's start and end, as a supervisor or Slurm recorded
them) through unchanged. The seam exists so a test may drive the same real processes against
a faster clock (one that counts many engine seconds per host second); production code has no
other clock.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol


class SubstrateClock(Protocol):
    """The substrate's time, and host times and durations expressed in it."""

    def now(self) -> datetime: ...

    def from_host(self, moment: datetime) -> datetime:
        """A host time (recorded by a supervisor) on this clock."""
        ...

    def host_seconds(self, seconds: float) -> float:
        """How many host seconds ``seconds`` of this clock last (a deadline to enforce)."""
        ...


class HostClock:
    """The wall clock of this host (UTC)."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def from_host(self, moment: datetime) -> datetime:
        return moment

    def host_seconds(self, seconds: float) -> float:
        return seconds
