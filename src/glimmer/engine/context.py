"""One reconcile pass: what it read, what it decided so far, and what it owes after the write.

Nothing here outlives the pass except ``memory``, the engine's memory of this run (see
:mod:`.memory`; a throwaway one on the terminal and deleted paths, which remember nothing). The
flags say what the execution sweep found (something running, waiting for the cap, harvested);
``condemned`` executions are deleted only after the status write that records why
(kill-after-record); ``deliveries`` go out before that write (a crash redelivers under the same
key) and ``checkpoints`` after it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from glimmer.api.pinned import PlanDocument, PlannedTest
from glimmer.api.result import TestResult
from glimmer.api.run import BurnInRun
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import (
    Backend,
    Delivery,
    Execution,
    ExecutionSet,
    ExecutionSpec,
    runs_images,
)
from glimmer.engine.book import Book, is_terminal
from glimmer.engine.cordoned import Cordoned
from glimmer.engine.keys import PLAN_ANNOTATION
from glimmer.engine.memory import RunMemory
from glimmer.engine.podspec import Placement, addressed, build_execution
from glimmer.plan.slots import effective_cap
from glimmer.plan.units import PlanUnits

_PHASES = frozenset(p.value for p in Phase)


@dataclass
class Pass:
    backend: Backend
    run: BurnInRun
    plan: PlanDocument
    now: datetime
    book: Book
    executions: ExecutionSet
    launch: bool = True
    busy: set[str] = field(default_factory=set)
    # The nodes this pass added to ``busy`` by starting units on them, and those of the
    # executions still without a result: with the results it changed, the nodes whose being
    # busy the next pass must look at again (:func:`.execute.kept_busy`).
    occupied: set[str] = field(default_factory=set)
    unrecorded_nodes: set[str] = field(default_factory=set)
    # Of the executions the sweep looked at without a result, how many hold each node (a
    # harvest takes its own off), and the nodes the live executions load (None: not counted):
    # together with the open results, what keeps a node busy within the pass (:meth:`free`).
    unrecorded_holds: dict[str, int] = field(default_factory=dict)
    unrecorded_seen: set[str] = field(default_factory=set)
    loaded: Collection[str] | None = None
    seeded: bool = False  # ``busy`` was made by this pass's sweep
    cordoned: Cordoned = field(default_factory=Cordoned)
    condemned: dict[str, Execution] = field(default_factory=dict)
    deliveries: list[Delivery] = field(default_factory=list)
    checkpoints: list[Delivery] = field(default_factory=list)
    running: bool = False
    pending: bool = False
    harvested: int = 0  # executions harvested (or found lost, or overdue) by this pass
    # Of those, the ones whose slot the pass handed on itself (:meth:`free`): any other asks
    # for another pass at the same instant, which does what this one could not.
    handed_on: int = 0
    # The nodes :meth:`free` gave back since the pass last released every idle cordon
    # (``swept``): the only ones that can have become idle since, as nothing else in a pass
    # takes a node out of ``busy``.
    freed: set[str] = field(default_factory=set)
    swept: bool = False
    # The nodes the seeding took out of the busy set the last pass ended with (None: the set was
    # built afresh, :func:`.execute._kept_busy`).
    dropped: list[str] | None = None
    rendezvous: bool = False
    awaiting_start: bool = False
    checkpoint_due: bool = False
    # Set on the first pass an engine makes over a run, and after a pass that failed: look for
    # this run's stamps the status does not account for (a cordon written just before a crash).
    audit_stamps: bool = False
    # Executions that may end before their unit has a result (created, or live with none), as
    # the engine's previous pass left them; None: not known, so this pass looks at every one.
    unrecorded: set[str] | None = None
    created: set[str] = field(default_factory=set)
    created_units: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> its unit
    # The book's index is the one this engine left (the run read back is the version it wrote):
    # what the engine remembers beside it (sleeping units, cursors) can be trusted.
    reused: bool = False
    # The live executions come from the engine's watch over a change feed (:mod:`.watch`), and
    # these are the names it re-read this pass: any other live one is as the last pass saw it.
    watching: bool = False
    watching_changed: set[str] = field(default_factory=set)
    memory: RunMemory = field(default_factory=lambda: RunMemory(""))
    cap: int = field(init=False)
    cutoffs: dict[str, datetime] = field(default_factory=dict)
    in_flight_intervals: list[int] = field(default_factory=list)
    _required: tuple[PlanDocument | None, dict[str, bool]] = field(
        default=(None, {}), init=False, repr=False
    )

    @property
    def namespace(self) -> str:
        return self.run.metadata.namespace or "default"

    @property
    def uid(self) -> str:
        return self.run.metadata.uid or ""

    @cached_property
    def owner(self) -> str:
        """The cordon stamp of this run: ``<namespace>/<name>/<uid>`` (made once a pass: a
        pass's writes never change the run's identity)."""
        return f"{self.namespace}/{self.run.name}/{self.uid}"

    def __post_init__(self) -> None:
        self.cap = effective_cap(self.run.spec.max_concurrent_nodes)  # read live each pass

    @property
    def units(self) -> PlanUnits:
        """The units of the plan this pass follows (:mod:`glimmer.plan.units`), derived once
        per plan and kept with the run's memory while the plan stays the same."""
        units = self.memory.units
        if units is None or units.plan is not self.plan:
            units = self.memory.units = PlanUnits(self.plan)
        return units

    @property
    def target_order(self) -> dict[str, int]:
        """Each distinct target's position in the plan."""
        return self.units.order

    def execution_name(self, index: int, node: str, attempt: int, role: str = "") -> str:
        """The deterministic name of an execution of this run (:func:`.names.execution_name`)."""
        return self.memory.execution_name(self.run.name, self.uid, index, node, attempt, role)

    @property
    def retry_limit(self) -> int:
        """retryOnErrorLimit, read live each pass."""
        return self.run.spec.retry_on_error_limit

    def required(self, test_name: str) -> bool:
        # Asked per result: a table per plan object (a start replaces the plan mid-pass).
        plan, table = self._required
        if plan is not self.plan:
            table = {test.name: test.required for test in self.plan.tests}
            self._required = (self.plan, table)
        return table.get(test_name, True)

    def in_flight(
        self, test: PlannedTest, *, waiting: bool = False, rendezvous: bool = False
    ) -> None:
        """Note a unit of ``test`` in flight. Flags describe the state the pass leaves (not
        what it did), so a pass resumed after a crash asks to be woken exactly as the pass it
        replaces would have."""
        self.running = True
        self.awaiting_start |= waiting
        self.rendezvous |= rendezvous
        interval = test.spec.checkpoint_interval_seconds or 0
        if interval > 0:
            self.in_flight_intervals.append(interval)

    def execution(
        self, test: PlannedTest, index: int, attempt: int, where: Placement
    ) -> ExecutionSpec:
        """The execution of ``attempt`` of ``test`` at ``where`` for this run, an image
        resolved where the substrate runs images. Raises ``ImageError``."""
        memory = self.memory
        if memory.fixed_plan is not self.plan:
            # What is built once per test holds for the plan it was built from.
            memory.fixed.clear()
            memory.fixed_plan = self.plan
        return build_execution(
            self.run, test, index, attempt, where, images=runs_images(self.backend),
            memo=memory.fixed,
        )  # fmt: skip

    def occupy(self, nodes: Iterable[str]) -> None:
        """A unit starts on ``nodes``: they are busy from now on."""
        self.busy.update(nodes)
        self.occupied.update(nodes)

    def free(self, unit: tuple[str, str], nodes: Iterable[str], name: str) -> None:
        """The execution ``name`` of ``unit`` (test, unit key) was harvested on ``nodes``: if
        its result settled and nothing else holds those nodes, they stop being busy now, so the
        same pass hands the slot to the next unit, as the next pass at this instant would have
        (one status write, not two). Anything less certain leaves that to the next pass: an
        open result (its next attempt), a failure under failFast (the next pass stops), a pass
        that does not count what loads each node."""
        nodes = tuple(nodes)
        holds = self.unrecorded_holds
        if name in self.unrecorded_seen:
            self.unrecorded_seen.discard(name)
            for node in nodes:
                holds[node] = holds.get(node, 1) - 1
        result = self.book.get(*unit)
        loaded = self.loaded
        if (
            result is None
            or not is_terminal(result)
            or (result.phase is Phase.FAILED and self.plan.fail_fast)
            or loaded is None
            or not self.watching
        ):
            return
        holding = self.book.holding_nodes()
        if any(n in loaded or n in holding or holds.get(n, 0) > 0 for n in nodes):
            return
        self.busy.difference_update(nodes)
        self.freed.update(nodes)
        self.handed_on += 1

    def create(self, spec: ExecutionSpec) -> None:
        """Create an execution, and remember it until its unit has a result (it may end before
        any pass sees it run). The substrate answers the peer's or root's address here, so the
        request the engine built stays neutral until it is handed over."""
        self.backend.create_execution(addressed(spec, self.backend))
        self.created.add(spec.name)
        self.created_units[spec.name] = (
            spec.test,
            spec.unit_nodes[0] if spec.unit_nodes else spec.node,
        )

    def condemn(self, execution: Execution | None) -> None:
        if execution is not None and execution.live:
            self.condemned[execution.name] = execution

    def delivery(
        self,
        reason: str,
        key: str,
        phase: str,
        *,
        sequence: int | None = None,
        result: TestResult | None = None,
        status_changes: Mapping[str, object] | None = None,
    ) -> Delivery:
        pinned = PLAN_ANNOTATION in (self.run.metadata.annotations or {})
        return Delivery(
            reason=reason,
            namespace=self.namespace,
            run=self.run.name,
            run_uid=self.uid,
            key=key,
            phase=phase,
            sinks=tuple(self.plan.sinks or ()),
            # The pinned plan decides; before a plan is pinned (a refusal) only the spec can.
            baseline=self.plan.baseline if pinned else self.run.spec.baseline,
            at=self.now,
            sequence=sequence,
            result=result,
            view=(
                self._view(phase if reason == "RunPhaseChanged" else None, status_changes)
                if self.backend.describes_runs
                else None
            ),
        )

    def _view(
        self, entering: str | None, status_changes: Mapping[str, object] | None = None
    ) -> BurnInRun:
        """The run as an envelope sent now describes it. Results and counters come from the
        book (TestCompleted and Running go out before the status write that records them); a
        phase change shows the phase being entered, with the status fields the coming write sets
        (``status_changes``: markRunning's start time and fingerprint). The list is copied: the
        book keeps changing after this delivery was made."""
        update: dict[str, object] = {
            **(status_changes or {}),
            "results": self.book.snapshot() or None,
            **self.book.counters(),
        }
        if entering is not None and entering in _PHASES:
            update["phase"] = Phase(entering)
        return self.run.model_copy(update={"status": self.book.base.model_copy(update=update)})
