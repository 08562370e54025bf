"""Selecting part of a fleet by pool, fabric, storage cluster and scheduler (§3.4 selection).

A consumer (a DCGM exporter, a Run:ai view, a test run) names what it looks at; the selection
is every node, rack, NVLink domain, fabric and device that naming implies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from glimmer.errors import InputError, Location
from glimmer.fleet import identity as ids
from glimmer.fleet.topology import Topology


@dataclass(frozen=True)
class Selection:
    """Indices into the topology's tuples (sorted), and the keys of selected fabrics/devices."""

    nodes: tuple[int, ...]
    racks: tuple[int, ...]
    domains: tuple[int, ...]
    fabrics: tuple[str, ...]
    devices: tuple[str, ...]

    def gpus(self, topo: Topology) -> list[int]:
        return [g for n in self.nodes for g in topo.nodes[n].gpu_indices]


def _names(topo: Topology, kind: str, given: Sequence[str], known: set[str]) -> set[str]:
    seen: set[str] = set()
    for name in given:
        where = Location(obj=f"Fleet/{topo.name}")
        if name in seen:
            raise InputError(f'duplicate {kind} selector "{name}"', where)
        if name not in known:
            raise InputError(f'unknown {kind} selector "{name}"', where)
        seen.add(name)
    return seen


def select(
    topo: Topology,
    pools: Sequence[str] = (),
    fabrics: Sequence[str] = (),
    storage: Sequence[str] = (),
    schedulers: Sequence[str] = (),
) -> Selection:
    """The part of ``topo`` that the named pools, fabrics, storage and schedulers cover."""
    if not topo.nodes:
        raise InputError("gpu_compute: no topology declared", Location(obj=f"Fleet/{topo.name}"))
    spec = topo.fleet.spec
    chosen = _names(topo, "pool", pools, set(topo.pools))
    _names(topo, "fabric", fabrics, {f.name for f in topo.fabrics})
    stores = _names(topo, "storage", storage, {s.name for s in spec.storage_clusters})
    for s in spec.schedulers:
        if s.name in _names(topo, "scheduler", schedulers, {x.name for x in spec.schedulers}):
            chosen |= set(s.pools)
    nodes = tuple(n.index for n in topo.nodes if n.pool in chosen)
    racks = tuple(sorted({topo.nodes[n].rack for n in nodes}))
    domains = tuple(sorted({d for n in nodes for d in _node_domains(topo, n)}))
    reached = set(fabrics)
    reached |= {c.fabric for n in nodes for c in topo.nodes[n].nics}
    used = stores | {topo.nodes[n].storage_cluster.removeprefix("storage:") for n in nodes}
    devices = {ids.device_key(topo.nodes[n].bmc_name) for n in nodes}
    devices |= {
        s.key
        for f in topo.fabrics
        if f.name in reached
        for s in topo.fabric_switches
        if s.fabric == f.name
    }
    for st in spec.storage_clusters:
        if st.name in used:
            reached.add(st.fabric)
            devices |= {ids.device_key(d.name) for d in st.devices}
    devices |= {d.key for d in topo.devices if d.rack in racks}
    for d in domains:  # HGX switches belong to their node; NVL72 switches to the rack
        devices |= {topo.nvswitches[s].key for s in topo.domains[d].switches}
    return Selection(nodes, racks, domains, tuple(sorted(reached)), tuple(sorted(devices)))


def _node_domains(topo: Topology, node: int) -> set[int]:
    rec = topo.nodes[node]
    return {
        int(d) for d in topo.gpu_domain[rec.gpu_start : rec.gpu_start + rec.gpu_count] if d >= 0
    }
