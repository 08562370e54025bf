"""The static facts of a fleet that the dynamics read, as numpy arrays.

Physics and telemetry run over every GPU at once, so they read the fleet as columns rather than
objects: one array per property, indexed by GPU, node, rack, workload or NVLink edge. GPUs are
grouped by node (a node's GPUs are contiguous, in slot order) so per-node folds are a single
``reduceat``. :mod:`glimmer.sim.derive` builds these from a fleet's topology; tests can build
them by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class GpuColumns:
    """Per GPU, in node order then slot order."""

    node: IntArray  # index into NodeColumns
    limit_w: FloatArray  # power limit: declared, else the model's maximum
    advertised_memory_bytes: FloatArray  # round(memory_gb × 1e9)
    memory_limit_bytes: FloatArray  # declared usable bytes, else advertised
    thermal_known: BoolArray  # the model has a sourced thermal envelope
    boost_clock_mhz: FloatArray  # rated boost SM clock; NaN when no source gives it


@dataclass(frozen=True)
class NodeColumns:
    """Per node, in key order, with the operating assumptions of its pool (§1.7.1)."""

    rack: IntArray  # index into RackColumns
    gpu_start: IntArray  # index of the node's first GPU; GPUs of node n are [start[n], start[n+1])
    cpus: FloatArray
    nics: FloatArray  # NIC count, for the per-NIC dynamic power
    idle_power_fraction: FloatArray
    cooling_perf_loss: FloatArray
    congestion_perf_loss: FloatArray
    storage_perf_loss: FloatArray
    ambient_temp_c: FloatArray
    full_power_rise_c: FloatArray
    cooling_fault_rise_c: FloatArray
    node_base_power_w: FloatArray
    node_dynamic_per_core_w: FloatArray
    node_dynamic_per_nic_w: FloatArray
    nvlink_errors_per_second: FloatArray


@dataclass(frozen=True)
class RackColumns:
    """Per rack, in key order (§1.4 physics block)."""

    liquid: BoolArray
    fixed_overhead_w: FloatArray
    declared_device_w: FloatArray  # static watts of the rack's own devices and BMCs
    liquid_heat_fraction: FloatArray
    supply_temp_c: FloatArray
    flow_lpm: FloatArray
    fluid_density_kg_per_l: FloatArray
    fluid_specific_heat_j_per_kg_c: FloatArray


@dataclass(frozen=True)
class WorkloadColumns:
    """Per workload, in key order: the demand envelope of §1.10 and its seeded phase."""

    utilization_base: FloatArray
    utilization_amplitude: FloatArray
    period_s: FloatArray  # 0 when omitted (only allowed at zero amplitude)
    demand_phase: FloatArray  # (gpuHash(seed, "demand_phase", key) >> 11) / 2**53
    memory_reserved_fraction: FloatArray
    memory_dynamic_fraction: FloatArray
    requests_per_second_at_full: FloatArray


@dataclass(frozen=True)
class EdgeColumns:
    """Per confirmed NVLink edge (GPU link → NVSwitch port), in domain then key order."""

    gpu: IntArray  # index into GpuColumns


@dataclass(frozen=True)
class FleetColumns:
    gpus: GpuColumns
    nodes: NodeColumns
    racks: RackColumns
    workloads: WorkloadColumns
    edges: EdgeColumns

    @property
    def n_gpus(self) -> int:
        return len(self.gpus.node)

    @property
    def n_nodes(self) -> int:
        return len(self.nodes.rack)

    @property
    def n_racks(self) -> int:
        return len(self.racks.liquid)

    @property
    def n_workloads(self) -> int:
        return len(self.workloads.utilization_base)

    @property
    def n_edges(self) -> int:
        return len(self.edges.gpu)


def empty_float(n: int) -> FloatArray:
    return np.zeros(n, dtype=np.float64)


def empty_workloads() -> WorkloadColumns:
    z = empty_float(0)
    return WorkloadColumns(z, z, z, z, z, z, z)
