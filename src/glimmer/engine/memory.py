"""What one engine remembers between its own passes, and when it forgets.

A pass needs nothing from an earlier one: a fresh engine given only the stored run reaches the
same decisions. What an engine keeps is a saving, never a source of truth, and it lives here,
on the engine, not in module globals (a module-level cache is shared by every engine in the
process and was never freed: five runs driven and deleted left entries in all four of them).

Per run (keyed by namespace and name, checked against the uid, so a run deleted and created
again under the same name starts afresh):

* the decoded plan and its units, reused while the plan annotation reads the same;
* the book index of the status this engine last wrote, reused only when the run read back
  carries the resourceVersion that write returned and the index is at the generation it had
  then (:mod:`.book` changes it in place). A substrate that deserialises every read hands back
  a new object each time, so object identity never matched there; the version does;
* quiet notes (see :mod:`.node_unit`), each dropped once it no longer holds, and the units
  asleep (:mod:`.sleep`), which a pass does not visit — both only while the index is reused;
* per Node test, how far its targets have all been started (a cursor, so a pass does not walk
  the targets it started long ago) and how far they were all in hand at the last walk (so a
  pass at cap 1,024 does not step over the units it launched and has not yet seen start), and
  the live executions with the substrate's mark they
  are current to (:mod:`.watch`);
* execution names already computed (a hash each), bounded, and what an execution of a test's
  attempt is whatever its node (:class:`.podspec.Fixed`), for the plan it was built from;
* whether the run's stamps were accounted for and which executions may still be unrecorded
  (by name, and by unit: :mod:`.waiting`).

A run is forgotten when a pass leaves it in a terminal phase, when it is being deleted or is
gone, and the oldest run is dropped beyond ``MAX_RUNS``; a pass that fails drops what it may have
left half-done. Node facts for the planner are kept per node, for the nodes listed last, and
the runs of the last run listing by the nodes they hold (:mod:`.rivals`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from glimmer.api.pinned import PlanDocument, PlannedTest
from glimmer.api.result import TestAttempt, TestResult
from glimmer.api.run import BurnInRun
from glimmer.engine.backend import Execution, NodeView
from glimmer.engine.book import Index
from glimmer.engine.cordoned import Cordoned
from glimmer.engine.names import execution_name
from glimmer.engine.podspec import Fixed, FixedKey
from glimmer.engine.rivals import RunIndex
from glimmer.engine.sleep import Sleepers
from glimmer.engine.waiting import WaitingUnits
from glimmer.engine.watch import LiveWatch
from glimmer.plan.nodes import NodeInfo
from glimmer.plan.units import PlanUnits

# Runs remembered at once; beyond it the least recently reconciled is dropped. A sweep reconciles
# its runs in turn, so a bound below the runs in flight forgets every run before its next pass
# (512 pairs under a bound of 256 cost half as much again: every pass re-audited its stamps).
MAX_RUNS = 4096
MAX_NAMES = 1 << 14  # execution names remembered per run before the memo starts over

RunKey = tuple[str, str]  # (namespace, name)
NameKey = tuple[int, str, int, str]  # (test index, node, attempt, role)


@dataclass(frozen=True)
class Quiet:
    """A unit found with nothing to do: with this result and this execution it stays so until
    ``until`` (its overdue instant or its next checkpoint)."""

    result: TestResult | None
    execution: Execution
    until: datetime


@dataclass
class RunMemory:
    """What the engine keeps about one run between its passes."""

    uid: str
    plan_value: str | None = None
    plan: PlanDocument | None = None
    units: PlanUnits | None = None
    version: str | None = None  # resourceVersion of the status this engine last wrote
    index: Index | None = None
    generation: int = 0  # the index's generation at that write
    cordoned: Cordoned | None = None  # the cordons as that write listed them
    quiet: dict[tuple[str, str], Quiet] = field(default_factory=dict)
    sleepers: Sleepers = field(default_factory=Sleepers)
    cursor: dict[str, int] = field(default_factory=dict)  # Node test -> targets all started
    # Node test -> how far its targets were all in hand (a result, or busy) when the last pass
    # walked them; trusted only beside the kept busy set (see execute._kept_busy).
    launched: dict[str, int] = field(default_factory=dict)
    watch: LiveWatch = field(default_factory=LiveWatch)  # the live executions, see .watch
    names: dict[NameKey, str] = field(default_factory=dict)
    # The node-independent parts of the executions built for ``fixed_plan``
    # (:func:`.podspec.build_execution`): one per test and attempt for a Node test's every node.
    fixed: dict[FixedKey, Fixed] = field(default_factory=dict)
    fixed_plan: PlanDocument | None = None
    # A fresh result of each test and a fresh attempt as validated once, for the results and
    # attempts opened from them by copy (:func:`.results.new_result`): validating one per unit
    # was two per cent of a fleet's run.
    opened: dict[str, tuple[PlannedTest, TestResult]] = field(default_factory=dict)
    attempt: TestAttempt | None = None
    audited: bool = False  # the run's stamps were accounted for by this engine
    unrecorded: set[str] | None = None  # see execute._seed_busy
    waiting: WaitingUnits | None = None  # the unrecorded by unit (:mod:`.waiting`)
    # The last pass released every held node it had no work on (see execute.release_idle):
    # the next one need look only at the nodes its own changes could have made idle.
    idle_released: bool = False
    touched: set[str] | None = None  # the nodes that pass touched (None: not known)
    # The busy set the last pass ended with, and the nodes whose being busy may have changed
    # since (see execute.kept_busy); None: the next pass builds it afresh.
    busy: set[str] | None = None
    busy_recheck: set[str] | None = None

    def index_for(self, run: BurnInRun) -> Index | None:
        """The index of the status as this engine wrote it, when ``run`` is that status and the
        index has not changed since. Otherwise what depended on it (sleeping units, cursors)
        is dropped too: the pass that follows rebuilds and visits."""
        version = run.metadata.resource_version
        index = self.index
        if version is None or version != self.version or index is None:
            self._unsure()
            return None
        if index.generation != self.generation:
            self._unsure()
            return None
        return index

    def _unsure(self) -> None:
        self.index = None
        self.cordoned = None
        self.sleepers.clear()
        self.cursor.clear()
        self.launched.clear()
        self.watch.clear()
        self.idle_released = False
        self.touched = None
        self.busy = self.busy_recheck = None

    def wrote(self, run: BurnInRun, index: Index, cordoned: Cordoned | None = None) -> None:
        self.version = run.metadata.resource_version
        self.index = index if self.version is not None else None
        self.generation = index.generation
        self.cordoned = cordoned if self.version is not None else None

    def cordoned_for(self, listed: list[str] | None) -> Cordoned:
        """The set of cordons a pass starts from: the one this engine wrote, while the index
        is reused (call after :meth:`index_for`); else made from the status's list."""
        kept = self.cordoned
        if self.index is not None and kept is not None and len(kept) == len(listed or ()):
            return kept
        return Cordoned(listed or ())

    def execution_name(
        self, run: str, uid: str, test_index: int, node: str, attempt: int, role: str
    ) -> str:
        """:func:`.names.execution_name`, remembered: a pass asks again for every unit in
        flight. The memory is one run's, so run and uid are the same on every call."""
        key = (test_index, node, attempt, role)
        name = self.names.get(key)
        if name is None:
            if len(self.names) >= MAX_NAMES:
                self.names.clear()
            name = self.names[key] = execution_name(run, uid, test_index, node, attempt, role)
        return name

    def failed(self) -> None:
        """A pass failed part-way: what it cordoned or created may not have been recorded."""
        self.audited = False
        self.unrecorded = None
        self.waiting = None
        self.quiet.clear()
        self.version = None  # the index may hold changes the status never got
        self._unsure()


class Memory:
    """The engine's memory of the runs it reconciles, bounded and forgotten with the run."""

    def __init__(self, max_runs: int = MAX_RUNS) -> None:
        self.max_runs = max_runs
        self._runs: OrderedDict[RunKey, RunMemory] = OrderedDict()
        self._nodes: dict[str, tuple[NodeView, NodeInfo]] = {}
        self._rivals = RunIndex()

    @staticmethod
    def key(run: BurnInRun) -> RunKey:
        return (run.metadata.namespace or "default", run.name)

    def of(self, run: BurnInRun) -> RunMemory:
        """The memory of ``run``, made fresh for a run not seen (or seen under another uid)."""
        key, uid = self.key(run), run.metadata.uid or ""
        memory = self._runs.get(key)
        if memory is None or memory.uid != uid:
            memory = RunMemory(uid)
            self._runs[key] = memory
            while len(self._runs) > self.max_runs:
                self._runs.popitem(last=False)
        else:
            self._runs.move_to_end(key)
        return memory

    def forget(self, namespace: str, name: str) -> None:
        self._runs.pop((namespace, name), None)

    def __len__(self) -> int:
        """How many runs are remembered."""
        return len(self._runs)

    def rivals(self, runs: Sequence[BurnInRun], targets: Sequence[str]) -> list[BurnInRun]:
        """The runs of a fresh listing that could share one of ``targets`` (:mod:`.rivals`);
        only the last listing is indexed."""
        return self._rivals.rivals(runs, targets)

    def node_infos(self, nodes: list[NodeView]) -> list[NodeInfo]:
        """The planner's view of ``nodes``, converted once per node as long as it reads the
        same (a sweep of many runs starts each against the same fleet). Only the nodes of this
        listing are kept, so a node that left the fleet is forgotten with the listing."""
        kept: dict[str, tuple[NodeView, NodeInfo]] = {}
        out: list[NodeInfo] = []
        for node in nodes:
            cached = self._nodes.get(node.name)
            if cached is not None and (cached[0] is node or cached[0] == node):
                info = cached[1]
            else:
                info = NodeInfo(node.name, node.labels, node.unschedulable, node.annotations)
            kept[node.name] = (node, info)
            out.append(info)
        self._nodes = kept
        return out
