"""Which targets a fault mode accepts, and what a captured fault reaches, on a real topology.

The topology answers the static questions (which GPUs and NVLink edges a key touches, §4.3);
this module adds what is particular to fault modes — the axis and condition rules of the mode
table, rack resolution for cooling (a CDU counts as its rack), NIC ports — and caches every
answer per key, because the same targets are asked about on every tick.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from glimmer.errors import InputError
from glimmer.fleet.topology import Topology
from glimmer.sim.arrays import IntArray
from glimmer.sim.derive import NicTable, nic_table
from glimmer.sim.faults import Fault
from glimmer.sim.modes import MODE_BY_NAME, MODES, Axis, Condition, axis_of


def _cached(fn: Callable[[str], IntArray]) -> Callable[[str], IntArray]:
    cache: dict[str, IntArray] = {}

    def get(key: str) -> IntArray:
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = fn(key)
        return hit

    return get


class TopologyReach:
    """The :class:`~glimmer.sim.levels.ReachTable` of one topology, cached per key."""

    def __init__(self, topo: Topology) -> None:
        self.topo = topo
        self.nic_table: NicTable = nic_table(topo)
        self._gpus = _cached(lambda k: topo.gpus_reached(k).astype(np.int64))
        self._edges = _cached(lambda k: topo.edges_reached(k).astype(np.int64))
        self._racks = _cached(self._racks_of)
        self._nics = _cached(self._nics_of)
        self._fabric_role = {f.name: f.role for f in topo.fabrics}

    # -- reach ------------------------------------------------------------------------------

    def gpus(self, mode: str, target: str) -> IntArray:
        return self._gpus(target)

    def edges(self, target: str) -> IntArray:
        return self._edges(target)

    def racks(self, target: str) -> IntArray:
        return self._racks(target)

    def nics(self, target: str) -> IntArray:
        return self._nics(target)

    def _racks_of(self, key: str) -> IntArray:
        found = self.topo.index.get(key)
        if found is None:
            return np.zeros(0, dtype=np.int64)
        kind, i = found
        if kind == "rack":
            return np.array([i], dtype=np.int64)
        if kind == "device" and self.topo.devices[i].rack >= 0:
            return np.array([self.topo.devices[i].rack], dtype=np.int64)
        return np.zeros(0, dtype=np.int64)

    def _nics_of(self, key: str) -> IntArray:
        table = self.nic_table
        if key in table.index:
            return np.array([table.index[key]], dtype=np.int64)
        found = self.topo.index.get(key)
        if found is not None and found[0] == "node":
            return np.flatnonzero(table.node == found[1]).astype(np.int64)
        return np.zeros(0, dtype=np.int64)

    # -- validity ----------------------------------------------------------------------------

    def problem(self, mode: str, target: str) -> str | None:
        """Why ``mode`` cannot act on ``target`` in this fleet, or None when it can."""
        row = MODE_BY_NAME.get(mode)
        if row is None:
            known = ", ".join(m.name for m in MODES)
            return f'unknown fault mode "{mode}" (known: {known})'
        axis = axis_of(target)
        rules = [r for r in row.targets if r.axis is axis]
        if axis is None or not rules:
            accepted = ", ".join(sorted({r.axis.value for r in row.targets}))
            return f'mode "{mode}" cannot target "{target}" (it accepts {accepted})'
        if not self._exists(axis, target):
            return f'no target "{target}" in fleet {self.topo.name}'
        if not any(r.condition is None or self._holds(r.condition, target) for r in rules):
            conditions = ", ".join(str(r.condition) for r in rules if r.condition)
            return f'mode "{mode}" cannot target "{target}" (it needs: {conditions})'
        return None

    def check(self, faults: list[Fault] | tuple[Fault, ...], where: str = "fault") -> None:
        """Refuse the first fault that cannot act in this fleet, naming it."""
        for f in faults:
            reason = self.problem(f.mode, f.target)
            if reason is not None:
                raise InputError(f"{where} {f.mode}@{f.target}: {reason}")

    def _exists(self, axis: Axis, target: str) -> bool:
        if axis is Axis.NIC:
            return target in self.nic_table.index
        return self.topo.kind_of(target) is not None

    def _holds(self, condition: Condition, target: str) -> bool:
        kind_index = self.topo.index.get(target)
        kind, i = kind_index if kind_index is not None else ("", -1)
        match condition:
            case Condition.COMPUTE_TRAY:
                return kind == "compute_tray"
            case Condition.NVSWITCH_TRAY:
                return kind == "nvswitch_tray"
            case Condition.BACKEND:
                fabric = target.partition(":")[2].split("/")[0]
                return self._fabric_role.get(fabric) == "backend"
            case Condition.LIQUID_RACK:
                return kind == "rack" and self.topo.racks[i].cooling == "liquid"
            case Condition.CDU_IN_LIQUID_RACK:
                if kind != "device":
                    return False
                dev = self.topo.devices[i]
                return (
                    dev.kind == "cdu"
                    and dev.rack >= 0
                    and self.topo.racks[dev.rack].cooling == "liquid"
                )
            case Condition.REACHES_EDGE:
                return self._edges(target).size > 0
        return False
