"""The topology of a fleet: every GPU, node, rack, NVLink domain, switch and NIC, and reach.

Interface for the simulator (and anything else that reads a fleet)
-------------------------------------------------------------------
Build::

    from glimmer.fleet.load import load_topology          # a built-in name or a file path
    topo = load_topology("ai-factory")                    # or load_topology("fleets/x.yaml")
    from glimmer.fleet.build import build                 # from a parsed Fleet model
    topo = build(fleet, source="x.yaml")

Vectorised view — numpy arrays over all GPUs in one stable order (nodes sorted by key, then
slot); index ``i`` means the same GPU in every array:

    topo.gpu_keys[i]        "gpu:<hostname>/<slot>"        (tuple of str; topo.gpu_index[key] -> i)
    topo.gpu_uuids[i]       "GPU-…"  (also gpu_board_serials, gpu_pci_bus_ids)
    topo.gpu_node[i]        index into topo.nodes          (int32)
    topo.gpu_rack[i]        index into topo.racks          (int32)
    topo.gpu_model[i]       index into topo.models (Sku)   (int16)
    topo.gpu_pool[i]        index into topo.pools (names)  (int16)
    topo.gpu_slot[i]        0-based slot = minor number    (int16)
    topo.gpu_module[i]      HGX module id, -1 elsewhere    (int16)
    topo.gpu_domain[i]      index into topo.domains, -1    (int32)
    topo.gpu_partition[i]   index into topo.partitions, -1 (int32)
    topo.gpu_usable_memory[i] declared usable bytes, 0 = unknown (int64)

Nodes (``topo.nodes``, :class:`~glimmer.fleet.records.NodeRecord`, sorted by key): hostname,
key, pool, ordinal, shape, model, rack index, slot, ip, BMC, cpus/memory, ``gpu_start`` and
``gpu_count`` (its GPUs are a contiguous index range) and its NIC ports (``nics``: fabric, role,
rail, leaf ``switch_key`` and ``port_key``). ``topo.node_rack`` / ``topo.node_pool`` are arrays.
Racks (``topo.racks``) carry the rack physics; ``topo.domains`` the NVLink domains (GPUs,
partitions, switches); ``topo.nvswitches`` every NVSwitch.

NVLink edges (GPU link → NVSwitch port), arrays over edges sorted by (GPU, link):
``edge_gpu``, ``edge_link``, ``edge_switch`` (index into ``nvswitches``), ``edge_port``;
``topo.edge_key(e)`` gives ``nvlink:<host>/<slot>/<link>``, ``topo.gpu_edges(i)`` a GPU's edges.

Reach (what a fault or a test touches), from any key:

    topo.gpus_reached("rack:site-a/nvl-a")   -> sorted int32 array of GPU indices
    topo.edges_reached("nvswitch:…/0")       -> sorted int64 array of edge indices
    topo.nodes_reached(key)                  -> sorted node indices
    topo.kind_of(key)                        -> "gpu", "node", "rack", … or None if unknown

GPU reach follows §4.3's default rule (the GPU itself or any ancestor): GPU, node, compute tray,
Grace CPU, NIC, BMC → the node's GPUs; rack, facility device, site → the rack's GPUs; NVL72
switch tray → its domain; domain, partition → members; NVSwitch, NVLink port, NVLink edge → GPUs
owning a reached edge; fabric, fabric switch, fabric port → GPUs of nodes with a NIC on it;
storage → GPUs of its client nodes; scheduler, project, workload, worker → GPUs their workers
name (a static upper bound; who holds what at a time is the allocation's business).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt

from glimmer.api.fleet import Fleet
from glimmer.fleet.records import (
    DeviceRecord,
    DomainRecord,
    FabricRecord,
    FabricSwitchRecord,
    NodeRecord,
    NvSwitchRecord,
    PartitionRecord,
    RackRecord,
)
from glimmer.fleet.skus import Sku

IntArray = npt.NDArray[np.int32]
EdgeArray = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class Topology:
    """The built fleet. Compare by identity: a rebuilt topology is a different object."""

    name: str
    seed: str
    source: str | None
    fleet: Fleet
    models: tuple[Sku, ...]
    pools: tuple[str, ...]
    racks: tuple[RackRecord, ...]
    nodes: tuple[NodeRecord, ...]
    domains: tuple[DomainRecord, ...]
    partitions: tuple[PartitionRecord, ...]
    nvswitches: tuple[NvSwitchRecord, ...]
    fabrics: tuple[FabricRecord, ...]
    fabric_switches: tuple[FabricSwitchRecord, ...]
    devices: tuple[DeviceRecord, ...]
    gpu_keys: tuple[str, ...]
    gpu_uuids: tuple[str, ...]
    gpu_board_serials: tuple[str, ...]
    gpu_pci_bus_ids: tuple[str, ...]
    gpu_node: IntArray
    gpu_rack: IntArray
    gpu_model: npt.NDArray[np.int16]
    gpu_pool: npt.NDArray[np.int16]
    gpu_slot: npt.NDArray[np.int16]
    gpu_module: npt.NDArray[np.int16]
    gpu_domain: IntArray
    gpu_partition: IntArray
    gpu_usable_memory: npt.NDArray[np.int64]
    edge_gpu: IntArray
    edge_link: npt.NDArray[np.int16]
    edge_switch: IntArray
    edge_port: npt.NDArray[np.int16]
    # key -> (kind, index) for every materialised entity; nvport/nvlink/port keys are parsed.
    index: dict[str, tuple[str, int]] = field(repr=False)
    # scheduler/project/workload/worker key -> GPU indices its workers name
    workload_gpus: dict[str, tuple[int, ...]] = field(repr=False)

    # -- sizes and simple lookups -------------------------------------------------------------

    @property
    def gpu_count(self) -> int:
        return len(self.gpu_keys)

    @property
    def edge_count(self) -> int:
        return int(self.edge_gpu.shape[0])

    @cached_property
    def gpu_index(self) -> dict[str, int]:
        """GPU key -> GPU index."""
        return {k: i for i, k in enumerate(self.gpu_keys)}

    @cached_property
    def node_index(self) -> dict[str, int]:
        """Node key or hostname -> node index."""
        out = {n.key: n.index for n in self.nodes}
        out.update({n.hostname: n.index for n in self.nodes})
        return out

    @cached_property
    def node_rack(self) -> IntArray:
        return np.array([n.rack for n in self.nodes], dtype=np.int32)

    @cached_property
    def node_pool(self) -> npt.NDArray[np.int16]:
        pools = {p: i for i, p in enumerate(self.pools)}
        return np.array([pools[n.pool] for n in self.nodes], dtype=np.int16)

    @cached_property
    def gpu_edge_start(self) -> npt.NDArray[np.int64]:
        """``edges of GPU i = gpu_edge_start[i] .. gpu_edge_start[i+1]-1`` (length G+1)."""
        return np.searchsorted(self.edge_gpu, np.arange(self.gpu_count + 1)).astype(np.int64)

    def gpu_edges(self, gpu: int) -> EdgeArray:
        start, stop = self.gpu_edge_start[gpu], self.gpu_edge_start[gpu + 1]
        return np.arange(start, stop, dtype=np.int64)

    def edge_key(self, edge: int) -> str:
        """``nvlink:<host>/<slot>/<link>`` of edge ``edge``."""
        gpu = self.gpu_keys[int(self.edge_gpu[edge])].removeprefix("gpu:")
        return f"nvlink:{gpu}/{int(self.edge_link[edge])}"

    def edge_port_key(self, edge: int) -> str:
        return self.nvswitches[int(self.edge_switch[edge])].port_key(int(self.edge_port[edge]))

    def kind_of(self, key: str) -> str | None:
        """What ``key`` names (``gpu``, ``node``, ``rack``, ``nvport`` …), or None if nothing."""
        found = self._resolve(key)
        return found[0] if found else None

    # -- reach ----------------------------------------------------------------------------------

    def gpus_reached(self, key: str) -> IntArray:
        """Sorted indices of the GPUs that ``key`` reaches (empty when the key is unknown)."""
        from glimmer.fleet import reach

        return reach.gpus(self, key)

    def edges_reached(self, key: str) -> EdgeArray:
        """Sorted indices of the NVLink edges ``key`` reaches (§4.3 edge reach)."""
        from glimmer.fleet import reach

        return reach.edges(self, key)

    def nodes_reached(self, key: str) -> IntArray:
        """Sorted indices of the nodes owning a reached GPU."""
        return np.unique(self.gpu_node[self.gpus_reached(key)]).astype(np.int32)

    def _resolve(self, key: str) -> tuple[str, int] | None:
        from glimmer.fleet import reach

        return reach.resolve(self, key)

    # -- precomputed groupings (built once, on first use) ----------------------------------------

    @cached_property
    def rack_gpus(self) -> tuple[IntArray, ...]:
        """GPU indices of each rack (indexed like ``racks``)."""
        return _groups(self.gpu_rack, len(self.racks))

    @cached_property
    def nic_nodes(self) -> dict[str, IntArray]:
        """Fabric, fabric-switch and fabric-port key -> nodes having a NIC on it."""
        acc: dict[str, list[int]] = {}
        for node in self.nodes:
            for nic in node.nics:
                for k in {f"fabric:{nic.fabric}", nic.switch_key, nic.port_key}:
                    if k:
                        acc.setdefault(k, []).append(node.index)
        return {k: np.unique(np.array(v, dtype=np.int32)) for k, v in acc.items()}

    @cached_property
    def storage_nodes(self) -> dict[str, IntArray]:
        """Storage key -> nodes that are its clients."""
        acc: dict[str, list[int]] = {}
        for node in self.nodes:
            if node.storage_cluster:
                acc.setdefault(node.storage_cluster, []).append(node.index)
        return {k: np.array(v, dtype=np.int32) for k, v in acc.items()}


def _groups(labels: IntArray, count: int) -> tuple[IntArray, ...]:
    order = np.argsort(labels, kind="stable").astype(np.int32)
    bounds = np.searchsorted(labels[order], np.arange(count + 1))
    return tuple(order[bounds[i] : bounds[i + 1]] for i in range(count))
