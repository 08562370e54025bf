"""Reach: which GPUs and NVLink edges a key touches (specs/fleet.md §4.3).

Keys are resolved through the topology's index; the very numerous ``nvport:``, ``nvlink:`` and
``port:`` keys are parsed instead of stored, so a 100,000-GPU fleet keeps a small index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from glimmer.fleet.topology import EdgeArray, IntArray, Topology

_NODE_KINDS = frozenset({"node", "compute_tray", "cpu", "nic", "bmc", "client"})
_SCHEDULING = frozenset({"scheduler", "project", "workload", "worker"})


def resolve(topo: Topology, key: str) -> tuple[str, int] | None:
    """(kind, index) of ``key``; None when the fleet has no such entity."""
    hit = topo.index.get(key)
    if hit is not None:
        return hit
    prefix, _, rest = key.partition(":")
    if prefix == "nvport":
        switch_key, _, port = key.removeprefix("nvport:").rpartition("/")
        sw = topo.index.get(f"nvswitch:{switch_key}")
        if sw is None or not port.isdigit() or int(port) >= topo.nvswitches[sw[1]].port_count:
            return None
        return ("nvport", sw[1] * 256 + int(port))
    if prefix == "nvlink":
        gpu, _, link = rest.rpartition("/")
        g = topo.gpu_index.get(f"gpu:{gpu}")
        if g is None or not link.isdigit():
            return None
        edges = topo.gpu_edges(g)
        match = edges[topo.edge_link[edges] == int(link)]
        return ("nvlink", int(match[0])) if match.size else None
    if prefix == "port" and key in topo.nic_nodes:
        return ("port", -1)
    if prefix == "port":
        switch, _, port = rest.rpartition("/")
        sw = topo.index.get(f"switch:{switch}")
        if sw and any(p == port for p, _ in topo.fabric_switches[sw[1]].ports):
            return ("port", sw[1])
    return None


def _node_gpus(topo: Topology, nodes: IntArray) -> IntArray:
    if nodes.size == 0:
        return np.zeros(0, dtype=np.int32)
    parts = [np.asarray(topo.nodes[int(n)].gpu_indices, dtype=np.int32) for n in nodes]
    return np.unique(np.concatenate(parts)).astype(np.int32)


def gpus(topo: Topology, key: str) -> IntArray:
    """Sorted GPU indices reached by ``key``."""
    found = resolve(topo, key)
    if found is None:
        return np.zeros(0, dtype=np.int32)
    kind, i = found
    if kind == "gpu":
        return np.array([i], dtype=np.int32)
    if kind in _NODE_KINDS:
        return np.asarray(topo.nodes[i].gpu_indices, dtype=np.int32)
    if kind in ("rack", "device"):
        rack = i if kind == "rack" else topo.devices[i].rack
        return topo.rack_gpus[rack] if rack >= 0 else np.zeros(0, dtype=np.int32)
    if kind == "site":
        racks = [topo.rack_gpus[r.index] for r in topo.racks if f"site:{r.site}" == key]
        return np.unique(np.concatenate(racks)).astype(np.int32)
    if kind in ("domain", "nvswitch_tray"):
        return np.array(topo.domains[i].gpus, dtype=np.int32)
    if kind == "partition":
        return np.array(topo.partitions[i].gpus, dtype=np.int32)
    if kind in ("nvswitch", "nvport", "nvlink"):
        return np.unique(topo.edge_gpu[edges(topo, key)]).astype(np.int32)
    if kind in ("fabric", "fabric_switch", "port"):
        return _node_gpus(topo, topo.nic_nodes.get(key, np.zeros(0, dtype=np.int32)))
    if kind == "storage":
        return _node_gpus(topo, topo.storage_nodes.get(key, np.zeros(0, dtype=np.int32)))
    if kind in _SCHEDULING:
        return np.array(sorted(topo.workload_gpus.get(key, ())), dtype=np.int32)
    return np.zeros(0, dtype=np.int32)


def _edges_of_gpus(topo: Topology, gpu_indices: IntArray) -> EdgeArray:
    start = topo.gpu_edge_start[gpu_indices]
    stop = topo.gpu_edge_start[gpu_indices + 1]
    counts = stop - start
    if counts.sum() == 0:
        return np.zeros(0, dtype=np.int64)
    # Concatenate the ranges start..stop without a Python loop.
    offsets = np.repeat(start - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    return (np.arange(int(counts.sum()), dtype=np.int64) + offsets).astype(np.int64)


def edges(topo: Topology, key: str) -> EdgeArray:
    """Sorted NVLink edge indices reached by ``key``: its GPU, port, or an ancestor of either."""
    found = resolve(topo, key)
    if found is None or topo.edge_count == 0:
        return np.zeros(0, dtype=np.int64)
    kind, i = found
    if kind == "nvlink":
        return np.array([i], dtype=np.int64)
    if kind == "nvport":
        sw, port = divmod(i, 256)
        return np.flatnonzero((topo.edge_switch == sw) & (topo.edge_port == port))
    if kind == "nvswitch":
        return np.flatnonzero(topo.edge_switch == i)
    if kind == "nvswitch_tray":
        tray = int(key.rsplit("/", 1)[1])
        switches = [s for s in topo.domains[i].switches if topo.nvswitches[s].tray == tray]
        return np.flatnonzero(np.isin(topo.edge_switch, switches))
    if kind in ("gpu", "node", "compute_tray", "rack", "domain", "partition"):
        return _edges_of_gpus(topo, gpus(topo, key))
    return np.zeros(0, dtype=np.int64)
