"""Synthetic telemetry: what dcgm-exporter (per GPU) and facility collectors (per node, rack and
NIC port) would report at a simulated instant.

Values come from the operating point (specs/fleet.md §6) mapped as §7 proposes, from fault
levels (clock pins, Xid codes, link state) and from counters integrated since the epoch. Power
and temperature carry seeded measurement noise: the same seed and instant always give the same
numbers. A GPU that fell off the bus, or whose node has no GPU operator operands, is absent from
the per-GPU series, as it is from a real exporter.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from glimmer.fleet.identity import gpu_hash
from glimmer.sim.arrays import BoolArray, FleetColumns, FloatArray, IntArray
from glimmer.sim.counters import integrate
from glimmer.sim.device_facts import IDLE_CLOCK_FRACTION
from glimmer.sim.exposition import Family, MetricType
from glimmer.sim.faults import Fault
from glimmer.sim.levels import FaultLevels, ReachTable
from glimmer.sim.modes import MODES
from glimmer.sim.physics import OperatingPoints

G, C = MetricType.GAUGE, MetricType.COUNTER


class Scope(StrEnum):
    """Which rows a series has: one per GPU, node, rack or NIC port."""

    GPU = "gpu"
    NODE = "node"
    RACK = "rack"
    NIC = "nic"


@dataclass(frozen=True)
class Series:
    family: Family
    scope: Scope


def _s(scope: Scope, name: str, kind: MetricType, help: str, decimals: int | None = None) -> Series:
    return Series(Family(name, help, kind, decimals), scope)


# fmt: off
SERIES: tuple[Series, ...] = (
    _s(Scope.GPU, "DCGM_FI_DEV_GPU_UTIL", G, "GPU utilization (in %)."),
    _s(Scope.GPU, "DCGM_FI_DEV_POWER_USAGE", G, "Power draw (in W).", 3),
    _s(Scope.GPU, "DCGM_FI_DEV_GPU_TEMP", G, "GPU temperature (in C)."),
    _s(Scope.GPU, "DCGM_FI_DEV_SM_CLOCK", G, "SM clock frequency (in MHz)."),
    _s(Scope.GPU, "DCGM_FI_DEV_FB_USED", G, "Framebuffer memory used (in MiB)."),
    _s(Scope.GPU, "DCGM_FI_DEV_FB_FREE", G, "Framebuffer memory free (in MiB)."),
    _s(Scope.GPU, "DCGM_FI_DEV_XID_ERRORS", G, "Value of the last XID error encountered."),
    _s(Scope.GPU, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", C,
       "Total number of single-bit volatile ECC errors."),
    _s(Scope.GPU, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", C,
       "Total number of double-bit volatile ECC errors."),
    _s(Scope.GPU, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", C,
       "Number of remapped rows for uncorrectable errors."),
    _s(Scope.GPU, "DCGM_FI_DEV_ROW_REMAP_FAILURE", G, "Whether remapping of rows has failed."),
    _s(Scope.GPU, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", C,
       "Total number of NVLink flow-control CRC errors."),
    _s(Scope.GPU, "DCGM_FI_DEV_PCIE_LINK_WIDTH", G, "PCIe link width (lanes)."),
    _s(Scope.NODE, "glimmer_node_power_watts", G, "Node power: GPUs plus CPU, NIC and base.", 3),
    _s(Scope.NODE, "glimmer_node_load_ratio", G, "Highest GPU utilisation on the node (0-1).", 4),
    _s(Scope.NODE, "glimmer_node_gpus_visible", G, "GPUs the node's exporter can see."),
    _s(Scope.RACK, "glimmer_rack_power_watts", G, "Rack power: nodes, devices, fixed overhead.",
       3),
    _s(Scope.RACK, "glimmer_rack_liquid_heat_watts", G, "Heat carried by the liquid loop.", 3),
    _s(Scope.RACK, "glimmer_rack_coolant_supply_celsius", G, "Coolant supply temperature.", 3),
    _s(Scope.RACK, "glimmer_rack_coolant_return_celsius", G, "Coolant return temperature.", 4),
    _s(Scope.RACK, "glimmer_rack_coolant_flow_lpm", G, "Coolant flow (litres per minute).", 3),
    _s(Scope.NIC, "glimmer_nic_link_up", G, "1 when the NIC port link is up."),
    _s(Scope.NIC, "glimmer_nic_rate_gbps", G, "Negotiated NIC port rate (Gb/s).", 1),
    _s(Scope.NIC, "glimmer_nic_link_down_events_total", C, "NIC port link-down transitions."),
)
# fmt: on

# The Xid a mode raises while active (NVIDIA "Xid Errors" catalogue, docs.nvidia.com/deploy/
# xid-errors): 13 graphics engine exception, 48 double-bit ECC, 63 row-remap recording event,
# 74 NVLink error. When several are active the highest code is the one shown.
XID_OF_MODE: dict[str, int] = {
    "gpu_xid_burst": 13,
    "gpu_ecc_uncorrectable": 48,
    "gpu_row_remap": 63,
    "gpu_nvlink_error_burst": 74,
}

# Events per second at intensity 1 for the counters faults drive (synthetic rates, chosen so a
# 30 s host-health window at full intensity always sees at least one event).
COUNTER_RATE: dict[str, float] = {
    "gpu_ecc_correctable": 1.0,
    "gpu_ecc_uncorrectable": 1.0 / 20.0,
    "gpu_row_remap": 1.0 / 20.0,
    "nic_link_flapping": 1.0 / 10.0,
}

PCIE_WIDTH = 16.0  # lanes of a healthy link; a downtrained one halves per half intensity
POWER_NOISE = 0.005  # relative σ of power readings
TEMP_NOISE_C = 0.3  # σ of temperature readings


@dataclass(frozen=True)
class Reading:
    """One family's values over its scope's rows, and which rows are present (None: all)."""

    values: FloatArray
    present: BoolArray | None = None


@dataclass(frozen=True)
class Telemetry:
    at: float
    readings: dict[str, Reading]


def _noise(seed: str, t: float, rows: int) -> FloatArray:
    """Standard normal noise, 2 draws per row, fixed by (seed, whole second of t)."""
    rng = np.random.default_rng([gpu_hash(seed, "telemetry_noise"), math.floor(t) & 0xFFFFFFFF])
    return rng.standard_normal(2 * rows)


def sample(
    cols: FleetColumns,
    ops: OperatingPoints,
    levels: FaultLevels,
    *,
    t: float,
    seed: str,
    epoch: float,
    faults: Sequence[Fault],
    reach: ReachTable,
    nic_speed_gbps: FloatArray,
    usable_known: BoolArray,
    noise: bool = True,
) -> Telemetry:
    """Every series of :data:`SERIES` at instant ``t``; counters integrate from ``epoch``."""

    def reach_gpus(target: str) -> IntArray:
        return reach.gpus("", target)

    g = cols.gpus
    n_gpus = cols.n_gpus
    dropped = np.zeros(n_gpus, dtype=np.bool_)
    for m in MODES:
        if m.drops_exporter and m.name in levels.gpu:
            dropped |= levels.gpu[m.name] > 0
    present = ~dropped

    power = ops.power_w
    temp = ops.temperature_c
    if noise and n_gpus:
        z = _noise(seed, t, n_gpus)
        power = power * (1.0 + POWER_NOISE * z[:n_gpus])
        temp = temp + TEMP_NOISE_C * z[n_gpus:]

    busy = ops.utilization > 0
    clock = g.boost_clock_mhz * ops.clock_fraction * np.where(busy, 1.0, IDLE_CLOCK_FRACTION)
    mib = float(2**20)

    xid = np.zeros(n_gpus)
    for mode, code in XID_OF_MODE.items():
        if mode in levels.gpu:
            xid = np.where(levels.gpu[mode] > 0, np.maximum(xid, code), xid)

    def by_mode(mode: str) -> list[Fault]:
        return [f for f in faults if f.mode == mode]

    def counter(mode: str, reach: Callable[[str], IntArray], n: int) -> FloatArray:
        return np.floor(COUNTER_RATE[mode] * integrate(by_mode(mode), reach, n, epoch, t))

    # NVLink CRC: the per-GPU sum of its edges' integrated error rates (§7 documented policy).
    edge_seconds = integrate(by_mode("gpu_nvlink_error_burst"), reach.edges, cols.n_edges, epoch, t)
    edge_errors = edge_seconds * cols.nodes.nvlink_errors_per_second[g.node[cols.edges.gpu]]
    crc = np.floor(np.bincount(cols.edges.gpu, weights=edge_errors, minlength=n_gpus))
    has_edges = np.bincount(cols.edges.gpu, minlength=n_gpus) > 0

    remap = levels.of("gpu_row_remap")
    pcie = levels.of("gpu_pcie_downtrained")
    width = PCIE_WIDTH / np.exp2(np.round(2.0 * pcie))

    readings: dict[str, Reading] = {
        "DCGM_FI_DEV_GPU_UTIL": Reading(np.rint(100.0 * ops.utilization), present),
        "DCGM_FI_DEV_POWER_USAGE": Reading(power, present),
        "DCGM_FI_DEV_GPU_TEMP": Reading(temp, present),
        "DCGM_FI_DEV_SM_CLOCK": Reading(
            np.nan_to_num(clock), present & np.isfinite(g.boost_clock_mhz)
        ),
        "DCGM_FI_DEV_FB_USED": Reading(np.floor(ops.memory_used_bytes / mib), present),
        "DCGM_FI_DEV_FB_FREE": Reading(
            np.floor((g.memory_limit_bytes - ops.memory_used_bytes) / mib), present & usable_known
        ),
        "DCGM_FI_DEV_XID_ERRORS": Reading(xid, present),
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": Reading(
            counter("gpu_ecc_correctable", reach_gpus, n_gpus), present
        ),
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": Reading(
            counter("gpu_ecc_uncorrectable", reach_gpus, n_gpus), present
        ),
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": Reading(
            counter("gpu_row_remap", reach_gpus, n_gpus), present
        ),
        "DCGM_FI_DEV_ROW_REMAP_FAILURE": Reading((remap >= 1.0).astype(np.float64), present),
        "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": Reading(crc, present & has_edges),
        "DCGM_FI_DEV_PCIE_LINK_WIDTH": Reading(width, present),
    }

    visible = np.add.reduceat(present.astype(np.float64), cols.nodes.gpu_start)
    readings["glimmer_node_power_watts"] = Reading(ops.node_power_w)
    readings["glimmer_node_load_ratio"] = Reading(ops.node_load_fraction)
    readings["glimmer_node_gpus_visible"] = Reading(visible)

    liquid = cols.racks.liquid
    readings["glimmer_rack_power_watts"] = Reading(ops.rack_power_w)
    readings["glimmer_rack_liquid_heat_watts"] = Reading(ops.rack_liquid_heat_w, liquid)
    readings["glimmer_rack_coolant_supply_celsius"] = Reading(ops.rack_supply_temp_c, liquid)
    readings["glimmer_rack_coolant_return_celsius"] = Reading(ops.rack_return_temp_c, liquid)
    readings["glimmer_rack_coolant_flow_lpm"] = Reading(ops.rack_flow_lpm, liquid)

    n_nics = len(nic_speed_gbps)
    down = levels.nic_of("nic_link_down") > 0
    flap = levels.nic_of("nic_link_flapping")
    # A flapping port is down for the first I × 30 s of every minute.
    flapped_down = (flap > 0) & ((t % 60.0) < 30.0 * flap)
    degraded = levels.nic_of("nic_degraded")
    up = ~(down | flapped_down)
    readings["glimmer_nic_link_up"] = Reading(up.astype(np.float64))
    readings["glimmer_nic_rate_gbps"] = Reading(
        np.where(up, nic_speed_gbps * (1.0 - 0.5 * degraded), 0)
    )
    readings["glimmer_nic_link_down_events_total"] = Reading(
        counter("nic_link_flapping", reach.nics, n_nics)
    )
    assert set(readings) == {s.family.name for s in SERIES}
    return Telemetry(at=t, readings=readings)
