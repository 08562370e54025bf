"""Fault intensities at one instant, folded onto the entities they reach.

Capture gives (mode, target, intensity) triples; a reach table turns each target into the GPUs,
racks, NVLink edges or NIC ports it touches; folding keeps, per entity and per mode, the maximum
of the intensities reaching it (specs/fleet.md §4.4: never the sum), 0 where nothing does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from glimmer.sim.arrays import FloatArray, IntArray
from glimmer.sim.faults import CapturedFault
from glimmer.sim.modes import MODE_BY_NAME, Effect, Reach


class ReachTable(Protocol):
    """What a captured fault's target touches. Every method returns sorted unique indices."""

    def gpus(self, mode: str, target: str) -> IntArray: ...

    def racks(self, target: str) -> IntArray: ...

    def edges(self, target: str) -> IntArray: ...

    def nics(self, target: str) -> IntArray: ...


@dataclass(frozen=True)
class FaultLevels:
    """Per-entity intensity of every active mode. Modes with nothing active are absent."""

    n_gpus: int
    n_racks: int
    n_edges: int
    n_nics: int
    gpu: dict[str, FloatArray] = field(default_factory=dict)  # mode -> per GPU
    rack: dict[str, FloatArray] = field(default_factory=dict)  # mode -> per rack (cooling, leak)
    edge: dict[str, FloatArray] = field(default_factory=dict)  # mode -> per NVLink edge
    nic: dict[str, FloatArray] = field(default_factory=dict)  # mode -> per NIC port

    def of(self, mode: str) -> FloatArray:
        """Per-GPU intensity of ``mode`` (zeros when inactive)."""
        found = self.gpu.get(mode)
        return found if found is not None else np.zeros(self.n_gpus)

    def of_effect(self, effect: Effect) -> FloatArray:
        """Per-GPU maximum over every active mode with this effect."""
        arrays = [a for m, a in self.gpu.items() if MODE_BY_NAME[m].effect is effect]
        if not arrays:
            return np.zeros(self.n_gpus)
        return np.maximum.reduce(arrays) if len(arrays) > 1 else arrays[0]

    def rack_cooling(self) -> FloatArray:
        """Rack cooling intensity: max over cooling faults resolved to the rack (§4.4)."""
        found = self.rack.get("gpu_cooling_fault")
        return found if found is not None else np.zeros(self.n_racks)

    def edge_burst(self) -> FloatArray:
        found = self.edge.get("gpu_nvlink_error_burst")
        return found if found is not None else np.zeros(self.n_edges)

    def nic_of(self, mode: str) -> FloatArray:
        found = self.nic.get(mode)
        return found if found is not None else np.zeros(self.n_nics)


def _raise(table: dict[str, FloatArray], mode: str, n: int, idx: IntArray, level: float) -> None:
    arr = table.get(mode)
    if arr is None:
        arr = table[mode] = np.zeros(n)
    np.maximum.at(arr, idx, level)


def fold(
    faults: Iterable[CapturedFault],
    reach: ReachTable,
    *,
    n_gpus: int,
    n_racks: int,
    n_edges: int,
    n_nics: int,
) -> FaultLevels:
    """Fold captured faults onto GPUs, racks, edges and NIC ports by maximum."""
    levels = FaultLevels(n_gpus, n_racks, n_edges, n_nics)
    for f in faults:
        row = MODE_BY_NAME[f.mode]
        if row.reach is Reach.SCHEDULED:
            continue  # who a scheduler fault hits depends on the plan; allocation handles it
        _raise(levels.gpu, f.mode, n_gpus, reach.gpus(f.mode, f.target), f.intensity)
        if row.rack_level:
            _raise(levels.rack, f.mode, n_racks, reach.racks(f.target), f.intensity)
        if row.reach is Reach.EDGES:
            _raise(levels.edge, f.mode, n_edges, reach.edges(f.target), f.intensity)
        if row.reach is Reach.NIC_PORTS:
            _raise(levels.nic, f.mode, n_nics, reach.nics(f.target), f.intensity)
    return levels
