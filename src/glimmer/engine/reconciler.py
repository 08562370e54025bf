"""The reconciler's entry point: one pass over one run (§2.0).

A pass reads the run and everything the backend observes fresh, decides, acts through the
backend, and says when to come back. Nothing is kept between passes except an index of the
status this engine last wrote, reused only when that very status is read back; a new engine
given only the stored run carries on where another stopped. Because a pass that stopped part-way
(a crash, a failed write) may have cordoned a node it never recorded, the first pass an engine
makes over a run, and the first after one of its passes failed, looks for such stamps.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime
from typing import Any

from glimmer.api.pinned import PlanDocument, PlanError, decode_plan
from glimmer.api.result import TestResult
from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import Backend
from glimmer.engine.book import Book, Index
from glimmer.engine.context import Pass
from glimmer.engine.execute import unrecorded_after
from glimmer.engine.keys import PLAN_ANNOTATION
from glimmer.engine.start import StartFn, mark_running, start
from glimmer.engine.step import step
from glimmer.engine.terminate import deleted_path, terminal_path, terminate
from glimmer.engine.wake import Outcome

TERMINAL_RUN_PHASES = frozenset({Phase.PASSED, Phase.FAILED, Phase.ERROR, Phase.CANCELLED})
EMPTY_PLAN = PlanDocument(targets=[], profile_entries=[], tests=[])
_PLAN_CACHE_SIZE = 16


def _default_start() -> StartFn:
    from glimmer.plan.start import start_run

    return start_run


class Engine:
    """Reconciles runs against one backend."""

    def __init__(self, backend: Backend, start_fn: StartFn | None = None) -> None:
        self.backend = backend
        self._start = start_fn or _default_start()
        self._plans: OrderedDict[str, PlanDocument] = OrderedDict()
        self._index: dict[str, tuple[list[TestResult], Index]] = {}
        self._quiet: dict[str, dict[tuple[str, str], tuple[Any, Any, datetime]]] = {}
        self._audited: set[str] = set()  # runs whose stamps this engine has accounted for
        self._unrecorded: dict[str, set[str]] = {}  # see execute._seed_busy
        self.passes = 0

    def _plan(self, value: str) -> PlanDocument:
        plan = self._plans.get(value)
        if plan is None:
            plan = decode_plan(value)
            self._plans[value] = plan
            if len(self._plans) > _PLAN_CACHE_SIZE:
                self._plans.popitem(last=False)
        return plan

    def _remember(self, run: BurnInRun, book: Book) -> None:
        results = run.status.results if run.status else None
        if results is not None:
            self._index[run.metadata.uid or ""] = (results, book.index)

    def _pass(self, run: BurnInRun, plan: PlanDocument) -> Pass:
        status = run.status or BurnInRunStatus()
        cached = self._index.get(run.metadata.uid or "")
        index = cached[1] if cached is not None and cached[0] is status.results else None
        ctx = Pass(
            backend=self.backend,
            run=run,
            plan=plan,
            now=self.backend.now(),
            book=Book(status, index),
            executions=self.backend.executions(
                run.metadata.namespace or "default", run.name, run.metadata.uid or ""
            ),
            on_written=self._remember,
            quiet=self._quiet.setdefault(run.metadata.uid or "", {}),
        )
        ctx.cordoned = set(status.cordoned_nodes or ())
        return ctx

    def reconcile(self, namespace: str, name: str) -> Outcome:
        """One pass over the run ``namespace/name``."""
        self.passes += 1
        run = self.backend.get_run(namespace, name)
        if run is None:
            return Outcome(None)
        uid = run.metadata.uid or ""
        try:
            return self._reconcile(run)
        except BaseException:
            self._audited.discard(uid)  # whatever it cordoned may not have been recorded
            self._unrecorded.pop(uid, None)  # nor what it created
            raise

    def _reconcile(self, run: BurnInRun) -> Outcome:
        if run.metadata.deletion_timestamp is not None:
            return deleted_path(self._pass(run, EMPTY_PLAN))
        phase = run.status.phase if run.status else Phase.PENDING
        if phase in TERMINAL_RUN_PHASES:
            return terminal_path(self._pass(run, self._plan_or_empty(run)))
        value = (run.metadata.annotations or {}).get(PLAN_ANNOTATION)
        if value is None:
            return start(self._pass(run, EMPTY_PLAN), self._start)
        try:
            plan = self._plan(value)
        except PlanError as e:
            ctx = self._pass(run, EMPTY_PLAN)
            ctx.book.put(
                TestResult(
                    name="resolve", kind="", phase=Phase.ERROR, finished_at=ctx.now, message=str(e)
                )
            )
            return terminate(ctx, Phase.ERROR)
        if phase is Phase.PENDING:
            return mark_running(self._pass(run, plan))
        ctx = self._pass(run, plan)
        uid = run.metadata.uid or ""
        ctx.audit_stamps = uid not in self._audited
        self._audited.add(uid)
        ctx.unrecorded = self._unrecorded.pop(uid, None)
        outcome = step(ctx)
        if ctx.unrecorded is not None:
            self._unrecorded[uid] = unrecorded_after(ctx)
        return outcome

    def _plan_or_empty(self, run: BurnInRun) -> PlanDocument:
        value = (run.metadata.annotations or {}).get(PLAN_ANNOTATION)
        if value is None:
            return EMPTY_PLAN
        try:
            return self._plan(value)
        except PlanError:
            return EMPTY_PLAN
