"""Per-product figures a simulated runner measures against: what a healthy part achieves.

These are achievable figures under each runner's own load, not spec-sheet peaks; every row
names its sources. Keys are the SKU keys of ``glimmer/fleet/skus.csv``, and that table is the one
place a product's identity and nominal figures live (driver name, PCI id, rated boost clock, HBM
and NVLink bandwidth, thermal limits): the rows here state none of them. A figure derived from
one the SKU table holds reads it from there and says so; :data:`PARTS` joins both into what a
runner sees.

Sources:
  P41  specs/peers.md §4.1 (peak specs); P42 specs/peers.md §4.2 (achievable numbers)
  B9   specs/burnin.md §9 (measured on two GB10 nodes: clock curves, nvbandwidth, gemm-sweep)
  DS   NVIDIA datasheets: H100 (FP32 67 SXM / 51 PCIe TF), L40S (FP32 91.6 TF, PCIe Gen4 x16)
  HMC  hmc-tech.com B200 / GB200 spec pages (B200: FP32 75.02 TF; GB200 superchip: FP32 160 TF
       for its two GPUs)
  DCGM DCGM SGEMM targets quoted in P42 (H100 39 000 GFLOPS, H200 50 000 GFLOPS)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from glimmer.fleet.skus import Sku, all_skus, lookup


@dataclass(frozen=True)
class Achievable:
    """The simulator's own figures for one product: none of them is in the SKU table."""

    compute_cap: str  # what the driver reports (a version label)
    mem_clock_mhz: float | None  # NVML memory clock; None where the driver reports none
    fp32_tflops: float  # non-tensor FP32 peak (clockprobe's FMA chain tops out here)
    sgemm_tflops: float  # sustained FP32 SGEMM (the gpu-burn / thermal-soak load)
    fma_clock_pct: float  # healthy mean SM clock under clockprobe's FMA load, % of rated
    soak_clock_pct: float  # healthy mean SM clock under the SGEMM soak, % of rated
    h2d_gbs: float  # nvbandwidth host<->device copy-engine bandwidth per direction
    d2d_gbs: float  # nvbandwidth device_local_copy
    peer_gbs: float | None  # GPU<->GPU copy per direction; None: no peer path
    nccl_node_busbw_gbs: float | None  # all-reduce bus bandwidth over the node's GPUs
    ecc: bool  # NVML reports an ECC mode (False: the runner prints n/a)
    row_remapper: bool  # the part remaps rows (False: remappedRows is n/a)
    peer_memory: bool  # a peer-memory provider exists (GPUDirect RDMA applies)
    nic_host_cap_gbps: float | None  # what the NIC's host attachment lets through, if lower
    source: str


@dataclass(frozen=True)
class PartFigures:
    """What a runner measures against: the achievable figures joined with the two SKU-table
    facts every runner needs (the rated boost clock and the throttle onset)."""

    compute_cap: str
    rated_boost_mhz: float  # skus.csv boost_clock_mhz: the denominator of every clock percentage
    mem_clock_mhz: float | None
    fp32_tflops: float
    sgemm_tflops: float
    fma_clock_pct: float
    soak_clock_pct: float
    h2d_gbs: float
    d2d_gbs: float
    peer_gbs: float | None
    nccl_node_busbw_gbs: float | None
    ecc: bool
    row_remapper: bool
    peer_memory: bool
    slowdown_c: float  # skus.csv slowdown_c, else DEFAULT_SLOWDOWN_C
    nic_host_cap_gbps: float | None
    source: str


def _sku(key: str) -> Sku:
    sku = lookup(key)
    if sku is None:
        raise LookupError(f"runner figures name {key}, which skus.csv does not list")
    return sku


def _hbm_gbs(key: str) -> float:
    """The product's HBM bandwidth in GB/s (skus.csv hbm_tbps)."""
    hbm = _sku(key).hbm_tbps
    if hbm is None:
        raise LookupError(f"{key}: a figure derived from HBM bandwidth needs skus.csv hbm_tbps")
    return hbm * 1000.0


def _nvlink_per_direction_gbs(key: str) -> float:
    """The product's NVLink bandwidth per direction (skus.csv nvlink_gbps_bidir / 2)."""
    bidir = _sku(key).nvlink_gbps_bidir
    if bidir is None:
        raise LookupError(f"{key}: a figure derived from NVLink needs skus.csv nvlink_gbps_bidir")
    return bidir / 2.0


def _default_slowdown_c() -> float:
    envelope = _sku("h100_sxm_80gb").max_operating_c
    if envelope is None:
        raise LookupError("skus.csv lost the H100 SXM thermal envelope")
    return envelope


# A part whose thermal envelope is not sourced borrows the one envelope we have (H100 SXM,
# skus.csv max_operating_c, 87 °C) as its throttle onset.
DEFAULT_SLOWDOWN_C = _default_slowdown_c()
# Sustained SGEMM is 58 % of the FP32 peak on H100 (DCGM's 39 TF target over 67 TF); parts
# without a published SGEMM figure use the same fraction.
SGEMM_FRACTION = 39.0 / 67.0
# nvbandwidth's device_local_copy on GB10 is 121.4 GB/s of 273 GB/s memory bandwidth (B9, 0.44);
# other parts apply the same fraction to their HBM figure (skus.csv hbm_tbps).
D2D_FRACTION = 0.44
# NVLink peer copies reach 88 % of the per-direction link figure (H200: 396 of 450, P42).
PEER_FRACTION = 0.88
# NVLink-C2C between a Grace CPU and its GPUs: 450 GB/s per direction (NVIDIA's published 900 GB/s
# bidirectional; not a SKU-table fact, since it is the host link, not the GPU's).
C2C_PER_DIRECTION_GBS = 450.0

# fmt: off
ACHIEVABLE: dict[str, Achievable] = {
    "h100_sxm_80gb": Achievable(
        "9.0", 2619.0, 67.0, 39.0, 97.0, 90.0, 55.0, D2D_FRACTION * _hbm_gbs("h100_sxm_80gb"),
        380.0, 480.0, True, True, True, None,
        "DS FP32; DCGM SGEMM; P42 Gen5 H2D 55, p2p ~380, 8-GPU NVLS all-reduce ~480; "
        "D2D from skus.csv hbm_tbps"),
    "h100_pcie_80gb": Achievable(
        "9.0", 1593.0, 51.0, 51.0 * SGEMM_FRACTION, 93.0, 86.0, 55.0,
        D2D_FRACTION * _hbm_gbs("h100_pcie_80gb"), 50.0, 40.0, True, True, True, None,
        "DS FP32 (350 W cap: lower clock under load); P42 Gen5 H2D 55; peers over the "
        "PCIe Gen5 switch, no NVLink bridge declared; D2D from skus.csv hbm_tbps"),
    "h200_sxm_141gb": Achievable(
        "9.0", 3201.0, 67.0, 50.0, 97.0, 90.0, 55.0, D2D_FRACTION * _hbm_gbs("h200_sxm_141gb"),
        396.0, 478.0, True, True, True, None,
        "P41 (same GH100 as H100 SXM); DCGM SGEMM 50 TF; P42 p2p 396, NVLS 473-482; "
        "D2D from skus.csv hbm_tbps"),
    "b200_180gb": Achievable(
        "10.0", 3750.0, 75.02, 75.02 * SGEMM_FRACTION, 96.0, 88.0, 55.0,
        D2D_FRACTION * _hbm_gbs("b200_180gb"),
        PEER_FRACTION * _nvlink_per_direction_gbs("b200_180gb"), 842.0, True, True, True, None,
        "HMC FP32; P42 Gen5 H2D, 8xB200 NVLS 838-846; D2D from skus.csv hbm_tbps, peers from "
        "skus.csv nvlink_gbps_bidir (NVLink5, P41)"),
    "gb200_186gb": Achievable(
        "10.0", 3750.0, 80.0, 80.0 * SGEMM_FRACTION, 96.0, 88.0,
        PEER_FRACTION * C2C_PER_DIRECTION_GBS, D2D_FRACTION * _hbm_gbs("gb200_186gb"),
        PEER_FRACTION * _nvlink_per_direction_gbs("gb200_186gb"), 680.0, True, True, True, None,
        "HMC FP32; host copies over NVLink-C2C at the NVLink peer fraction; P42 NVL72 ring "
        "all-reduce ~680; D2D from skus.csv hbm_tbps, peers from skus.csv nvlink_gbps_bidir"),
    "l40s_48gb": Achievable(
        "8.9", 9001.0, 91.6, 91.6 * SGEMM_FRACTION, 90.0, 82.0, 24.0,
        D2D_FRACTION * _hbm_gbs("l40s_48gb"), 24.0, 20.0, True, False, True, None,
        "DS FP32; PCIe Gen4 x16 (P42: Azure Gen4 gate 21, README 23); no NVLink; "
        "D2D from skus.csv hbm_tbps"),
    "gb10_128gb": Achievable(
        "12.1", None, 30.7, 30.7 * SGEMM_FRACTION, 78.0, 72.0, 59.0, 121.4, None, None,
        False, False, False, 100.0,
        "B9: nvbandwidth H2D ~59 / D2D ~121, ConnectX-7 behind PCIe Gen5 x4 "
        "(~99.6 Gb/s); FP32 estimated as 6144 cores x 2 x 2.5 GHz (not published)"),
}
# fmt: on


def _join(sku: Sku, row: Achievable) -> PartFigures:
    if sku.boost_clock_mhz is None:
        # Every clock percentage divides by it: a part without one has no runner figures.
        raise LookupError(f"{sku.key}: runner figures need skus.csv boost_clock_mhz")
    return PartFigures(
        compute_cap=row.compute_cap,
        rated_boost_mhz=sku.boost_clock_mhz,
        mem_clock_mhz=row.mem_clock_mhz,
        fp32_tflops=row.fp32_tflops,
        sgemm_tflops=row.sgemm_tflops,
        fma_clock_pct=row.fma_clock_pct,
        soak_clock_pct=row.soak_clock_pct,
        h2d_gbs=row.h2d_gbs,
        d2d_gbs=row.d2d_gbs,
        peer_gbs=row.peer_gbs,
        nccl_node_busbw_gbs=row.nccl_node_busbw_gbs,
        ecc=row.ecc,
        row_remapper=row.row_remapper,
        peer_memory=row.peer_memory,
        slowdown_c=sku.slowdown_c if sku.slowdown_c is not None else DEFAULT_SLOWDOWN_C,
        nic_host_cap_gbps=row.nic_host_cap_gbps,
        source=f"{row.source}; rated boost and slowdown from skus.csv ({sku.sources})",
    )


PARTS: dict[str, PartFigures] = {
    sku.key: _join(sku, ACHIEVABLE[sku.key]) for sku in all_skus() if sku.key in ACHIEVABLE
}

# GB10's measured clock under load decays with the window. The two runners' loads differ, so
# their curves stay apart (Appendix C.8). thermal-soak (B9): 82.21 → 80.50 → 78.13 → 72.32 →
# 70.66 → 69.90 % at 25/45/60/120/240/600 s. clockprobe (B9): 83.22 % at 25 s and 69.90 % at
# 600 s only; between them it follows the soak curve's shape, shifted by the 25 s difference
# tapering to none at 600 s.
GB10_CLOCK_CURVE: tuple[tuple[float, float], ...] = (
    (25.0, 82.21), (45.0, 80.50), (60.0, 78.13), (120.0, 72.32), (240.0, 70.66), (600.0, 69.90),
)  # fmt: skip

# gemm-sweep on GB10, 1024^3, TFLOPS (B9: the two nodes' measured baselines, averaged).
GB10_GEMM_TFLOPS: dict[str, float] = {
    "fp4": 92.5, "fp8": 68.9, "bf16": 46.6, "tf32": 29.36, "fp64": 0.321,
}  # fmt: skip

# Precisions each compute capability has at all (a part without one makes gemm-sweep Skip).
PRECISIONS_FROM_CC: dict[str, float] = {
    "fp4": 10.0,
    "fp8": 8.9,
    "bf16": 8.0,
    "tf32": 8.0,
    "fp64": 0.0,
}


def part(sku_key: str) -> PartFigures | None:
    return PARTS.get(sku_key)


def gb10_clockprobe_pct(window_s: float) -> float:
    """GB10's healthy mean clock under clockprobe's FMA load for a window."""
    shift = (83.22 - 82.21) * max(0.0, min(1.0, (600.0 - window_s) / 575.0))
    return gb10_clock_pct(window_s) + shift


def gb10_clock_pct(window_s: float) -> float:
    """GB10's healthy mean clock under the SGEMM soak for a window, linear between the
    measured points."""
    curve = GB10_CLOCK_CURVE
    if window_s <= curve[0][0]:
        return curve[0][1]
    for (t0, p0), (t1, p1) in itertools.pairwise(curve):
        if window_s <= t1:
            return p0 + (p1 - p0) * (window_s - t0) / (t1 - t0)
    return curve[-1][1]
