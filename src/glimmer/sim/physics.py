"""Operating points: the equations of specs/fleet.md §6, over every GPU at once.

Inputs are the fleet's static columns, who holds which GPU at this minute (the allocation), and
the fault levels at this instant. Outputs are arrays per GPU, node, rack, workload and NVLink
edge. Every equation is the spec's; the readiness modes add two terms that are zero without
their faults (a low P-state scales the dynamic power with the clock; degraded thermal paste adds
heat in proportion to load), so the shared-mode golden values are untouched.

These are configurable synthetic equations, not vendor transfer curves: the cooling derate is
not a hardware throttle code and nothing here turns a temperature into a clock event.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from glimmer.errors import GlimmerError
from glimmer.sim.arrays import BoolArray, FleetColumns, FloatArray, IntArray
from glimmer.sim.levels import FaultLevels
from glimmer.sim.modes import Effect

# A GPU pinned in its lowest P-state runs near a fifth of its boost clock; the one estimate we
# have (GB10 power-delivery wedge, burnin.md §9.2) is ~20 %.
LOW_PSTATE_CLOCK_FRACTION = 0.2
# Degraded thermal paste: extra °C at full power and intensity 1. Chosen so that an H100 SXM
# at full load (25 + 35 + 30 = 90 °C) crosses its 87 °C maximum operating temperature.
THERMAL_PASTE_RISE_C = 30.0

HELD, IDLE, UNAVAILABLE = 1, 0, 2


class OperatingPointError(GlimmerError):
    """The inputs cannot give a consistent operating point (§6.1); the text names the reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"GPU operating snapshot: {reason}")


@dataclass(frozen=True)
class Holding:
    """Who holds each GPU at one minute bucket: the allocation in array form."""

    bucket: int
    state: IntArray  # IDLE, HELD or UNAVAILABLE per GPU
    owner: IntArray  # workload index per GPU, -1 when not held


@dataclass(frozen=True)
class OperatingPoints:
    """The fleet's operating point at one instant (§6.1b), one array per field."""

    # per GPU
    available: BoolArray
    demand_utilization: FloatArray
    utilization: FloatArray
    memory_used_bytes: FloatArray
    power_w: FloatArray
    temperature_c: FloatArray
    cooling_derate: FloatArray
    clock_fraction: FloatArray  # SM clock ÷ boost while busy (1 unless pinned low)
    # per node
    node_gpu_watts: FloatArray
    node_overhead_watts: FloatArray
    node_power_w: FloatArray
    node_load_fraction: FloatArray
    # per rack (supply/return/flow are NaN on air racks: the spec's null)
    rack_node_watts: FloatArray
    rack_power_w: FloatArray
    rack_liquid_heat_w: FloatArray
    rack_supply_temp_c: FloatArray
    rack_return_temp_c: FloatArray
    rack_flow_lpm: FloatArray
    # per workload
    workload_demand_utilization: FloatArray
    workload_effective_utilization: FloatArray
    workload_requests_per_second: FloatArray
    workload_memory_used_bytes: FloatArray
    # per NVLink edge
    edge_errors_per_second: FloatArray


def demand_at(cols: FleetColumns, bucket: int) -> FloatArray:
    """Each workload's demand in minute ``bucket``, sampled mid-minute (§6.2)."""
    w = cols.workloads
    t = bucket * 60.0 + 30.0
    with np.errstate(divide="ignore", invalid="ignore"):
        wave = np.sin(2.0 * math.pi * (t / w.period_s + w.demand_phase))
    return np.where(w.utilization_amplitude == 0.0, w.utilization_base,
                    w.utilization_base + w.utilization_amplitude * wave)  # fmt: skip


def check_holding(cols: FleetColumns, holding: Holding) -> None:
    """Refuse an allocation that does not fit this fleet or contradicts itself (§6.1)."""
    if holding.state.shape != (cols.n_gpus,) or holding.owner.shape != (cols.n_gpus,):
        raise OperatingPointError("missing GPU allocations")
    if not np.isin(holding.state, (IDLE, HELD, UNAVAILABLE)).all():
        raise OperatingPointError("inconsistent unheld GPU")
    held = holding.state == HELD
    owners = holding.owner[held]
    if owners.size and (owners.min() < 0 or owners.max() >= cols.n_workloads):
        raise OperatingPointError("unknown workload key")
    if (holding.owner[~held] != -1).any():
        raise OperatingPointError("inconsistent unheld GPU")


def operating_points(cols: FleetColumns, holding: Holding, levels: FaultLevels) -> OperatingPoints:
    """Every operating-point equation of §6, vectorised over GPUs, nodes, racks and workloads."""
    check_holding(cols, holding)
    g, n, r = cols.gpus, cols.nodes, cols.racks
    node = g.node
    rack_of_gpu = n.rack[node]

    held = holding.state == HELD
    available = holding.state != UNAVAILABLE
    owner = np.where(held, holding.owner, 0)
    demand_w = demand_at(cols, holding.bucket)
    demand = np.where(held, demand_w[owner] if len(demand_w) else 0.0, 0.0)

    cooling = levels.rack_cooling()
    ic = cooling[rack_of_gpu]
    derate = 1.0 - n.cooling_perf_loss[node] * ic
    slow = (
        derate
        * (1.0 - n.congestion_perf_loss[node] * levels.of_effect(Effect.CONGESTION))
        * (1.0 - n.storage_perf_loss[node] * levels.of_effect(Effect.STORAGE))
        * (1.0 - n.congestion_perf_loss[node] * levels.of_effect(Effect.NVLINK))
    )
    utilization = demand * slow

    w = cols.workloads
    mem_fraction = np.where(
        held,
        (w.memory_reserved_fraction[owner] + w.memory_dynamic_fraction[owner] * demand)
        if len(demand_w)
        else 0.0,
        0.0,
    )
    # Memory follows demand, not the reduced utilisation (§6.2).
    memory_used = np.floor(g.memory_limit_bytes * mem_fraction)

    clock = 1.0 - levels.of_effect(Effect.CLOCK_PIN) * (1.0 - LOW_PSTATE_CLOCK_FRACTION)
    idle = n.idle_power_fraction[node]
    power = g.limit_w * (idle + (1.0 - idle) * utilization * clock)
    power_fraction = power / g.limit_w
    temperature = (
        n.ambient_temp_c[node]
        + n.full_power_rise_c[node] * power_fraction
        + n.cooling_fault_rise_c[node] * ic
        + THERMAL_PASTE_RISE_C * levels.of_effect(Effect.THERMAL_PASTE) * power_fraction
    )

    starts = n.gpu_start
    gpu_watts = np.add.reduceat(power, starts) if len(starts) else power[:0]
    load = np.maximum.reduceat(utilization, starts) if len(starts) else utilization[:0]
    overhead = (
        n.node_base_power_w
        + n.node_dynamic_per_core_w * n.cpus * load
        + n.node_dynamic_per_nic_w * n.nics * load
    )
    node_power = gpu_watts + overhead

    n_racks = cols.n_racks
    rack_node_watts = np.bincount(n.rack, weights=node_power, minlength=n_racks).astype(np.float64)
    rack_power = rack_node_watts + r.declared_device_w + r.fixed_overhead_w
    liquid_heat = rack_power * r.liquid_heat_fraction
    rise = np.zeros(n_racks)
    np.maximum.at(rise, n.rack, n.cooling_fault_rise_c)
    icr = cooling
    flow = np.where(r.liquid, r.flow_lpm * (1.0 - 0.5 * icr), np.nan)
    supply = np.where(r.liquid, r.supply_temp_c + rise * icr, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        capacity = flow * r.fluid_density_kg_per_l / 60.0 * r.fluid_specific_heat_j_per_kg_c
        ret = np.where(r.liquid, supply + liquid_heat / capacity, np.nan)
    if np.any(r.liquid & ~(flow > 0.0)) or not np.all(np.isfinite(ret[r.liquid])):
        raise OperatingPointError("invalid liquid thermal arithmetic")

    n_w = cols.n_workloads
    held_owner = holding.owner[held]
    count = np.bincount(held_owner, minlength=n_w).astype(np.float64)
    util_sum = np.bincount(held_owner, weights=utilization[held], minlength=n_w).astype(np.float64)
    mem_sum = np.bincount(held_owner, weights=memory_used[held], minlength=n_w).astype(np.float64)
    holds = count > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        eff_mean = np.where(holds, util_sum / count, 0.0)

    edge_rate = n.nvlink_errors_per_second[node[cols.edges.gpu]] * levels.edge_burst()

    for name, values in (
        ("demand", demand),
        ("utilisation", utilization),
        ("power", power),
        ("temperature", temperature),
    ):
        if not np.all(np.isfinite(values)):
            raise OperatingPointError(f"nonfinite operating point ({name})")

    return OperatingPoints(
        available=available,
        demand_utilization=demand,
        utilization=utilization,
        memory_used_bytes=memory_used,
        power_w=power,
        temperature_c=temperature,
        cooling_derate=derate,
        clock_fraction=clock,
        node_gpu_watts=gpu_watts,
        node_overhead_watts=overhead,
        node_power_w=node_power,
        node_load_fraction=load,
        rack_node_watts=rack_node_watts,
        rack_power_w=rack_power,
        rack_liquid_heat_w=liquid_heat,
        rack_supply_temp_c=supply,
        rack_return_temp_c=ret,
        rack_flow_lpm=flow,
        workload_demand_utilization=np.where(holds, demand_w, 0.0),
        workload_effective_utilization=eff_mean,
        workload_requests_per_second=w.requests_per_second_at_full * util_sum,
        workload_memory_used_bytes=mem_sum,
        edge_errors_per_second=edge_rate,
    )
