"""What a GPU reports about itself, read from the fleet's SKU table (``glimmer/fleet/skus.csv``):
its driver-reported name and its rated boost clock. Telemetry labels and the SM-clock series read
these; the table is their one source, so this module states no product fact of its own.

An unknown clock stays None: the SM-clock series is then absent for that product rather than
invented. Names are what ``nvidia-smi`` and dcgm-exporter's ``modelName`` label print.
"""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.fleet.skus import lookup


@dataclass(frozen=True)
class DeviceFacts:
    model_name: str
    boost_clock_mhz: float | None
    source: str


def facts(sku_key: str) -> DeviceFacts:
    """The facts of a product; an unknown product (or one whose name the table does not know)
    gets its key as name, and no clock."""
    sku = lookup(sku_key)
    if sku is None:
        return DeviceFacts(sku_key, None, "unknown product")
    return DeviceFacts(sku.model_name or sku_key, sku.boost_clock_mhz, sku.sources)


def _idle_clock_fraction() -> float:
    h100 = lookup("h100_sxm_80gb")
    if h100 is None or h100.boost_clock_mhz is None:
        raise LookupError("skus.csv lost the H100 SXM boost clock the idle ratio is taken from")
    return 345.0 / h100.boost_clock_mhz


# A GPU with no work drops to its lowest clocks; 345 MHz of an H100 SXM's rated boost (skus.csv)
# is the ratio used for every product (a synthetic assumption, not a per-product figure).
IDLE_CLOCK_FRACTION = _idle_clock_fraction()
