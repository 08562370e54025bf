"""The reference fixture of specs/fleet.md (Appendix C) as simulator columns, built by hand.

Physics and allocation golden values (Appendix A) are pinned against this fixture, so these
tests do not depend on how a Fleet declaration is built: 18 NVL72 trays (GB200) in a liquid
rack and two 4-GPU H100 PCIe servers in an air rack, a training and a serving workload.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from glimmer.fleet.identity import gpu_hash
from glimmer.sim.allocation import AllocationPlan, Schedule, WorkloadSpec, plan
from glimmer.sim.arrays import (
    EdgeColumns,
    FleetColumns,
    GpuColumns,
    IntArray,
    NodeColumns,
    RackColumns,
    WorkloadColumns,
)
from glimmer.sim.faults import Fault, capture
from glimmer.sim.levels import fold
from glimmer.sim.physics import OperatingPoints, operating_points

REFERENCE_SEED = "ai-factory-fixture"
TRAINING = "gpuworkload:scheduler-a/training-a"
SERVING = "gpuworkload:scheduler-a/serving-a"
NVL_RACK, PCIE_RACK = "rack:site-a/nvl-a", "rack:site-a/pcie-a"


def nvl(node: int) -> str:
    return f"nvl-node-{node:04d}"


def pcie(node: int) -> str:
    return f"pcie-node-{node:04d}"


# Nodes in key order: node:nvl-node-0000..0017 sort before node:pcie-node-0000..0001.
HOSTS = [nvl(i) for i in range(18)] + [pcie(i) for i in range(2)]
GPU_KEYS = [f"gpu:{h}/{s}" for h in HOSTS for s in range(4)]


def gpu(host: str, slot: int) -> int:
    return GPU_KEYS.index(f"gpu:{host}/{slot}")


@dataclass
class DictReach:
    """A hand-written reach table: key → GPU indices, rack indices, edges and NIC ports."""

    gpu_map: dict[str, list[int]] = field(default_factory=dict)
    rack_map: dict[str, list[int]] = field(default_factory=dict)
    edge_map: dict[str, list[int]] = field(default_factory=dict)

    def gpus(self, mode: str, target: str) -> IntArray:
        return np.array(sorted(self.gpu_map.get(target, [])), dtype=np.int64)

    def racks(self, target: str) -> IntArray:
        return np.array(self.rack_map.get(target, []), dtype=np.int64)

    def edges(self, target: str) -> IntArray:
        return np.array(self.edge_map.get(target, []), dtype=np.int64)

    def nics(self, target: str) -> IntArray:
        return np.zeros(0, dtype=np.int64)


def _columns(seed: str, workloads: WorkloadColumns) -> FleetColumns:
    n_gpus, n_nodes = len(GPU_KEYS), len(HOSTS)
    is_nvl = np.array([h.startswith("nvl") for h in HOSTS])
    node = np.repeat(np.arange(n_nodes), 4)
    gpu_nvl = is_nvl[node]
    limit = np.where(gpu_nvl, 1200.0, 350.0)
    memory = np.where(gpu_nvl, 186e9, 80e9)
    gpus = GpuColumns(
        node=node,
        limit_w=limit,
        advertised_memory_bytes=memory,
        memory_limit_bytes=memory.copy(),
        thermal_known=np.zeros(n_gpus, dtype=np.bool_),
        boost_clock_mhz=np.where(gpu_nvl, np.nan, 1755.0),
    )

    def per_node(value: float) -> np.ndarray:
        return np.full(n_nodes, value)

    nodes = NodeColumns(
        rack=np.where(is_nvl, 0, 1),
        gpu_start=np.arange(n_nodes) * 4,
        cpus=np.where(is_nvl, 144.0, 64.0),
        nics=np.where(is_nvl, 5.0, 2.0),
        idle_power_fraction=per_node(0.12),
        cooling_perf_loss=per_node(0.3),
        congestion_perf_loss=per_node(0.6),
        storage_perf_loss=per_node(0.5),
        ambient_temp_c=per_node(25.0),
        full_power_rise_c=per_node(40.0),
        cooling_fault_rise_c=per_node(15.0),
        node_base_power_w=per_node(250.0),
        node_dynamic_per_core_w=per_node(2.0),
        node_dynamic_per_nic_w=per_node(10.0),
        nvlink_errors_per_second=per_node(1.0),
    )
    racks = RackColumns(
        liquid=np.array([True, False]),
        fixed_overhead_w=np.array([4000.0, 200.0]),
        declared_device_w=np.zeros(2),
        liquid_heat_fraction=np.array([0.9, 0.0]),
        supply_temp_c=np.array([25.0, 0.0]),
        flow_lpm=np.array([180.0, 0.0]),
        fluid_density_kg_per_l=np.array([1.0, 0.0]),
        fluid_specific_heat_j_per_kg_c=np.array([4180.0, 0.0]),
    )
    return FleetColumns(gpus, nodes, racks, workloads, EdgeColumns(np.zeros(0, dtype=np.int64)))


def demand_phase(seed: str, key: str) -> float:
    return (gpu_hash(seed, "demand_phase", key) >> 11) / 2**53


@dataclass(frozen=True)
class Reference:
    seed: str
    columns: FleetColumns
    schedule: Schedule
    reach: DictReach


def build_reference(seed: str = REFERENCE_SEED) -> Reference:
    training_gpus = tuple(gpu(nvl(n), s) for n in (0, 1) for s in range(4))
    serving_gpus = (gpu(pcie(0), 0),)
    # Workloads in key order: serving-a sorts before training-a.
    specs = (
        WorkloadSpec(SERVING, "scheduler:scheduler-a", "project:scheduler-a/serving", 20,
                     1440, 1, 1380, 1380, serving_gpus),
        WorkloadSpec(TRAINING, "scheduler:scheduler-a", "project:scheduler-a/research", 10,
                     360, 2, 120, 240, training_gpus),
    )  # fmt: skip
    workloads = WorkloadColumns(
        utilization_base=np.array([0.4, 0.7]),
        utilization_amplitude=np.array([0.1, 0.1]),
        period_s=np.array([3600.0, 3600.0]),
        demand_phase=np.array([demand_phase(seed, SERVING), demand_phase(seed, TRAINING)]),
        memory_reserved_fraction=np.array([0.5, 0.6]),
        memory_dynamic_fraction=np.array([0.2, 0.1]),
        requests_per_second_at_full=np.array([10.0, 0.0]),
    )
    schedule = Schedule(
        seed=seed,
        workloads=specs,
        quotas={"project:scheduler-a/research": 8, "project:scheduler-a/serving": 4},
        n_gpus=len(GPU_KEYS),
    )
    reach = DictReach()
    for i, key in enumerate(GPU_KEYS):
        reach.gpu_map[key] = [i]
        host = key.removeprefix("gpu:").split("/")[0]
        reach.gpu_map.setdefault(f"node:{host}", []).append(i)
        rack = NVL_RACK if host.startswith("nvl") else PCIE_RACK
        reach.gpu_map.setdefault(rack, []).append(i)
    reach.rack_map = {NVL_RACK: [0], PCIE_RACK: [1]}
    return Reference(seed, _columns(seed, workloads), schedule, reach)


def with_rack_device_watts(ref: Reference, watts: float) -> Reference:
    racks = replace(ref.columns.racks, declared_device_w=np.array([watts, 0.0]))
    return replace(ref, columns=replace(ref.columns, racks=racks))


T0 = 1_790_899_200.0  # 2026-10-02T00:00:00Z, the instant of the golden vectors


def simulate(
    ref: Reference, t: float = T0, faults: tuple[Fault, ...] = ()
) -> tuple[AllocationPlan, OperatingPoints]:
    """Capture, plan, fold and compute operating points at ``t``."""
    captured = capture(faults, t)
    allocation = plan(ref.schedule, t, captured, ref.reach.gpus, origin=ref)
    levels = fold(
        captured,
        ref.reach,
        n_gpus=ref.columns.n_gpus,
        n_racks=ref.columns.n_racks,
        n_edges=ref.columns.n_edges,
        n_nics=0,
    )
    return allocation, operating_points(ref.columns, allocation.holding, levels)
