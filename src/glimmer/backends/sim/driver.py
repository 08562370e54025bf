"""Driving runs to their end on the simulator: the virtual-clock driver of
:mod:`glimmer.backends.common.drivers`, named here for the simulator's callers.

The driver alternates a reconcile pass with a jump of the virtual clock to whichever comes
first — the next simulated event or the wake-up the pass asked for — and never sleeps.
"""

from __future__ import annotations

from collections.abc import Callable

from glimmer.api.run import BurnInRun
from glimmer.backends.common.drivers import (
    MAX_RETRIES,
    TERMINAL,
    Drive,
    StuckRun,
    drive,
    drive_many,
    run_to_completion,
    settled,
)
from glimmer.backends.sim.backend import SimBackend

Progress = Callable[[BurnInRun, SimBackend], None]

__all__ = [
    "MAX_RETRIES",
    "TERMINAL",
    "Drive",
    "Progress",
    "StuckRun",
    "drive",
    "drive_many",
    "run_to_completion",
    "settled",
]
