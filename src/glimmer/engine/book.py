"""The working copy of a run's results for one pass, indexed so a write costs the change.

A pass never mutates the run it read: the first change of a pass copies the result list (a
C-level copy of references; the stored status keeps its own), and results are replaced whole (a
:class:`TestResult` is treated as immutable). The index — where each result sits, which results
are open (they hold their nodes), which nodes each test has settled, the four counters — is
derived from the results alone and updated in place, change by change: it belongs to the engine
(:mod:`.memory`), never to a stored status. Its ``generation`` counts the changes, so an engine
reuses the index only when it reads back the very version of the run it wrote *and* the index
has not moved since (a pass that changed a result and then failed, or never wrote, leaves a
generation the memory does not know); otherwise the index is rebuilt from the results, so a
fresh engine given only the run object reaches the same decisions.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from glimmer.api.result import TestResult
from glimmer.api.run import BurnInRunStatus
from glimmer.contract.vocab import TERMINAL_PHASES, Phase
from glimmer.engine.names import result_key
from glimmer.verdict import ResultView, count_results
from glimmer.verdict.run_phase import Counters

Key = tuple[str, str]  # (result name, first node)


def key_of(result: TestResult) -> Key:
    return (result.name, result_key(result.nodes))


def is_terminal(result: TestResult) -> bool:
    return result.phase in TERMINAL_PHASES


def _counted(result: TestResult) -> Counters:
    return count_results([ResultView(kind=result.kind, phase=result.phase)])


@dataclass
class Index:
    """Everything a pass looks up about the results, kept in step with the list."""

    pos: dict[Key, int] = field(default_factory=dict)
    open: dict[Key, tuple[str, ...]] = field(default_factory=dict)
    settled: dict[str, set[str]] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    counts: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    # How many open results hold each node: the holding set kept as the results change, so a
    # pass never walks every open result to learn which nodes are held.
    holding: dict[str, int] = field(default_factory=dict)
    generation: int = 0  # changes made since the index was built

    def add(self, result: TestResult, sign: int) -> None:
        """Account ``result`` in (sign=1) or out (sign=-1) of the derived parts."""
        key = key_of(result)
        c = _counted(result)
        for i, n in enumerate((c.passed, c.failed, c.errored, c.skipped)):
            self.counts[i] += sign * n
        if result.phase is Phase.FAILED:
            self.failed[result.name] = self.failed.get(result.name, 0) + sign
        if is_terminal(result):
            nodes = self.settled.setdefault(result.name, set())
            if sign > 0:
                nodes.add(key[1])
            else:
                nodes.discard(key[1])
        elif sign > 0:
            nodes_held = self.open[key] = tuple(result.nodes or ())
            for node in dict.fromkeys(nodes_held):
                self.holding[node] = self.holding.get(node, 0) + 1
        else:
            for node in dict.fromkeys(self.open.pop(key, ())):
                left = self.holding.get(node, 0) - 1
                if left > 0:
                    self.holding[node] = left
                else:
                    self.holding.pop(node, None)

    @classmethod
    def build(cls, results: list[TestResult]) -> Index:
        index = cls()
        for i, result in enumerate(results):
            index.pos[key_of(result)] = i
            index.add(result, 1)
        return index


class Book:
    """The results of one pass: look up, replace, append; then a new status to write."""

    def __init__(self, status: BurnInRunStatus, index: Index | None = None) -> None:
        self.base = status
        # The list may be shared with the stored status: the first change of a pass copies it.
        # The index is the engine's own and is changed in place.
        self.results: list[TestResult] = status.results or []
        self.index = index if index is not None else Index.build(self.results)
        self._shared = True
        self.dirty = False
        self.changed: set[Key] = set()  # identities this book replaced or added

    def _own(self) -> None:
        if self._shared:
            self.results = list(self.results)
            self._shared = False

    def get(self, name: str, node: str) -> TestResult | None:
        pos = self.index.pos.get((name, node))
        return None if pos is None else self.results[pos]

    def put(self, result: TestResult) -> TestResult:
        """Replace the result of the same identity, or append it."""
        self._own()
        key = key_of(result)
        pos = self.index.pos.get(key)
        if pos is None:
            self.index.pos[key] = len(self.results)
            self.results.append(result)
        else:
            self.index.add(self.results[pos], -1)
            self.results[pos] = result
        self.index.add(result, 1)
        self.index.generation += 1
        self.changed.add(key)
        self.dirty = True
        return result

    def holding_nodes(self) -> Collection[str]:
        """Every node of every open result: a node stays held between segments, repeats and
        retries, not only while an execution is live. (A live view: it follows the book.)"""
        return self.index.holding.keys()

    def open_results(self) -> list[TestResult]:
        return [self.results[self.index.pos[k]] for k in self.index.open]

    def settled_nodes(self, test: str) -> set[str]:
        return self.index.settled.get(test, set())

    def has_failed(self, test: str) -> bool:
        return self.index.failed.get(test, 0) > 0

    def counters(self) -> dict[str, int]:
        passed, failed, errored, skipped = self.index.counts
        return {"passed": passed, "failed": failed, "errored": errored, "skipped": skipped}

    def status(self, **changes: object) -> BurnInRunStatus:
        """A new status: the base with these results, counters and ``changes``. The list is
        shared with it from now on (the next change copies it)."""
        update: dict[str, object] = {"results": self.results or None, **self.counters()}
        update.update(changes)
        self._shared = True
        self.dirty = False
        self.base = self.base.model_copy(update=update)
        return self.base
