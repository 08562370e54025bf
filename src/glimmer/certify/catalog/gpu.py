"""GPU architectures: reading ``nvidia.com/gpu.product`` and the per-architecture node defaults
(``data/gpu-defaults.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

PRODUCT_LABEL = "nvidia.com/gpu.product"
UNKNOWN = "unknown"
# Architectures whose multi-node NVLink (MNNVL) is on unless the owner says otherwise.
MNNVL_BY_DEFAULT = frozenset({"gb200", "gb300"})


@dataclass(frozen=True)
class NodeDefaults:
    """GPUs and Mellanox NICs a node of one architecture has."""

    gpus_per_node: int
    mlnx_per_node: int


@cache
def _table() -> dict[str, Any]:
    text = resources.files("glimmer.certify.catalog").joinpath("data/gpu-defaults.yaml")
    data: dict[str, Any] = yaml.safe_load(text.read_text(encoding="utf-8"))
    return data


def architectures() -> list[str]:
    """Every architecture with known defaults, in the table's order."""
    return list(_table()["defaults"])


def parse_product(product: str) -> str:
    """The architecture of a GPU product label: ``NVIDIA-H100-80GB-HBM3`` is h100,
    ``NVIDIA-GB200-NVL72`` gb200, ``NVIDIA-RTX-PRO-6000…`` rtxpro6000; "" when empty."""
    name = product.removeprefix("NVIDIA-")
    if name.upper().startswith("RTX-PRO-6000"):
        return "rtxpro6000"
    return name.split("-", 1)[0].lower()


def config_arch(arch: str) -> str:
    """The architecture whose configuration another borrows (GB300 reads GB200's)."""
    return "gb200" if arch == "gb300" else arch


def node_defaults(arch: str, platform: str = "") -> NodeDefaults:
    """GPUs and NICs per node for an architecture on a platform (unknown: 4 and 0)."""
    table = _table()
    row = dict(table["defaults"].get(arch, table["unknown"]))
    row.update(table.get("platformOverrides", {}).get(platform, {}).get(arch, {}))
    return NodeDefaults(int(row["gpusPerNode"]), int(row["mlnxPerNode"]))
