"""What a healthy group should measure, per GPU architecture and path, as data with sources.

Used when a certification gives no threshold of its own for a key (§7.5 thresholds win): a
collective must reach :data:`PASS_FRACTION` of the expectation for its path — inside one NVLink
domain the architecture's all-reduce figure, across nodes the group's NICs.

Sources: P42 = specs/peers.md §4.2, P22 = specs/peers.md §2.2.
"""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.certify.catalog.gpu import parse_product
from glimmer.fleet.skus import lookup


@dataclass(frozen=True)
class Figure:
    value: float
    source: str


# All-reduce bus bandwidth over one NVLink domain (GB/s), keyed by the architecture of the
# ``nvidia.com/gpu.product`` label (the catalog's parse): NVLS where the domain is one board, ring
# for NVL72. PCIe cards and parts without a sourced figure (L40S, GB10) have none and are
# judged by thresholds only.
NVLINK_ALL_REDUCE_GBS: dict[str, Figure] = {
    "h100": Figure(480.0, "P42: 8xH100 ~480 NVLS (nccl-tests#212, AWS p5 nccl#1442)"),
    "h200": Figure(475.0, "P42: 8xH200 473-482 NVLS (stas00), 475 (nccl-tests#272)"),
    "b200": Figure(842.0, "P42: 8xB200 838-846 NVLS (stas00, p6-b200, nccl 2.27.7)"),
    "gb200": Figure(680.0, "P42: GB200 NVL72 ~680 ring (NVIDIA slide quoted by stas00)"),
}

# Non-all-reduce collectives over NVLink land at ~80-82 % of the all-reduce path (P42).
OTHER_COLLECTIVE_FRACTION = Figure(0.80, "P42: all_gather/reduce_scatter ~80-82 % (ring path)")

# NCCL over one NIC: 46-48 GB/s per NDR 400G NIC (P42, AddyLaddy nccl-tests#290) — 0.117 GB/s
# of busbw per Gb/s of line rate; HDR agrees (8x200G ~192 GB/s, nccl#778).
NCCL_GBS_PER_NIC_GBPS = Figure(0.117, "P42: 46-48 GB/s per NDR 400G NIC; 8xHDR ~192 GB/s")

# Below this share of the expectation a collective fails: nccl-tests' own exit rule fails a run
# under 0.9 x NCCL_TESTS_MIN_BW (P22, common.cu); Azure's H200 gate 431 of ~475 is 0.91 (P42).
PASS_FRACTION = Figure(0.90, "P22: nccl-tests fails below 0.9 x NCCL_TESTS_MIN_BW")

# Training: a run that loses more than a tenth of its wall time to interruptions, restarts and
# checkpoints is not ready. Our choice (no peer publishes a goodput gate); overridable per
# category with goodputRatio.
GOODPUT_MIN = Figure(0.90, "glimmer default; specs/certify.md §6.3 golden case is 0.9288")


def nvlink_expectation(product: str, collective: str) -> Figure | None:
    """Expected busbw within one NVLink domain of ``product`` (a gpu.product label); None when
    no source gives a figure."""
    if "PCIE" in product.upper():
        return None  # a PCIe card's peers talk over PCIe, not NVLink
    base = NVLINK_ALL_REDUCE_GBS.get(parse_product(product))
    if base is None:
        return None
    if collective.replace("-", "_") in ("all_reduce", "allreduce"):
        return base
    return Figure(
        base.value * OTHER_COLLECTIVE_FRACTION.value,
        f"{base.source}; x{OTHER_COLLECTIVE_FRACTION.value:g} ({OTHER_COLLECTIVE_FRACTION.source})",
    )


def network_expectation(rails: int, line_gbps: float) -> Figure:
    """Expected busbw across nodes: every rail's NIC at the NCCL-per-NIC rate."""
    gbs = NCCL_GBS_PER_NIC_GBPS.value
    return Figure(
        rails * line_gbps * gbs,
        f"{rails} rails x {line_gbps:g} Gb/s x {gbs} GB/s per Gb/s "
        f"({NCCL_GBS_PER_NIC_GBPS.source})",
    )


def floor(expected: Figure) -> float:
    """The pass line for an expectation."""
    return expected.value * PASS_FRACTION.value


# Training throughput per GPU: a healthy BF16 run of a Megatron/NeMo recipe reaches about a third
# of the product's dense BF16 peak (NeMo AutoModel performance summary, DGX-H100 BF16: 328-334
# model TFLOP/s/GPU = 0.33-0.34 of 989; docs.nvidia.com/nemo/automodel/performance/
# performance-summary). A quarter of the peak is our floor: below the lowest
# published healthy share with room for smaller models and short runs, and far above a GPU that
# runs at a fraction of its clock (a pinned P-state trains at ~0.07 of the peak).
TRAINING_PEAK_FRACTION = Figure(
    0.25, "glimmer floor; NeMo AutoModel DGX-H100 BF16 328-334 TFLOP/s/GPU = 0.33 of peak"
)

# The product table's key for an architecture of the ``nvidia.com/gpu.product`` label; a PCIe
# card is its own product. Architectures without a row (GB10, RTX PRO) have no dense BF16 figure
# and are gated by their category's thresholds only.
_SKU_OF_ARCH = {
    "h100": "h100_sxm_80gb",
    "h200": "h200_sxm_141gb",
    "b200": "b200_180gb",
    "gb200": "gb200_186gb",
    "l40s": "l40s_48gb",
}


def training_tflops_floor(product: str) -> Figure | None:
    """The least training throughput per GPU (TFLOP/s) a healthy ``product`` (a gpu.product
    label) reaches: :data:`TRAINING_PEAK_FRACTION` of its dense BF16 peak in the SKU table;
    None when the table has no figure for it."""
    arch = parse_product(product)
    key = (
        "h100_pcie_80gb" if arch == "h100" and "PCIE" in product.upper() else _SKU_OF_ARCH.get(arch)
    )
    sku = lookup(key) if key else None
    if sku is None or sku.bf16_tflops is None:
        return None
    frac = TRAINING_PEAK_FRACTION.value
    cited = [s.strip() for s in sku.sources.split(";") if "bf16" in s] or [sku.sources]
    return Figure(
        round(sku.bf16_tflops * frac, 1),
        f"{frac:g} x {sku.product} dense BF16 {sku.bf16_tflops:g} TFLOP/s (skus.csv "
        f"{cited[0]}); {TRAINING_PEAK_FRACTION.source}",
    )
