"""The run's live executions as a pass sees them, at the cost of what changed.

A substrate may say which of a run's executions changed since a mark it handed out
(:class:`~glimmer.engine.backend.ExecutionChanges`: the simulator does). An engine that has
such a mark, and whose memory of the run holds (the run read back is the version it wrote),
keeps the live executions and the nodes they load from one pass to the next, and re-reads only
the executions that changed, the ones it created and the ones it deleted: a pass then costs
what changed, not every execution in flight. Without a mark (a substrate that offers none, a
fresh engine, a run written by someone else, a pass that failed) the pass reads every live
execution, as it always could.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from glimmer.engine.backend import Execution, ExecutionSet


def unit_nodes(execution: Execution) -> tuple[str, ...]:
    spec = execution.spec
    return spec.unit_nodes or (spec.node,)


@dataclass
class LiveWatch:
    """One run's live executions by name, the nodes they load (counted), and the substrate's
    mark they are current to. ``mark`` None: nothing is known, read everything."""

    mark: int | None = None
    live: dict[str, Execution] = field(default_factory=dict)
    nodes: dict[str, int] = field(default_factory=dict)
    # Executions this engine created or deleted since the mark: re-read at the next pass
    # whether or not the substrate reports its own engine's changes.
    touched: set[str] = field(default_factory=set)
    # The nodes of the executions the last refresh found changed (the old reading and the new):
    # the only nodes whose count in ``nodes`` that refresh can have moved.
    changed_nodes: set[str] = field(default_factory=set)

    def clear(self) -> None:
        self.mark = None
        self.live.clear()
        self.nodes.clear()
        self.touched.clear()
        self.changed_nodes.clear()

    def _add(self, execution: Execution) -> None:
        self.live[execution.name] = execution
        for node in dict.fromkeys(unit_nodes(execution)):
            self.nodes[node] = self.nodes.get(node, 0) + 1

    def _drop(self, name: str) -> None:
        old = self.live.pop(name, None)
        if old is None:
            return
        for node in dict.fromkeys(unit_nodes(old)):
            left = self.nodes.get(node, 0) - 1
            if left > 0:
                self.nodes[node] = left
            else:
                self.nodes.pop(node, None)

    def reset(self, mark: int, live: Iterable[Execution]) -> None:
        self.clear()
        self.mark = mark
        for execution in live:
            self._add(execution)

    def refresh(self, mark: int, names: Iterable[str], executions: ExecutionSet) -> set[str]:
        """Re-read ``names`` (and what this engine touched); returns every name re-read."""
        changed = set(names) | self.touched
        self.touched.clear()
        self.mark = mark
        moved = self.changed_nodes = set()
        for name in changed:
            current = executions.get(name)
            old = self.live.get(name)
            if current is not None and current is old:
                continue
            if old is not None:
                moved.update(unit_nodes(old))
                self._drop(name)
            if current is not None and current.live:
                moved.update(unit_nodes(current))
                self._add(current)
        return changed

    def touch(self, names: Collection[str]) -> None:
        self.touched.update(names)
