"""The simulated fleet: one object that answers "what is the fleet doing at time t?".

Built once from a topology and the faults to inject (the fleet's declared faults plus any
given on the command line), it holds the derived columns, the schedule and the cached reach
tables. Each question at an instant — active faults, the allocation, operating points,
telemetry, the Prometheus exposition — is answered from those, deterministically for the
fleet's seed. This is the interface simulated runners, the simulator backend and the CLI use.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from glimmer.fleet import faultspec
from glimmer.fleet.faultspec import FaultSpec
from glimmer.fleet.topology import Topology
from glimmer.sim import derive
from glimmer.sim.allocation import AllocationPlan, bucket_of, plan
from glimmer.sim.arrays import FleetColumns, IntArray
from glimmer.sim.clock import EPOCH, to_seconds
from glimmer.sim.exporter import Exporter
from glimmer.sim.faults import CapturedFault, Fault, Window, capture
from glimmer.sim.levels import FaultLevels, fold
from glimmer.sim.physics import OperatingPointError, OperatingPoints, operating_points
from glimmer.sim.reach import TopologyReach
from glimmer.sim.telemetry import Telemetry, sample


@dataclass(frozen=True)
class FleetState:
    """Everything the simulator knows about the fleet at one instant."""

    at: float
    faults: tuple[CapturedFault, ...]
    allocation: AllocationPlan
    levels: FaultLevels
    operating: OperatingPoints


def from_spec(spec: FaultSpec) -> Fault:
    """The simulator's fault from a parsed ``--fault`` flag."""
    start = to_seconds(spec.start) if spec.start else None
    end = to_seconds(spec.end) if spec.end else None
    return Fault(spec.mode, spec.target, spec.intensity, Window(start, end))


class FleetSim:
    """A fleet in motion. Faults are checked against the topology when the sim is built."""

    def __init__(
        self,
        topo: Topology,
        extra_faults: Iterable[Fault] = (),
        *,
        epoch: float = EPOCH,
        noise: bool = True,
    ) -> None:
        self.topo = topo
        self.epoch = epoch
        self.noise = noise
        self.reach = TopologyReach(topo)
        declared = [from_spec(faultspec.from_declared(f)) for f in topo.fleet.spec.faults]
        self.reach.check(declared, "declared fault")
        extra = list(extra_faults)
        self.reach.check(extra, "fault")
        self.faults: tuple[Fault, ...] = (*declared, *extra)
        self.columns: FleetColumns = derive.columns(topo)
        self.schedule = derive.schedule(topo)
        self._usable_known = topo.gpu_usable_memory > 0
        self._exporter: Exporter | None = None

    # -- questions at an instant ------------------------------------------------------------

    def active_faults(self, t: float) -> tuple[CapturedFault, ...]:
        """The faults active at ``t``: one per (mode, target), sorted (§4.2)."""
        return capture(self.faults, t)

    def faults_on(self, t: float, target: str) -> tuple[CapturedFault, ...]:
        """Active faults whose target is exactly ``target``."""
        return tuple(f for f in self.active_faults(t) if f.target == target)

    def allocation_at(self, t: float) -> AllocationPlan:
        """The allocation plan at ``t`` under the faults active then (§5)."""
        return plan(self.schedule, t, self.active_faults(t), self.reach.gpus, origin=self.topo)

    def state_at(self, t: float) -> FleetState:
        """Capture, allocate, fold and compute the operating point at ``t``."""
        allocation = self.allocation_at(t)
        levels, ops = self.operating_points(allocation)
        return FleetState(t, allocation.faults, allocation, levels, ops)

    def operating_points(self, allocation: AllocationPlan) -> tuple[FaultLevels, OperatingPoints]:
        """Fault levels and operating points for a plan this simulator made (§6.1: the plan's
        origin must be this very topology object; a plan from a rebuilt or copied topology is
        refused even when every key matches)."""
        if allocation.origin is not self.topo:
            raise OperatingPointError("snapshot origin differs from topology")
        if bucket_of(allocation.at) != allocation.bucket:
            raise OperatingPointError("inconsistent bucket/time")
        levels = fold(
            allocation.faults,
            self.reach,
            n_gpus=self.columns.n_gpus,
            n_racks=self.columns.n_racks,
            n_edges=self.columns.n_edges,
            n_nics=len(self.reach.nic_table.keys),
        )
        return levels, operating_points(self.columns, allocation.holding, levels)

    def gpu_levels(self, t: float, gpu: int) -> dict[str, float]:
        """Every mode reaching GPU index ``gpu`` at ``t`` with its intensity (for runners)."""
        levels = self.state_at(t).levels
        return {m: float(a[gpu]) for m, a in levels.gpu.items() if a[gpu] > 0}

    def telemetry_at(self, t: float, state: FleetState | None = None) -> Telemetry:
        state = state or self.state_at(t)
        return sample(
            self.columns,
            state.operating,
            state.levels,
            t=t,
            seed=self.topo.seed,
            epoch=self.epoch,
            faults=self.faults,
            reach=self.reach,
            nic_speed_gbps=self.reach.nic_table.speed_gbps,
            usable_known=self._usable_known,
            noise=self.noise,
        )

    def exposition_at(self, t: float) -> str:
        """The Prometheus text exposition of every series at ``t``."""
        return "".join(self.exposition_chunks(t))

    def exposition_chunks(self, t: float) -> list[str]:
        """The exposition at ``t`` as one string per metric family (to write out in turn)."""
        if self._exporter is None:
            self._exporter = Exporter.for_topology(self.topo, self.reach.nic_table)
        return self._exporter.chunks(self.telemetry_at(t))

    def gpu_index(self, key: str) -> int:
        return self.topo.gpu_index[key]

    def gpus_of(self, key: str) -> IntArray:
        """GPU indices a key reaches (node, rack, domain …)."""
        return np.asarray(self.reach.gpus("", key), dtype=np.int64)
