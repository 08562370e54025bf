"""The GPU product table (``skus.csv``): each product's identity (driver name, PCI device id, rated
boost clock) and nominal figures, each with its source. It is the one place these facts live; the
simulator reads them from here.

The table is strict: a malformed row stops the load rather than being skipped, and a lookup of an
unknown key fails (there is no fallback product). Empty cells mean "not known" and stay ``None``,
so anything that needs the figure can fail closed.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

_H100_SXM_THERMAL = (89.0, 95.0, 87.0)
# Identity columns and the label their source carries in the sources column ("pci:PCI").
_IDENTITY_SOURCES = {"model_name": "name:", "pci_device_id": "pci:", "boost_clock_mhz": "boost:"}
_PCI_ID = re.compile(r"0x[0-9a-f]{4}")


@dataclass(frozen=True)
class Sku:
    """One GPU product. ``shapes`` lists the pool shapes it may be declared in."""

    key: str
    product: str
    shapes: tuple[str, ...]
    memory_gb: float
    max_power_w: float | None
    nvlink_count: int | None
    nvlink_gbps_bidir: float | None
    hbm_tbps: float | None
    bf16_tflops: float | None
    fp8_tflops: float | None
    mig: bool
    mig_max: int
    slowdown_c: float | None
    shutdown_c: float | None
    max_operating_c: float | None
    hgx_map: str
    # The least host<->device copy bandwidth per direction (GB/s) a healthy GPU of this product
    # reaches: what the built-in profiles gate memory-bw at for it (per product, since PCIe Gen4,
    # Gen5 and NVLink-C2C hosts differ several-fold).
    host_copy_gate_gbs: float | None
    # The product's identity as its driver and PCI tree report it (None: not known): the name
    # nvidia-smi prints, the PCI device id (vendor 0x10de) and the rated boost SM clock.
    model_name: str | None
    pci_device_id: str | None
    boost_clock_mhz: float | None
    sources: str

    @property
    def memory_bytes(self) -> int:
        """Advertised capacity in bytes (decimal GB; metadata, not usable framebuffer)."""
        return int(self.memory_gb * 1_000_000_000)


def _opt_float(cell: str) -> float | None:
    return float(cell) if cell else None


def parse(text: str) -> dict[str, Sku]:
    """Parse the table; ValueError on any malformed or inconsistent row."""
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    out: dict[str, Sku] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        sku = Sku(
            key=row["key"],
            product=row["product"],
            shapes=tuple(s for s in row["shapes"].split("|") if s),
            memory_gb=float(row["memory_gb"]),
            max_power_w=_opt_float(row["max_power_w"]),
            nvlink_count=int(row["nvlink_count"]) if row["nvlink_count"] else None,
            nvlink_gbps_bidir=_opt_float(row["nvlink_gbps_bidir"]),
            hbm_tbps=_opt_float(row["hbm_tbps"]),
            bf16_tflops=_opt_float(row["bf16_tflops"]),
            fp8_tflops=_opt_float(row["fp8_tflops"]),
            mig=row["mig"] == "true",
            mig_max=int(row["mig_max"]),
            slowdown_c=_opt_float(row["slowdown_c"]),
            shutdown_c=_opt_float(row["shutdown_c"]),
            max_operating_c=_opt_float(row["max_operating_c"]),
            hgx_map=row["hgx_map"],
            host_copy_gate_gbs=_opt_float(row["host_copy_gate_gbs"]),
            model_name=row["model_name"] or None,
            pci_device_id=row["pci_device_id"] or None,
            boost_clock_mhz=_opt_float(row["boost_clock_mhz"]),
            sources=row["sources"],
        )
        _check(sku)
        if sku.key in out:
            raise ValueError(f"duplicate product {sku.key}")
        out[sku.key] = sku
    return out


def _check(sku: Sku) -> None:
    if sku.memory_gb <= 0 or (sku.max_power_w is not None and sku.max_power_w <= 0):
        raise ValueError(f"{sku.key}: memory and power must be positive")
    if not sku.sources:
        raise ValueError(f"{sku.key}: every figure needs a source")
    for column, label in _IDENTITY_SOURCES.items():
        # An identity fact is copied into labels and runner output verbatim; one without a
        # named source would be a guess that spreads.
        if getattr(sku, column) is not None and label not in sku.sources:
            raise ValueError(f"{sku.key}: {column} needs a source ({label}...)")
    if sku.pci_device_id is not None and not _PCI_ID.fullmatch(sku.pci_device_id):
        raise ValueError(f"{sku.key}: pci_device_id must be 0x and four lower-case hex digits")
    if sku.boost_clock_mhz is not None and sku.boost_clock_mhz <= 0:
        raise ValueError(f"{sku.key}: boost_clock_mhz must be positive")
    thermal = (sku.slowdown_c, sku.shutdown_c, sku.max_operating_c)
    if any(t is not None for t in thermal) and (
        sku.key != "h100_sxm_80gb" or thermal != _H100_SXM_THERMAL
    ):
        # Only one sourced envelope exists; anything else would be a guess (fleet.md §1.11).
        raise ValueError(f"{sku.key}: thermal limits are admitted only as H100 SXM 89/95/87")


@cache
def _table() -> dict[str, Sku]:
    return parse(resources.files("glimmer.fleet").joinpath("skus.csv").read_text())


def all_skus() -> tuple[Sku, ...]:
    """Every product, in table order."""
    return tuple(_table().values())


def lookup(key: str) -> Sku | None:
    """The product with ``key``, or None. Skus are frozen, so callers cannot corrupt the table."""
    return _table().get(key)
