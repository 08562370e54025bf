"""This host's clock: the wall clock every wall-clock substrate shares, kept importable here
(:mod:`glimmer.backends.common.clock` has it)."""

from __future__ import annotations

from glimmer.backends.common.clock import HostClock, SubstrateClock

__all__ = ["HostClock", "SubstrateClock"]
