"""Units asleep: Node units a pass need not visit, and what wakes them.

A unit found quiet twice running (:mod:`.node_unit`: the same result, the same execution, before
its overdue instant and next checkpoint) is put to sleep: no pass visits it until its execution
changes, its result changes, or its wake time comes (a heap), so a pass costs the units that
changed, not every unit in flight. What a sleeping unit would have told the pass (it is in
flight; its execution has or has not started) is kept per test, so the pass asks for the same
wake-up as one that visited every unit.

The sleepers are the engine's (kept with the run's memory) and are dropped whenever the engine
cannot vouch for them: a fresh engine, a run read back at a version it did not write, a pass
that failed. A pass without them simply visits every unit in flight.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from glimmer.engine.backend import Execution

Key = tuple[str, str]  # (test, node): a Node unit's result identity

# Stale heap entries (units woken early) beyond this many per sleeper make the heap be rebuilt.
HEAP_SLACK = 4


@dataclass(frozen=True)
class Sleeper:
    """One unit asleep: the execution it was left with, and until when nothing is due."""

    execution: Execution
    until: datetime

    @property
    def waiting(self) -> bool:
        return not self.execution.started


@dataclass
class Sleepers:
    """Every unit asleep in one run, by unit, by test and by execution, with a wake heap."""

    units: dict[Key, Sleeper] = field(default_factory=dict)
    by_test: dict[str, set[str]] = field(default_factory=dict)
    waiting: dict[str, int] = field(default_factory=dict)
    by_execution: dict[str, Key] = field(default_factory=dict)
    heap: list[tuple[datetime, int, Key]] = field(default_factory=list)
    seq: int = 0

    def __len__(self) -> int:
        return len(self.units)

    def sleep(self, key: Key, execution: Execution, until: datetime) -> None:
        self.wake(key)
        sleeper = Sleeper(execution, until)
        self.units[key] = sleeper
        self.by_test.setdefault(key[0], set()).add(key[1])
        if sleeper.waiting:
            self.waiting[key[0]] = self.waiting.get(key[0], 0) + 1
        self.by_execution[execution.name] = key
        self.seq += 1
        heapq.heappush(self.heap, (until, self.seq, key))
        if len(self.heap) > HEAP_SLACK * len(self.units) + 64:
            self._rebuild()

    def wake(self, key: Key) -> None:
        sleeper = self.units.pop(key, None)
        if sleeper is None:
            return
        test, node = key
        nodes = self.by_test.get(test)
        if nodes is not None:
            nodes.discard(node)
            if not nodes:
                del self.by_test[test]
        if sleeper.waiting:
            left = self.waiting.get(test, 0) - 1
            if left > 0:
                self.waiting[test] = left
            else:
                self.waiting.pop(test, None)
        self.by_execution.pop(sleeper.execution.name, None)

    def wake_all(self, keys: Iterable[Key]) -> None:
        for key in keys:
            self.wake(key)

    def wake_due(self, now: datetime) -> None:
        """Wake every unit whose wake time has come."""
        heap = self.heap
        while heap and heap[0][0] <= now:
            _, _, key = heapq.heappop(heap)
            sleeper = self.units.get(key)
            if sleeper is not None and sleeper.until <= now:
                self.wake(key)

    def executions(self) -> Collection[str]:
        """The names of the executions sleeping units were left with."""
        return self.by_execution.keys()

    def wake_execution(self, name: str) -> None:
        key = self.by_execution.get(name)
        if key is not None:
            self.wake(key)

    def of_test(self, test: str) -> Collection[str]:
        """The nodes of ``test`` whose units sleep."""
        return self.by_test.get(test, ())

    def waiting_in(self, test: str) -> bool:
        """Whether a sleeping unit of ``test`` waits for its execution to start."""
        return self.waiting.get(test, 0) > 0

    def clear(self) -> None:
        self.units.clear()
        self.by_test.clear()
        self.waiting.clear()
        self.by_execution.clear()
        self.heap.clear()

    def _rebuild(self) -> None:
        self.heap = [(s.until, i, k) for i, (k, s) in enumerate(self.units.items())]
        heapq.heapify(self.heap)
