"""The simulated fleet's nodes as a cluster would list them to a certification: the labels GPU
feature discovery and the platform write (product, rack, NVLink clique, leaf) from the
topology, the backend fabric an inventory declares (certify/fabric.py), and the cordon of a
drained node."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from glimmer.certify.fabric import fabric_labels
from glimmer.certify.grouping import (
    CLIQUE_LABEL,
    LEAF_LABEL,
    PRODUCT_LABEL,
    RACK_LABEL,
    UNSCHEDULABLE_TAINT,
    NodeInfo,
    Taint,
)
from glimmer.fleet.records import NicRecord
from glimmer.fleet.topology import Topology
from glimmer.sim.device_facts import facts
from glimmer.sim.twin import FleetSim

# The fault mode that is scheduler state on the simulator: a drained node is cordoned.
DRAIN_MODE = "gpu_node_drain"


def fleet_nodes(topo: Topology) -> list[NodeInfo]:
    """Every node of the fleet with the labels a cluster would show: product, rack, the
    NVLink clique (NVL72 racks only, as GPU feature discovery labels them), the leaf and the
    declared backend fabric."""
    out: list[NodeInfo] = []
    cliques = _clique_ids(topo)
    for node in topo.nodes:
        rack = topo.racks[node.rack]
        labels = {
            "kubernetes.io/hostname": node.hostname,
            # What GPU Feature Discovery writes (as the simulator backend's nodes carry it).
            PRODUCT_LABEL: facts(node.model).model_name.replace(" ", "-"),
            RACK_LABEL: rack.name,
        }
        first = node.gpu_start
        dom = int(topo.gpu_domain[first]) if node.gpu_count else -1
        if dom in cliques:
            labels[CLIQUE_LABEL] = cliques[dom]
        backend = sorted((n for n in node.nics if n.role == "backend"), key=lambda n: n.rail)
        if backend:
            labels[LEAF_LABEL] = backend[0].switch_key.removeprefix("switch:")
        labels.update(_declared_fabric(backend))
        out.append(NodeInfo(node.hostname, labels))
    return out


def _clique_ids(topo: Topology) -> dict[int, str]:
    """The clique label of each NVL72 domain: one value per domain, as GPU feature discovery
    writes one per NVLink domain. The fleet's domain name where no other NVL72 domain has it,
    else the domain's site/rack/name stem: racks that declare no domain name are all "default",
    and one label over them would make two racks one NVLink clique."""
    nvl72 = [d for d in topo.domains if d.kind == "nvl72"]
    taken = Counter(d.name for d in nvl72)
    return {d.index: d.name if taken[d.name] == 1 else d.stem.replace("/", ".") for d in nvl72}


def _declared_fabric(backend: list[NicRecord]) -> dict[str, str]:
    """The fabric labels of a node's backend ports: its rails when they are 0..n-1 (what one
    count can declare; a node whose rails have gaps declares nothing rather than a wrong count)
    and its slowest port on them."""
    on_rails = [n for n in backend if n.rail >= 0]
    rails = sorted({n.rail for n in on_rails})
    if not rails or rails != list(range(len(rails))):
        return {}
    return fabric_labels(len(rails), min(n.speed_gbps for n in on_rails))


def sim_nodes(twin: FleetSim, t: float = 0.0) -> list[NodeInfo]:
    """The fleet's nodes as a cluster would list them at ``t``. A simulated node carries no
    taint, except that a node whose every GPU a ``gpu_node_drain`` fault covers is cordoned:
    unschedulable, with the cordon taint ``node.kubernetes.io/unschedulable:NoSchedule``."""
    drained: set[int] = set()
    for f in twin.active_faults(t):
        if f.mode == DRAIN_MODE:
            drained.update(int(g) for g in twin.reach.gpus(f.mode, f.target))
    cordoned = {
        n.hostname
        for n in twin.topo.nodes
        if n.gpu_count and all(g in drained for g in range(n.gpu_start, n.gpu_start + n.gpu_count))
    }
    cordon = (Taint(UNSCHEDULABLE_TAINT, "", "NoSchedule"),)
    return [
        replace(n, taints=cordon, unschedulable=True) if n.name in cordoned else n
        for n in fleet_nodes(twin.topo)
    ]
