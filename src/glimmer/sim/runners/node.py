"""One node as a runner on it would find it: its GPUs, NIC ports and the faults reaching them.

Built from the twin's static columns and the faults active at the call's start. Only this
node's share of each fault is folded (maximum per mode, specs/fleet.md §4.4), so a runner never
pays for the whole fleet's operating point. What a view holds besides its instant depends only on
the node and the active faults, so it is built once per (node, fault set) and kept with the twin
(bounded): a burn-in calls every runner of a node under the same faults, twice per execution.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from weakref import WeakKeyDictionary

import numpy as np

from glimmer.fleet.records import NicRecord, NodeRecord
from glimmer.fleet.skus import Sku
from glimmer.fleet.topology import Topology
from glimmer.sim.arrays import IntArray
from glimmer.sim.counters import integrate
from glimmer.sim.device_facts import facts
from glimmer.sim.faults import CapturedFault
from glimmer.sim.modes import MODE_BY_NAME, Reach
from glimmer.sim.runners.figures import PartFigures, part
from glimmer.sim.twin import FleetSim

# Views kept per twin, keyed by (node index, active faults); cleared when full.
MAX_KEPT_VIEWS = 1 << 15

# Modes that take a GPU away from the runtime: it is not among the devices a runner sees.
MISSING_MODES = ("gpu_fallen_off_bus",)


@dataclass(frozen=True)
class Device:
    """One GPU of the node, in slot order."""

    slot: int  # minor number: what a runner calls device index
    gpu: int  # fleet GPU index
    key: str
    uuid: str
    pci_bus_id: str
    sku: Sku
    name: str
    limit_w: float  # enforced power limit
    levels: Mapping[str, float]  # fault mode -> intensity reaching this GPU
    # Whether the runtime sees this GPU: decided once from ``levels`` (a device is built once
    # per (node, fault set) and asked on every look at the node's visible GPUs, 26 times a
    # runner call).
    present: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        gone = any(self.levels.get(m, 0.0) > 0.0 for m in MISSING_MODES)
        object.__setattr__(self, "present", not gone)  # frozen: set once, here

    def level(self, mode: str) -> float:
        return self.levels.get(mode, 0.0)

    @property
    def part(self) -> PartFigures | None:
        # Looked up on each use, not kept: a view outlives the figures table a test may replace.
        return part(self.sku.key)


@dataclass(frozen=True)
class NodeView:
    twin: FleetSim
    node: NodeRecord
    t: float  # Unix seconds of the call's start
    faults: tuple[CapturedFault, ...]
    devices: tuple[Device, ...]
    node_levels: Mapping[str, float]  # max intensity of each mode reaching any of its GPUs
    nic_levels: Mapping[str, Mapping[str, float]]  # NIC key -> mode -> intensity
    cooling: float  # rack cooling intensity
    op: Mapping[str, float] = field(default_factory=dict)  # the pool's operating assumptions

    @cached_property
    def visible(self) -> tuple[Device, ...]:
        # Kept on the (frozen, never changed) view: a runner asks for it several times.
        return tuple(d for d in self.devices if d.present)

    def level(self, mode: str) -> float:
        return self.node_levels.get(mode, 0.0)

    def nic_level(self, nic: str, mode: str) -> float:
        return self.nic_levels.get(nic, {}).get(mode, 0.0)

    @property
    def backend_nics(self) -> tuple[NicRecord, ...]:
        return tuple(n for n in self.node.nics if n.role == "backend")

    def rdma_nic(self) -> NicRecord | None:
        """The port an RDMA test uses: the route to the peer is rail 0 of the backend fabric
        (peers on a rail-optimised fabric address each other on their rail-0 subnet)."""
        nics = sorted(self.backend_nics, key=lambda n: (max(n.rail, 0), n.name))
        return nics[0] if nics else None

    def lifetime_count(self, mode: str, rate: float, gpu: int) -> int:
        """A lifetime counter driven by ``mode`` (errors so far since the epoch), at least one
        while the fault is active: a fault that is on has already left its mark."""
        faults = [f for f in self.twin.faults if f.mode == mode]
        count = 0  # no such fault ever: nothing integrated (host-health asks 24 times a call)
        if faults:
            reach = self.twin.reach
            one = np.zeros(1, dtype=np.int64)
            none = np.zeros(0, dtype=np.int64)

            # Integrated for this one GPU (entity 0), not for every GPU of the fleet: an array
            # of the whole fleet per call made each runner call cost the fleet's size.
            def this_gpu(target: str) -> IntArray:
                return one if gpu in reach.gpus(mode, target) else none

            seconds = integrate(faults, this_gpu, 1, self.twin.epoch, self.t)[0]
            count = int(np.floor(rate * seconds))
        # The node's level of a mode is the highest of its GPUs': none of them is active
        # when it is zero.
        active = self.level(mode) > 0 and any(
            d.gpu == gpu and d.level(mode) > 0 for d in self.devices
        )
        return max(count, 1) if active else count


def _node_index(twin: FleetSim, name: str) -> int | None:
    found = twin.topo.node_index.get(name)
    if found is None and not name.startswith("node:"):
        found = twin.topo.node_index.get(f"node:{name}")
    return found


def gpu_names(topo: Topology, node_name: str) -> list[str]:
    """What the runtime calls each GPU the node declares (empty for an unknown node)."""
    index = topo.node_index.get(node_name, topo.node_index.get(f"node:{node_name}"))
    if index is None:
        return []
    node = topo.nodes[index]
    models = topo.gpu_model[node.gpu_start : node.gpu_start + node.gpu_count]
    return [facts(topo.models[int(m)].key).model_name for m in models]


_Parts = tuple[
    tuple[Device, ...], Mapping[str, float], Mapping[str, Mapping[str, float]], float,
    Mapping[str, float],
]  # fmt: skip
_KEPT: WeakKeyDictionary[FleetSim, dict[tuple[int, tuple[CapturedFault, ...]], _Parts]] = (
    WeakKeyDictionary()
)


def view(twin: FleetSim, node_name: str, started_at: float) -> NodeView | None:
    """The node ``node_name`` (hostname or key) at ``started_at`` seconds after the epoch;
    None when the fleet has no such node."""
    index = _node_index(twin, node_name)
    if index is None:
        return None
    t = twin.epoch + started_at
    faults = twin.active_faults(t)
    devices, node_levels, nic_levels, cooling, op = _kept_parts(twin, index, faults)
    return NodeView(
        twin, twin.topo.nodes[index], t, faults, devices, node_levels, nic_levels, cooling, op
    )


def node_level(twin: FleetSim, node_name: str, started_at: float, mode: str) -> float | None:
    """``view(twin, node_name, started_at).level(mode)`` without building the view (the
    dispatcher asks one level before every NVIDIA runner, which builds its own); None when the
    fleet has no such node."""
    index = _node_index(twin, node_name)
    if index is None:
        return None
    node_levels = _kept_parts(twin, index, twin.active_faults(twin.epoch + started_at))[1]
    return node_levels.get(mode, 0.0)


def _kept_parts(twin: FleetSim, index: int, faults: tuple[CapturedFault, ...]) -> _Parts:
    kept = _KEPT.get(twin)
    if kept is None:
        kept = _KEPT[twin] = {}
    parts = kept.get((index, faults))
    if parts is None:
        if len(kept) >= MAX_KEPT_VIEWS:
            kept.clear()
        parts = kept[(index, faults)] = _parts(twin, index, faults)
    return parts


def _parts(twin: FleetSim, index: int, faults: tuple[CapturedFault, ...]) -> _Parts:
    topo = twin.topo
    node = topo.nodes[index]
    start, stop = node.gpu_start, node.gpu_start + node.gpu_count
    gpu_levels: list[dict[str, float]] = [{} for _ in range(node.gpu_count)]
    node_levels: dict[str, float] = {}
    nic_levels: dict[str, dict[str, float]] = {}
    cooling = 0.0
    nic_keys = twin.reach.nic_table.keys
    for f in faults:
        row = MODE_BY_NAME[f.mode]
        if row.reach is Reach.SCHEDULED:
            continue  # scheduler faults act on workloads, never on a runner's hardware
        gpus = twin.reach.gpus(f.mode, f.target)
        mine = gpus[(gpus >= start) & (gpus < stop)]
        for g in mine.tolist():
            slot_levels = gpu_levels[g - start]
            slot_levels[f.mode] = max(slot_levels.get(f.mode, 0.0), f.intensity)
        if mine.size:
            node_levels[f.mode] = max(node_levels.get(f.mode, 0.0), f.intensity)
        cooled = row.rack_level and f.mode == "gpu_cooling_fault"
        if cooled and node.rack in twin.reach.racks(f.target).tolist():
            cooling = max(cooling, f.intensity)
        if row.reach is Reach.NIC_PORTS:
            for i in twin.reach.nics(f.target).tolist():
                key = nic_keys[i]
                if int(twin.reach.nic_table.node[i]) == index:
                    levels = nic_levels.setdefault(key, {})
                    levels[f.mode] = max(levels.get(f.mode, 0.0), f.intensity)
                    node_levels[f.mode] = max(node_levels.get(f.mode, 0.0), f.intensity)
    devices = []
    for g in range(start, stop):
        sku = topo.models[int(topo.gpu_model[g])]
        devices.append(
            Device(
                slot=int(topo.gpu_slot[g]),
                gpu=g,
                key=topo.gpu_keys[g],
                uuid=topo.gpu_uuids[g],
                pci_bus_id=topo.gpu_pci_bus_ids[g],
                sku=sku,
                name=facts(sku.key).model_name,
                limit_w=float(twin.columns.gpus.limit_w[g]),
                levels=gpu_levels[g - start],
            )
        )
    cols = twin.columns.nodes
    op = {
        "ambient_c": float(cols.ambient_temp_c[index]),
        "rise_c": float(cols.full_power_rise_c[index]),
        "cooling_rise_c": float(cols.cooling_fault_rise_c[index]),
        "cooling_loss": float(cols.cooling_perf_loss[index]),
        "congestion_loss": float(cols.congestion_perf_loss[index]),
        "storage_loss": float(cols.storage_perf_loss[index]),
        "idle_fraction": float(cols.idle_power_fraction[index]),
    }
    return tuple(devices), node_levels, nic_levels, cooling, op
