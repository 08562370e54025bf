"""What a GPU reports about itself that the SKU table does not carry: its driver-reported name
and its rated boost clock. Telemetry labels and the SM-clock series read this table.

An unknown clock stays None: the SM-clock series is then absent for that product rather than
invented. Names are what ``nvidia-smi`` and dcgm-exporter's ``modelName`` label print.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceFacts:
    model_name: str
    boost_clock_mhz: float | None
    source: str


# fmt: off
DEVICE_FACTS: dict[str, DeviceFacts] = {
    "h100_sxm_80gb": DeviceFacts("NVIDIA H100 80GB HBM3", 1980.0,
                                 "NVIDIA H100 datasheet: SXM5 max boost 1,980 MHz"),
    "h100_pcie_80gb": DeviceFacts("NVIDIA H100 PCIe", 1755.0,
                                  "NVIDIA H100 datasheet: PCIe max boost 1,755 MHz"),
    "h200_sxm_141gb": DeviceFacts("NVIDIA H200", 1980.0,
                                  "NVIDIA H200 product brief: same GH100 boost as H100 SXM5"),
    "b200_180gb": DeviceFacts("NVIDIA B200", None, "boost clock not published per GPU"),
    "gb200_186gb": DeviceFacts("NVIDIA GB200", None, "boost clock not published per GPU"),
    "l40s_48gb": DeviceFacts("NVIDIA L40S", 2520.0, "NVIDIA L40S datasheet: boost 2,520 MHz"),
    "gb10_128gb": DeviceFacts("NVIDIA GB10", 3003.0,
                              "specs/burnin.md §9 fleet notes: GB10 rated boost 3003 MHz"),
}
# fmt: on

# A GPU with no work drops to its lowest clocks; 345 MHz of a 1,980 MHz H100 is the ratio used
# for every product (a synthetic assumption, not a per-product figure).
IDLE_CLOCK_FRACTION = 345.0 / 1980.0


def facts(sku_key: str) -> DeviceFacts:
    """The facts of a product; an unknown product gets its key as name and no clock."""
    return DEVICE_FACTS.get(sku_key, DeviceFacts(sku_key, None, "unknown product"))
