"""A run's results for one pass, indexed so that a change, and the write of it, cost the change.

The result list a pass reads is the one the stored status holds, and it is never copied: a pass
keeps its changes beside it (replacements by position, appends) until it makes the status to
write; then they go into that list in place, and a failed write puts the replaced results back
(:meth:`Book.rollback`). So between writes the stored list is exactly the last status written —
the checkpoint a fresh engine resumes from — and a write costs what changed, not every result
(copying the list per write made a 16,384-node run quadratic: half a minute of memcpy). Results
are replaced whole (a :class:`TestResult` is treated as immutable). One consequence, by design:
a run object read earlier sees the results of later writes (its list is the same list); code
that keeps a snapshot across passes copies it (:meth:`Book.snapshot`).

The index — where each result sits, which results are open (they hold their nodes), which nodes
each test has settled, the four counters — is derived from the results alone and updated in
place, change by change: it belongs to the engine (:mod:`.memory`), never to a stored status.
Its ``generation`` counts the changes, so an engine reuses the index only when it reads back the
very version of the run it wrote *and* the index has not moved since (a pass that changed a
result and then failed, or never wrote, leaves a generation the memory does not know); otherwise
the index is rebuilt from the results, so a fresh engine given only the run object reaches the
same decisions.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field

from glimmer.api.result import TestResult
from glimmer.api.run import BurnInRunStatus
from glimmer.api.shared_fields import share_fields_set
from glimmer.contract.vocab import TERMINAL_PHASES, Phase
from glimmer.engine.copied import copied
from glimmer.engine.names import result_key
from glimmer.verdict import ResultView, count_results
from glimmer.verdict.run_phase import Counters

Key = tuple[str, str]  # (result name, first node)


def key_of(result: TestResult) -> Key:
    return (result.name, result_key(result.nodes))


def is_terminal(result: TestResult) -> bool:
    return result.phase in TERMINAL_PHASES


def _counted(kind: str, phase: Phase) -> tuple[int, int, int, int]:
    c: Counters = count_results([ResultView(kind=kind, phase=phase)])
    return (c.passed, c.failed, c.errored, c.skipped)


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
    # What the counters make of each (kind, phase): asked twice per change, decided once (a
    # view and a count per change were a per cent of a fleet's run).
    counted: dict[tuple[str, Phase], tuple[int, int, int, int]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def add(self, result: TestResult, sign: int) -> None:
        """Account ``result`` in (sign=1) or out (sign=-1) of the derived parts."""
        key = key_of(result)
        which = (result.kind, result.phase)
        counted = self.counted.get(which)
        if counted is None:
            counted = self.counted[which] = _counted(*which)
        if any(counted):
            counts = self.counts
            for i, n in enumerate(counted):
                counts[i] += sign * n
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
        # The stored status's own list: changed only by :meth:`status`, in place.
        self.results: list[TestResult] = status.results or []
        self.index = index if index is not None else Index.build(self.results)
        self._replaced: dict[int, TestResult] = {}  # position -> its new result, not yet in
        self._appended: list[TestResult] = []
        self._undo: tuple[list[tuple[int, TestResult]], int] | None = None
        self.dirty = False
        self.changed: set[Key] = set()  # identities this book replaced or added

    def _at(self, pos: int) -> TestResult:
        written = len(self.results)
        if pos >= written:
            return self._appended[pos - written]
        return self._replaced.get(pos, self.results[pos])

    def get(self, name: str, node: str) -> TestResult | None:
        pos = self.index.pos.get((name, node))
        return None if pos is None else self._at(pos)

    def put(self, result: TestResult) -> TestResult:
        """Replace the result of the same identity, or append it."""
        # Kept for the rest of the run: its fields sets are shared (a set per model was more
        # memory than the results' values; :mod:`glimmer.api.shared_fields`).
        share_fields_set(result)
        for attempt in result.attempts or ():
            share_fields_set(attempt)
        key = key_of(result)
        pos = self.index.pos.get(key)
        written = len(self.results)
        if pos is None:
            self.index.pos[key] = written + len(self._appended)
            self._appended.append(result)
        else:
            self.index.add(self._at(pos), -1)
            if pos >= written:
                self._appended[pos - written] = result
            else:
                self._replaced[pos] = result
        self.index.add(result, 1)
        self.index.generation += 1
        self.changed.add(key)
        self.dirty = True
        return result

    def current(self) -> Iterator[TestResult]:
        """Every result as this pass has it, in status order."""
        if self._replaced:
            replaced = self._replaced
            yield from (replaced.get(i, r) for i, r in enumerate(self.results))
        else:
            yield from self.results
        yield from self._appended

    def snapshot(self) -> list[TestResult]:
        """A list of the results as they are now, that later writes leave alone."""
        return list(self.current())

    def holding_nodes(self) -> Collection[str]:
        """Every node of every open result: a node stays held between segments, repeats and
        retries, not only while an execution is live. (A live view: it follows the book.)"""
        return self.index.holding.keys()

    def open_results(self) -> list[TestResult]:
        return [self._at(self.index.pos[k]) for k in self.index.open]

    def settled_nodes(self, test: str) -> set[str]:
        return self.index.settled.get(test, set())

    def has_failed(self, test: str) -> bool:
        return self.index.failed.get(test, 0) > 0

    def counters(self) -> dict[str, int]:
        passed, failed, errored, skipped = self.index.counts
        return {"passed": passed, "failed": failed, "errored": errored, "skipped": skipped}

    def status(self, **changes: object) -> BurnInRunStatus:
        """A new status: the base with these results, counters and ``changes``. The changes go
        into the stored list now; the caller writes the status, and calls :meth:`rollback` if
        that write fails."""
        undo = [(pos, self.results[pos]) for pos in self._replaced]
        for pos, result in self._replaced.items():
            self.results[pos] = result
        self._undo = (undo, len(self.results))
        self.results.extend(self._appended)
        self._replaced, self._appended = {}, []
        update: dict[str, object] = {"results": self.results or None, **self.counters()}
        update.update(changes)
        self.dirty = False
        self.base = copied(self.base, update)
        return self.base

    def rollback(self) -> None:
        """The write of the last :meth:`status` failed: the stored list gets back the results
        it had, and this book keeps its changes beside it again."""
        if self._undo is None:
            return
        undo, written = self._undo
        self._appended = self.results[written:]
        del self.results[written:]
        for pos, old in undo:
            self._replaced[pos] = self.results[pos]
            self.results[pos] = old
        self._undo = None
        self.dirty = True

    def written(self) -> None:
        """The last :meth:`status` was written: nothing to put back any more."""
        self._undo = None
