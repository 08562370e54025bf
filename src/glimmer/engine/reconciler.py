"""The reconciler's entry point: one pass over one run (§2.0).

A pass reads the run and everything the backend observes fresh, decides, acts through the
backend, and says when to come back. What the engine keeps between passes (:mod:`.memory`) is
only ever a saving: a new engine given only the stored run carries on where another stopped.
Because a pass that stopped part-way (a crash, a failed write) may have cordoned a node it never
recorded, the first pass an engine makes over a run, and the first after one of its passes
failed, looks for such stamps.
"""

from __future__ import annotations

from glimmer.api.pinned import PlanDocument, PlanError, decode_plan
from glimmer.api.result import TestResult
from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import Backend
from glimmer.engine.book import Book
from glimmer.engine.context import Pass
from glimmer.engine.execute import recheck_after, unrecorded_after
from glimmer.engine.keys import PLAN_ANNOTATION
from glimmer.engine.memory import Memory, RunMemory
from glimmer.engine.start import StartFn, mark_running, start
from glimmer.engine.step import step
from glimmer.engine.terminate import deleted_path, terminal_path, terminate
from glimmer.engine.wake import Outcome

TERMINAL_RUN_PHASES = frozenset({Phase.PASSED, Phase.FAILED, Phase.ERROR, Phase.CANCELLED})


def empty_plan() -> PlanDocument:
    """The plan of a run that has none (not pinned yet, unreadable, being deleted): made fresh
    each time, since a model held in a module global could be changed by any holder."""
    return PlanDocument(targets=[], profile_entries=[], tests=[])


def _default_start() -> StartFn:
    from glimmer.plan.start import start_run

    return start_run


class Engine:
    """Reconciles runs against one backend."""

    def __init__(self, backend: Backend, start_fn: StartFn | None = None) -> None:
        self.backend = backend
        self._start = start_fn or _default_start()
        self.memory = Memory()
        self.passes = 0

    def _pass(self, run: BurnInRun, plan: PlanDocument, memory: RunMemory | None = None) -> Pass:
        """A pass over ``run``; without ``memory`` it remembers nothing (terminal, deleted)."""
        status = run.status or BurnInRunStatus()
        memory = memory or RunMemory(run.metadata.uid or "")
        index = memory.index_for(run)
        ctx = Pass(
            backend=self.backend,
            run=run,
            plan=plan,
            now=self.backend.now(),
            book=Book(status, index),
            executions=self.backend.executions(
                run.metadata.namespace or "default", run.name, run.metadata.uid or ""
            ),
            memory=memory,
            reused=index is not None,
        )
        ctx.cordoned = memory.cordoned_for(status.cordoned_nodes)
        return ctx

    def reconcile(self, namespace: str, name: str) -> Outcome:
        """One pass over the run ``namespace/name``."""
        self.passes += 1
        run = self.backend.get_run(namespace, name)
        if run is None:
            self.memory.forget(namespace, name)
            return Outcome(None)
        done = run.metadata.deletion_timestamp is not None or _terminal(run)
        if done:
            self.memory.forget(namespace, name)
            return self._finish(run)
        memory = self.memory.of(run)
        try:
            outcome, ctx = self._reconcile(run, memory)
        except BaseException:
            memory.failed()  # whatever it cordoned or created may not have been recorded
            raise
        if _terminal(ctx.run) or ctx.run.metadata.deletion_timestamp is not None:
            self.memory.forget(namespace, name)  # the run needs nothing remembered any more
        return outcome

    def _finish(self, run: BurnInRun) -> Outcome:
        """The deleted and terminal paths: nothing of them is remembered."""
        if run.metadata.deletion_timestamp is not None:
            # The plan says which nodes the run may have stamped (an unreadable one: any).
            return deleted_path(self._pass(run, _plan_or_empty(run)))
        return terminal_path(self._pass(run, _plan_or_empty(run)))

    def _plan(self, memory: RunMemory, value: str) -> PlanDocument:
        if memory.plan is None or memory.plan_value != value:
            memory.plan = decode_plan(value)
            memory.plan_value, memory.units = value, None
        return memory.plan

    def _reconcile(self, run: BurnInRun, memory: RunMemory) -> tuple[Outcome, Pass]:
        phase = run.status.phase if run.status else Phase.PENDING
        value = (run.metadata.annotations or {}).get(PLAN_ANNOTATION)
        if value is None:
            ctx = self._pass(run, empty_plan(), memory)
            return start(ctx, self._start, self.memory.node_infos, self.memory.rivals), ctx
        try:
            plan = self._plan(memory, value)
        except PlanError as e:
            ctx = self._pass(run, empty_plan(), memory)
            ctx.book.put(
                TestResult(
                    name="resolve", kind="", phase=Phase.ERROR, finished_at=ctx.now, message=str(e)
                )
            )
            return terminate(ctx, Phase.ERROR), ctx
        ctx = self._pass(run, plan, memory)
        if phase is Phase.PENDING:
            return mark_running(ctx), ctx
        ctx.audit_stamps = not memory.audited
        memory.audited = True
        ctx.unrecorded, memory.unrecorded = memory.unrecorded, None
        outcome = step(ctx)
        if ctx.unrecorded is not None:
            memory.unrecorded = unrecorded_after(ctx)
        if ctx.seeded and memory.unrecorded is not None:
            memory.busy, memory.busy_recheck = ctx.busy, recheck_after(ctx)
        else:
            memory.busy = memory.busy_recheck = None
        memory.sleepers.wake_all(ctx.book.changed)  # a unit whose result changed is visited
        memory.watch.touch(ctx.created)
        return outcome, ctx


def _terminal(run: BurnInRun) -> bool:
    return run.status is not None and run.status.phase in TERMINAL_RUN_PHASES


def _plan_or_empty(run: BurnInRun) -> PlanDocument:
    value = (run.metadata.annotations or {}).get(PLAN_ANNOTATION)
    if value is None:
        return empty_plan()
    try:
        return decode_plan(value)
    except PlanError:
        return empty_plan()
