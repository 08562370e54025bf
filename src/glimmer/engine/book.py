"""The working copy of a run's results for one pass, indexed so a pass costs what it does.

A pass never mutates the run it read: it copies the result list, replaces results whole (a
:class:`TestResult` is treated as immutable), and hands a new status to the backend. The index —
where each result sits, which results are open (they hold their nodes), which nodes each test
has settled, the four counters — is derived from the results alone; an engine may keep the
index of the status it last wrote and reuse it when it reads back that very version of the run
(:mod:`.memory`), and rebuilds it otherwise, so a fresh engine given only the run object reaches
the same decisions.
"""

from __future__ import annotations

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

    def copy(self) -> Index:
        return Index(
            pos=dict(self.pos),
            open=dict(self.open),
            settled={k: set(v) for k, v in self.settled.items()},
            failed=dict(self.failed),
            counts=list(self.counts),
        )

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
            self.open[key] = tuple(result.nodes or ())
        else:
            self.open.pop(key, None)

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
        # Copy-on-write: the list and index may be shared with the stored status and the
        # engine's cache; the first change of a pass copies them.
        self.results: list[TestResult] = status.results or []
        self.index = index if index is not None else Index.build(self.results)
        self._shared = True
        self.dirty = False

    def _own(self) -> None:
        if self._shared:
            self.results = list(self.results)
            self.index = self.index.copy()
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
        self.dirty = True
        return result

    def holding_nodes(self) -> set[str]:
        """Every node of every open result: a node stays held between segments, repeats and
        retries, not only while an execution is live."""
        return {node for nodes in self.index.open.values() for node in nodes}

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
        """A new status: the base with these results, counters and ``changes``. The list and
        index are shared with it from now on (the next change copies them)."""
        update: dict[str, object] = {"results": self.results or None, **self.counters()}
        update.update(changes)
        self._shared = True
        self.dirty = False
        self.base = self.base.model_copy(update=update)
        return self.base
