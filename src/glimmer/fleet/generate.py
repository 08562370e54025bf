"""Synthetic fleets of any size on a rail-optimised fabric (``glimmer fleet generate``).

Layout, per scalable unit (SU): one pool (so each SU has its own backend leaves, one per rail),
its racks, one frontend leaf; one spine per rail joins the SUs. The figures below are ordinary
choices for each shape, not vendor facts: they only need to be consistent and to load back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import yaml

from glimmer.api.budget import budget
from glimmer.api.fleet import Fleet
from glimmer.errors import InputError

# The most GPUs a generated fleet may have: what glimmer writes it must read back, and the
# densest shape (hgx, about 23 bytes of YAML a GPU) at 2**19 GPUs is ~12 MB, inside the Fleet
# byte budget of glimmer.api.budget.
MAX_GPUS = 524_288

OPERATING: dict[str, Any] = {
    "idlePowerFraction": 0.12,
    "coolingPerfLoss": 0.3,
    "congestionPerfLoss": 0.6,
    "storagePerfLoss": 0.5,
    "ambientTempC": 25,
    "fullPowerRiseC": 40,
    "coolingFaultRiseC": 15,
    "nodeBasePowerW": 250,
    "nodeDynamicPerCoreW": 2,
    "nodeDynamicPerNicW": 10,
    "nvlinkErrorsPerSecond": 1,
}


@dataclass(frozen=True)
class ShapePlan:
    model: str
    gpus_per_node: int
    nodes_per_rack: int
    racks_per_su: int
    node_height_u: int  # 0 for NVL72 trays
    rails: int
    cooling: str
    hardware: dict[str, Any]
    operating: dict[str, Any]
    physics: dict[str, Any]


PLANS = {
    "hgx": ShapePlan(
        "h100_sxm_80gb", 8, 4, 8, 8, 8, "air",
        {"cpus": 224, "memoryGib": 2048, "arch": "x86_64"},
        OPERATING | {"fullPowerRiseC": 35, "coolingFaultRiseC": 10, "nodeBasePowerW": 500},
        {"fixedOverheadW": 300},
    ),
    "pcie": ShapePlan(
        "h100_pcie_80gb", 8, 8, 4, 4, 4, "air",
        {"cpus": 128, "memoryGib": 1024, "arch": "x86_64"}, OPERATING, {"fixedOverheadW": 200},
    ),
    "nvl72": ShapePlan(
        "gb200_186gb", 4, 18, 4, 0, 4, "liquid",
        {"cpus": 144, "memoryGib": 960, "arch": "arm64"}, OPERATING,
        {
            "fixedOverheadW": 4000, "liquidHeatFraction": 0.9, "supplyTempC": 25,
            "flowLpm": 180, "fluidDensityKgPerL": 1, "fluidSpecificHeatJPerKgC": 4180,
        },
    ),
}  # fmt: skip

UPLINKS = 2  # per backend leaf, to its rail's spine
SITE = "site-a"


def _subnet(first_octet: int, index: int) -> dict[str, Any]:
    return {"cidr": f"{first_octet}.{index // 256}.{index % 256}.0/24", "startOffset": 10}


def generate(gpus: int, shape: str, name: str | None = None) -> dict[str, Any]:
    """A Fleet document (wire form) with at least ``gpus`` GPUs of ``shape``."""
    plan = PLANS.get(shape)
    if plan is None:
        raise InputError(f"unknown shape {shape!r} (one of: {', '.join(PLANS)})")
    if gpus <= 0:
        raise InputError(f"--gpus must be positive, got {gpus}")
    if gpus > MAX_GPUS:
        raise InputError(
            f"--gpus must be at most {MAX_GPUS}: a larger Fleet file would not fit the "
            f"{budget('fleet').max_bytes // (1024 * 1024)} MiB budget glimmer reads Fleets "
            f"within, got {gpus}"
        )
    nodes = math.ceil(gpus / plan.gpus_per_node)
    racks = math.ceil(nodes / plan.nodes_per_rack)
    if shape == "nvl72":
        nodes = racks * plan.nodes_per_rack  # an NVL72 rack is always full
    sus = math.ceil(racks / plan.racks_per_su)
    nodes_per_su = plan.nodes_per_rack * plan.racks_per_su
    if sus > 65536 // 4:
        raise InputError(f"{gpus} GPUs is beyond what the generator addresses (too many SUs)")
    rack_docs: list[dict[str, Any]] = []
    pools: list[dict[str, Any]] = []
    frontend: list[dict[str, Any]] = []
    backend: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    for su in range(sus):
        su_name = f"su{su:03d}"
        su_nodes = min(nodes_per_su, nodes - su * nodes_per_su)
        su_racks = math.ceil(su_nodes / plan.nodes_per_rack)
        placements = []
        for r in range(su_racks):
            rack = f"{shape}-{su_name}-r{r:02d}"
            rack_docs.append(
                {"name": rack, "site": SITE, "shape": shape, "cooling": plan.cooling,
                 "physics": plan.physics}
            )  # fmt: skip
            count = min(plan.nodes_per_rack, su_nodes - r * plan.nodes_per_rack)
            placement = {
                "rack": f"rack:{SITE}/{rack}",
                "nodeStart": r * plan.nodes_per_rack,
                "nodeCount": count,
                "slotStart": 1 if plan.node_height_u else 0,
            }
            if plan.node_height_u:
                placement["nodeHeightU"] = plan.node_height_u
            placements.append(placement)
        frontend.append(
            {"name": f"fe-{su_name}", "kind": "leaf",
             "ports": [{"name": "swp", "count": su_nodes, "speedGbps": 100}]}
        )  # fmt: skip
        for rail in range(plan.rails):
            leaf = f"be-{su_name}-rail{rail}"
            backend.append(
                {"name": leaf, "kind": "leaf", "rail": rail, "scalableUnit": su_name,
                 "ports": [{"name": "swp", "count": su_nodes, "speedGbps": 400},
                           {"name": "up", "count": UPLINKS, "speedGbps": 800}]}
            )  # fmt: skip
            for u in range(UPLINKS):
                links.append(
                    {"aDevice": leaf, "aPort": f"up{u + 1}", "bDevice": f"spine-rail{rail}",
                     "bPort": f"swp{su * UPLINKS + u + 1}"}
                )  # fmt: skip
        nics = [{"name": "eth0", "fabric": "frontend", "switch": f"fe-{su_name}", "speedGbps": 100}]
        nics += [
            {"name": f"ib{rail}", "fabric": "backend", "rail": rail, "speedGbps": 400}
            for rail in range(plan.rails)
        ]
        pools.append(
            {
                "name": f"{shape}-{su_name}",
                "shape": shape,
                "gpuModel": plan.model,
                "nodeCount": su_nodes,
                "gpusPerNode": plan.gpus_per_node,
                "hostnamePrefix": f"{shape}-{su_name}-node",
                "scalableUnit": su_name,
                "nodeIps": _subnet(10, su),
                "hardware": plan.hardware,
                "operating": plan.operating,
                "bmc": {"managementIps": _subnet(11, su)},
                "placements": placements,
                "nics": nics,
            }
        )
    spines = [
        {"name": f"spine-rail{rail}", "kind": "spine",
         "ports": [{"name": "swp", "count": sus * UPLINKS, "speedGbps": 800}]}
        for rail in range(plan.rails)
    ]  # fmt: skip
    return {
        "apiVersion": "fleet.glimmer.ai/v1alpha1",
        "kind": "Fleet",
        "metadata": {"name": name or f"{shape}-{nodes * plan.gpus_per_node}"},
        "spec": {
            "sites": [{"name": SITE}],
            "racks": rack_docs,
            "fabrics": [
                {"name": "frontend", "site": SITE, "role": "frontend", "devices": frontend},
                {"name": "backend", "site": SITE, "role": "backend",
                 "devices": backend + spines, "links": links},
            ],
            "pools": pools,
        },
    }  # fmt: skip


def generate_fleet(gpus: int, shape: str, name: str | None = None) -> Fleet:
    """:func:`generate`, validated into a :class:`Fleet`."""
    return Fleet.model_validate(generate(gpus, shape, name))


class _NoAliases(yaml.SafeDumper):
    """Write shared sub-documents out in full: a fleet file should read without anchors."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def to_yaml(doc: dict[str, Any], header: str = "") -> str:
    """YAML text of a generated document (small mappings on one line)."""
    body = yaml.dump(doc, Dumper=_NoAliases, sort_keys=False, default_flow_style=None, width=100)
    return header + body
