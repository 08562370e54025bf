"""The twin's nodes as runners find them, built once per node for a start time and fault set.

A certification asks about the same nodes again and again: every isolation round runs jobs over
groups that, together, cover the target, and each group's expectation reads the same nodes'
rails. Building a :class:`~glimmer.sim.runners.node.NodeView` folds the active faults for its
node, so building it per job and per question made a diagnose run pay rounds × nodes folds; a
view depends only on the twin's faults and the start time, so one per node is enough until
either changes.
"""

from __future__ import annotations

from collections.abc import Iterable

from glimmer.sim.faults import Fault
from glimmer.sim.runners.node import NodeView, view
from glimmer.sim.twin import FleetSim


class NodeViews:
    """Node views of ``twin`` by (start time, name); dropped whole when the twin's fault set is
    replaced, so a view never outlives the faults it folded."""

    def __init__(self, twin: FleetSim) -> None:
        self.twin = twin
        self._faults: tuple[Fault, ...] = twin.faults
        self._at: dict[float, dict[str, NodeView | None]] = {}

    def get(self, name: str, started_at: float = 0.0) -> NodeView | None:
        """The node ``name`` (hostname or key) at ``started_at``; None when the fleet has none."""
        if self.twin.faults is not self._faults:
            self._faults = self.twin.faults
            self._at.clear()
        views = self._at.setdefault(started_at, {})
        if name not in views:
            views[name] = view(self.twin, name, started_at)
        return views[name]

    def many(self, names: Iterable[str], started_at: float = 0.0) -> list[NodeView | None]:
        """:meth:`get` for each of ``names``, in order."""
        return [self.get(n, started_at) for n in names]
