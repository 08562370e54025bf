"""Derive the simulator's columns from a built topology, once per fleet.

Everything here is static: power limits, memory, operating assumptions per node, rack physics,
workload envelopes with their seeded demand phase, the flat table of NIC ports, and the label
values telemetry attaches to each GPU. The dynamics (allocation, physics, telemetry) then only
index these arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from glimmer.api.fleet_sched import Workload, parse_duration
from glimmer.fleet.identity import gpu_hash, project_key, scheduler_key, worker_key, workload_key
from glimmer.fleet.topology import Topology
from glimmer.sim.allocation import Schedule, WorkloadSpec
from glimmer.sim.arrays import (
    EdgeColumns,
    FleetColumns,
    FloatArray,
    GpuColumns,
    IntArray,
    NodeColumns,
    RackColumns,
    WorkloadColumns,
)
from glimmer.sim.device_facts import facts
from glimmer.sim.physics import OperatingPointError


@dataclass(frozen=True)
class NicTable:
    """Every node NIC port, flattened: key, owning node, speed."""

    keys: tuple[str, ...]
    node: IntArray
    speed_gbps: FloatArray
    index: dict[str, int]


def demand_phase(seed: str, key: str) -> float:
    """The seeded phase of a workload's demand wave, in [0, 1) (§6.2)."""
    return (gpu_hash(seed, "demand_phase", key) >> 11) / 2**53


def columns(topo: Topology) -> FleetColumns:
    """The static columns physics and telemetry read."""
    pools = {p.name: p for p in topo.fleet.spec.pools}
    node_op = [pools[n.pool].operating for n in topo.nodes]

    model_power = np.array([m.max_power_w or np.nan for m in topo.models])
    pool_limit = np.array(
        [pools[name].operating.power_limit_w or np.nan for name in topo.pools], dtype=np.float64
    )
    limit = np.where(
        np.isnan(pool_limit[topo.gpu_pool]), model_power[topo.gpu_model], pool_limit[topo.gpu_pool]
    )
    if np.isnan(limit).any():
        raise OperatingPointError("missing model power source")
    advertised = np.array([float(round(m.memory_gb * 1e9)) for m in topo.models])[topo.gpu_model]
    usable = topo.gpu_usable_memory.astype(np.float64)
    thermal = np.array(
        [None not in (m.slowdown_c, m.shutdown_c, m.max_operating_c) for m in topo.models]
    )
    boost = np.array([facts(m.key).boost_clock_mhz or np.nan for m in topo.models])
    gpus = GpuColumns(
        node=topo.gpu_node.astype(np.int64),
        limit_w=limit.astype(np.float64),
        advertised_memory_bytes=advertised,
        memory_limit_bytes=np.where(usable > 0, usable, advertised),
        thermal_known=thermal[topo.gpu_model],
        boost_clock_mhz=boost[topo.gpu_model],
    )

    def op(attr: str) -> FloatArray:
        return np.array([float(getattr(o, attr)) for o in node_op], dtype=np.float64)

    nodes = NodeColumns(
        rack=np.array([n.rack for n in topo.nodes], dtype=np.int64),
        gpu_start=np.array([n.gpu_start for n in topo.nodes], dtype=np.int64),
        cpus=np.array([float(n.cpus) for n in topo.nodes]),
        nics=np.array([float(len(n.nics)) for n in topo.nodes]),
        idle_power_fraction=op("idle_power_fraction"),
        cooling_perf_loss=op("cooling_perf_loss"),
        congestion_perf_loss=op("congestion_perf_loss"),
        storage_perf_loss=op("storage_perf_loss"),
        ambient_temp_c=op("ambient_temp_c"),
        full_power_rise_c=op("full_power_rise_c"),
        cooling_fault_rise_c=op("cooling_fault_rise_c"),
        node_base_power_w=op("node_base_power_w"),
        node_dynamic_per_core_w=op("node_dynamic_per_core_w"),
        node_dynamic_per_nic_w=op("node_dynamic_per_nic_w"),
        nvlink_errors_per_second=op("nvlink_errors_per_second"),
    )

    def rk(attr: str) -> FloatArray:
        return np.array([float(getattr(r, attr)) for r in topo.racks], dtype=np.float64)

    racks = RackColumns(
        liquid=np.array([r.cooling == "liquid" for r in topo.racks], dtype=np.bool_),
        fixed_overhead_w=rk("fixed_overhead_w"),
        declared_device_w=rk("static_power_w"),
        liquid_heat_fraction=rk("liquid_heat_fraction"),
        supply_temp_c=rk("supply_temp_c"),
        flow_lpm=rk("flow_lpm"),
        fluid_density_kg_per_l=rk("fluid_density_kg_per_l"),
        fluid_specific_heat_j_per_kg_c=rk("fluid_specific_heat_j_per_kg_c"),
    )
    return FleetColumns(
        gpus, nodes, racks, workload_columns(topo), EdgeColumns(topo.edge_gpu.astype(np.int64))
    )


def _workloads_sorted(topo: Topology) -> list[tuple[str, str, Workload]]:
    """(workload key, scheduler name, workload) of every workload, in key order."""
    out: list[tuple[str, str, Workload]] = []
    for s in topo.fleet.spec.schedulers:
        for w in s.workloads:
            out.append((workload_key(s.name, w.name), s.name, w))
    out.sort(key=lambda row: row[0])
    return out


def workload_columns(topo: Topology) -> WorkloadColumns:
    """The demand envelope of every workload, in key order."""
    rows = [(key, w) for key, _, w in _workloads_sorted(topo)]

    def col(values: list[float]) -> FloatArray:
        return np.array(values, dtype=np.float64)

    return WorkloadColumns(
        utilization_base=col([w.demand.utilization_base for _, w in rows]),
        utilization_amplitude=col([w.demand.utilization_amplitude for _, w in rows]),
        period_s=col([w.demand.period_seconds() for _, w in rows]),
        demand_phase=col([demand_phase(topo.seed, key) for key, _ in rows]),
        memory_reserved_fraction=col([w.demand.memory_reserved_fraction for _, w in rows]),
        memory_dynamic_fraction=col([w.demand.memory_dynamic_fraction for _, w in rows]),
        requests_per_second_at_full=col(
            [w.demand.requests_per_second_at_full_utilization for _, w in rows]
        ),
    )


def schedule(topo: Topology) -> Schedule:
    """The allocation's view of the schedulers: workloads in key order and project quotas."""
    node_of = {(n.pool, n.ordinal): n for n in topo.nodes}
    specs: list[WorkloadSpec] = []
    for key, sched, w in _workloads_sorted(topo):
        workers: list[tuple[str, tuple[int, ...]]] = []
        for worker in sorted(w.workers, key=lambda x: x.name):
            node = node_of[(worker.pool, worker.node_ordinal)]
            idx = tuple(node.gpu_start + s for s in sorted(worker.gpu_slots))
            workers.append((worker_key(sched, w.name, worker.name), idx))
        specs.append(
            WorkloadSpec(
                key=key,
                scheduler_key=scheduler_key(sched),
                project_key=project_key(sched, w.project),
                priority=w.priority,
                cycle_min=int(parse_duration(w.cycle) // 60),
                pending_min=int(parse_duration(w.pending_for) // 60),
                running_min=int(parse_duration(w.running_min) // 60),
                running_max=int(parse_duration(w.running_max) // 60),
                gpus=tuple(sorted(g for _, idx in workers for g in idx)),
                workers=tuple(workers),
            )
        )
    quotas = {
        project_key(s.name, p.name): p.gpu_quota
        for s in topo.fleet.spec.schedulers
        for p in s.projects
    }
    return Schedule(topo.seed, tuple(specs), quotas, topo.gpu_count)


def nic_table(topo: Topology) -> NicTable:
    """Every NIC port of every node, in node order then NIC name order."""
    keys: list[str] = []
    node: list[int] = []
    speed: list[float] = []
    for n in topo.nodes:
        for nic in n.nics:
            keys.append(nic.key)
            node.append(n.index)
            speed.append(nic.speed_gbps)
    return NicTable(
        keys=tuple(keys),
        node=np.array(node, dtype=np.int64),
        speed_gbps=np.array(speed, dtype=np.float64),
        index={k: i for i, k in enumerate(keys)},
    )
