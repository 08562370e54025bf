"""Per-product figures a simulated runner measures against: what a healthy part achieves.

These are achievable figures under each runner's own load, not spec-sheet peaks; every row
names its sources. A figure no source gives is derived from one that is sourced, and the
derivation is stated. Keys are the SKU keys of ``glimmer/fleet/skus.csv``.

Sources:
  P41  specs/peers.md §4.1 (peak specs); P42 specs/peers.md §4.2 (achievable numbers)
  B9   specs/burnin.md §9 (measured on two GB10 nodes: clock curves, nvbandwidth, gemm-sweep)
  DS   NVIDIA datasheets: H100 (FP32 67 SXM / 51 PCIe TF, boost 1980 / 1755 MHz), L40S (FP32
       91.6 TF, boost 2520 MHz, PCIe Gen4 x16)
  HMC  hmc-tech.com B200 / GB200 spec pages (B200: boost 1980 MHz, FP32 75.02 TF;
       GB200 superchip: boost 2112 MHz, FP32 160 TF for its two GPUs)
  DCGM DCGM SGEMM targets quoted in P42 (H100 39 000 GFLOPS, H200 50 000 GFLOPS)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass


@dataclass(frozen=True)
class PartFigures:
    compute_cap: str  # what the driver reports (a version label)
    rated_boost_mhz: float  # NVML max SM clock: the denominator of every clock percentage
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
    slowdown_c: float  # temperature at which the part throttles itself
    nic_host_cap_gbps: float | None  # what the NIC's host attachment lets through, if lower
    source: str


# A part whose thermal envelope is not sourced borrows the one envelope we have (H100 SXM,
# skus.csv: max operating 87 °C) as its throttle onset.
DEFAULT_SLOWDOWN_C = 87.0
# Sustained SGEMM is 58 % of the FP32 peak on H100 (DCGM's 39 TF target over 67 TF); parts
# without a published SGEMM figure use the same fraction.
SGEMM_FRACTION = 39.0 / 67.0
# nvbandwidth's device_local_copy on GB10 is 121.4 GB/s of 273 GB/s memory bandwidth (B9, 0.44);
# other parts apply the same fraction to their HBM figure (skus.csv hbm_tbps).
D2D_FRACTION = 0.44
# NVLink peer copies reach 88 % of the per-direction link figure (H200: 396 of 450, P42).
PEER_FRACTION = 0.88

# fmt: off
PARTS: dict[str, PartFigures] = {
    "h100_sxm_80gb": PartFigures(
        "9.0", 1980.0, 2619.0, 67.0, 39.0, 97.0, 90.0, 55.0, D2D_FRACTION * 3350, 380.0, 480.0,
        True, True, True, 89.0, None,
        "DS clock/FP32; DCGM SGEMM; P42 Gen5 H2D 55, p2p ~380, 8-GPU NVLS all-reduce ~480; "
        "slowdown skus.csv"),
    "h100_pcie_80gb": PartFigures(
        "9.0", 1755.0, 1593.0, 51.0, 51.0 * SGEMM_FRACTION, 93.0, 86.0, 55.0,
        D2D_FRACTION * 2000, 50.0, 40.0, True, True, True, DEFAULT_SLOWDOWN_C, None,
        "DS clock/FP32 (350 W cap: lower clock under load); P42 Gen5 H2D 55; peers over the "
        "PCIe Gen5 switch, no NVLink bridge declared"),
    "h200_sxm_141gb": PartFigures(
        "9.0", 1980.0, 3201.0, 67.0, 50.0, 97.0, 90.0, 55.0, D2D_FRACTION * 4800, 396.0, 478.0,
        True, True, True, DEFAULT_SLOWDOWN_C, None,
        "P41 (same GH100 as H100 SXM); DCGM SGEMM 50 TF; P42 p2p 396, NVLS 473-482"),
    "b200_180gb": PartFigures(
        "10.0", 1980.0, 3750.0, 75.02, 75.02 * SGEMM_FRACTION, 96.0, 88.0, 55.0,
        D2D_FRACTION * 8000, PEER_FRACTION * 900, 842.0, True, True, True, DEFAULT_SLOWDOWN_C,
        None, "HMC clock/FP32; P42 Gen5 H2D, 8xB200 NVLS 838-846; P41 NVLink5 900 GB/s/dir"),
    "gb200_186gb": PartFigures(
        "10.0", 2112.0, 3750.0, 80.0, 80.0 * SGEMM_FRACTION, 96.0, 88.0, PEER_FRACTION * 450,
        D2D_FRACTION * 8000, PEER_FRACTION * 900, 680.0, True, True, True, DEFAULT_SLOWDOWN_C,
        None, "HMC clock/FP32; host copies over NVLink-C2C (450 GB/s per direction) at the "
        "NVLink peer fraction; P42 NVL72 ring all-reduce ~680"),
    "l40s_48gb": PartFigures(
        "8.9", 2520.0, 9001.0, 91.6, 91.6 * SGEMM_FRACTION, 90.0, 82.0, 24.0,
        D2D_FRACTION * 864, 24.0, 20.0, True, False, True, DEFAULT_SLOWDOWN_C, None,
        "DS clock/FP32; PCIe Gen4 x16 (P42: Azure Gen4 gate 21, README 23); no NVLink"),
    "gb10_128gb": PartFigures(
        "12.1", 3003.0, None, 30.7, 30.7 * SGEMM_FRACTION, 78.0, 72.0, 59.0, 121.4, None, None,
        False, False, False, DEFAULT_SLOWDOWN_C, 100.0,
        "B9: rated 3003 MHz, nvbandwidth H2D ~59 / D2D ~121, ConnectX-7 behind PCIe Gen5 x4 "
        "(~99.6 Gb/s); FP32 estimated as 6144 cores x 2 x 2.5 GHz (not published)"),
}
# fmt: on

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
