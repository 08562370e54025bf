"""The simulator substrate: a fleet's nodes and executions as discrete events on a virtual clock.

``backend`` is the Backend itself, ``faults`` the machinery faults it can inject, ``fleet`` the
backend over a fleet's twin, ``driver`` the loops that drive runs to their end on it.
"""

from glimmer.backends.sim.backend import RunnerReply, RunnerRequest, SimBackend
from glimmer.backends.sim.driver import Drive, drive, drive_many, run_to_completion, settled
from glimmer.backends.sim.faults import ExecutionFault
from glimmer.backends.sim.fleet import fleet_backend, fleet_nodes

__all__ = [
    "Drive",
    "ExecutionFault",
    "RunnerReply",
    "RunnerRequest",
    "SimBackend",
    "drive",
    "drive_many",
    "fleet_backend",
    "fleet_nodes",
    "run_to_completion",
    "settled",
]
