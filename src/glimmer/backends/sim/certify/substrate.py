"""The simulated fleet as a certification substrate: its nodes are the twin's nodes (labels
from the topology, drained nodes cordoned), its fabric the topology's backend rails, and a job
runs as the simulated runners would print it (nccl-tests, ``dcgmi diag``, a Megatron log)
over the twin's state at the start of the run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from glimmer.backends.sim.certify.dcgm import dcgm_log
from glimmer.backends.sim.certify.nccl import rails_of, run_nccl
from glimmer.backends.sim.certify.nodes import sim_nodes
from glimmer.backends.sim.certify.training import run_training
from glimmer.backends.sim.certify.views import NodeViews
from glimmer.certify.grouping import UNSCHEDULABLE_TAINT, NodeInfo
from glimmer.certify.jobs import DcgmJob, Job, JobLog, NcclJob
from glimmer.certify.result import CertResult
from glimmer.certify.run import certify as certify_on
from glimmer.certify.spec import CertSpec
from glimmer.certify.substrate import Fabric
from glimmer.fleet.faultspec import FaultSpec
from glimmer.fleet.topology import Topology
from glimmer.sim.twin import FleetSim, from_spec

PLATFORM = "simulator"


@dataclass(frozen=True)
class TwinSubstrate:
    """A :class:`~glimmer.certify.substrate.Substrate` over ``twin``, read at time 0 (a
    certification is judged against the fleet's state when it starts)."""

    twin: FleetSim
    # One view per node for every job and fabric question of the certification (views.py).
    views: NodeViews = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "views", NodeViews(self.twin))

    @property
    def name(self) -> str:
        return self.twin.topo.name

    @property
    def platform(self) -> str:
        return PLATFORM

    @property
    def taint_note(self) -> str:
        return (
            f"simulated nodes carry no taints but the cordon taint {UNSCHEDULABLE_TAINT} of "
            "drained nodes"
        )

    def nodes(self) -> list[NodeInfo]:
        return sim_nodes(self.twin)

    def fabric(self, nodes: tuple[str, ...]) -> Fabric | None:
        views = [v for v in self.views.many(nodes) if v is not None]
        rails = [rails_of(v) for v in views]
        common = set.intersection(*(set(r) for r in rails)) if rails else set()
        if not common:
            return None
        speed = min(nic.speed_gbps for v in views for nic in v.backend_nics if nic.rail in common)
        return Fabric(len(common), speed)

    def run(self, job: Job) -> JobLog:
        if isinstance(job, NcclJob):
            return run_nccl(self.twin, job, self.views)
        if isinstance(job, DcgmJob):
            return dcgm_log(self.twin, job)
        return run_training(self.twin, job, self.views)

    def run_all(self, jobs: Sequence[Job]) -> list[JobLog]:
        # The twin is read at time 0: a job's log depends on the job alone, never on which
        # ran before or beside it, so one after the other is side by side.
        return [self.run(j) for j in jobs]


def fleet_twin(topology: Topology, planted: Sequence[FaultSpec]) -> FleetSim:
    """The twin a simulated certification runs on: ``topology`` with the ``--fault`` flags
    planted (so the CLI builds it without reaching into the simulator)."""
    return FleetSim(topology, [from_spec(f) for f in planted])


def certify(
    twin: FleetSim, spec: CertSpec, *, seed: int = 0, faults: Sequence[str] = ()
) -> CertResult:
    """Run ``spec`` on ``twin``; the result document, naming the ``faults`` planted in it."""
    result = certify_on(TwinSubstrate(twin), spec, seed=seed)
    return replace(result, faults=tuple(faults))
