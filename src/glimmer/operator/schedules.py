"""The BurnInSchedule reconciler (specs/burnin.md §7.1): the pure scheduler of
:mod:`glimmer.schedule` on the cluster's clock, its actions applied through the API.

One reconcile reads the schedule and the runs of its namespace fresh (GET and LIST, no cache),
asks :func:`glimmer.schedule.decide.decide` what to do at the backend's ``now()``, and applies
the actions strictly in order with :func:`glimmer.schedule.actions.apply`: the cursor
(``lastScheduleTime``) is written through the status subresource, with the resourceVersion it
was read at, BEFORE the run is created, so a crash between the two loses a tick once rather
than firing it twice; a status write that lost a race (409) stops the rest and the next
reconcile starts from a fresh read. The run's name is the scheduler's deterministic one, so a
create that races another replica's collides instead of starting the tick twice.

kopf wiring (:func:`register`): a daemon per schedule sleeps until the decision's next tick
(at most :data:`IDLE_SECONDS` of the cluster clock, so an edit or a missed event is still seen)
or until a change to the schedule or to one of its runs wakes it (an owned run finishing lets a
Forbid schedule fire at its next tick; an edit re-reads the cadence). The daemon is registered
without kopf's finalizer (kopf asks for one on every daemon, for its stop protocol): a
schedule holds nothing to clean up, and deleting one must not wait for a running operator.
Handlers store nothing on the schedule; its status is the only record.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from lightkube import Client
from lightkube.generic_resource import create_namespaced_resource

from glimmer.api.meta import API_GROUP
from glimmer.api.run import BurnInRun
from glimmer.api.schedule import BurnInSchedule, BurnInScheduleStatus
from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.errors import AlreadyExists, api_call
from glimmer.backends.kubernetes.resources import RUNS, VERSION, as_dict
from glimmer.backends.kubernetes.run_store import parsed
from glimmer.backends.kubernetes.wire import for_cluster
from glimmer.engine.backend import BackendError, NotFound
from glimmer.schedule.actions import apply
from glimmer.schedule.decide import Decision, decide
from glimmer.schedule.keys import SCHEDULE_LABEL

if TYPE_CHECKING:
    import kopf

    from glimmer.operator.context import OperatorContext

log = logging.getLogger(__name__)

SCHEDULES = create_namespaced_resource(
    API_GROUP, VERSION, BurnInSchedule.KIND, BurnInSchedule.PLURAL
)
IDLE_SECONDS = 60.0  # the longest a schedule's daemon sleeps without a tick or an event
RETRY_SECONDS = 15.0  # after a failed reconcile (a 409, the API away)
DAEMON_ID = "burninschedule-ticks"


class ScheduleStore:
    """Where the scheduler's actions land on a cluster: the schedule's status subresource and
    the BurnInRuns of its namespace. Keeps the schedule as last written, so the second status
    write of a fire carries the resourceVersion the first one returned."""

    def __init__(self, backend: KubernetesBackend, schedule: BurnInSchedule) -> None:
        self.backend = backend
        self.schedule = schedule

    def write_schedule_status(self, status: BurnInScheduleStatus) -> None:
        schedule = self.schedule
        namespace = schedule.metadata.namespace or "default"
        body = for_cluster(schedule)
        body["status"] = for_cluster(status)
        with api_call(f"write the status of BurnInSchedule {namespace}/{schedule.name}"):
            stored = self.backend.client.replace(
                SCHEDULES.Status.from_dict(body), schedule.name, namespace=namespace
            )
        self.schedule = _schedule(as_dict(stored))

    def create_run(self, run: BurnInRun) -> None:
        try:
            self.backend.submit(run)
        except AlreadyExists:
            # The tick's run exists already (another replica, or a reply lost after the
            # create): the name is the tick's, so this is the same run, not a second one.
            log.info("run %s of schedule %s exists already", run.name, self.schedule.name)

    def delete_run(self, namespace: str, name: str) -> None:
        self.backend.delete_run(namespace, name)


def _schedule(data: Mapping[str, Any]) -> BurnInSchedule:
    meta = data.get("metadata") or {}
    return parsed(
        BurnInSchedule, data, f"BurnInSchedule {meta.get('namespace')}/{meta.get('name')}"
    )


def read_schedule(client: Client, namespace: str, name: str) -> BurnInSchedule | None:
    try:
        with api_call(f"get BurnInSchedule {namespace}/{name}"):
            found = as_dict(client.get(SCHEDULES, name, namespace=namespace))
    except NotFound:
        return None
    return _schedule(found)


def runs_of_namespace(client: Client, namespace: str) -> list[BurnInRun]:
    """Every run of ``namespace``, read fresh; the scheduler keeps those the schedule owns."""
    with api_call(f"list BurnInRuns of {namespace}"):
        found = [as_dict(r) for r in client.list(RUNS, namespace=namespace)]
    return [parsed(BurnInRun, r, f"BurnInRun {namespace}/{r['metadata']['name']}") for r in found]


def reconcile_schedule(
    backend: KubernetesBackend, namespace: str, name: str, now: datetime | None = None
) -> Decision | None:
    """One reconcile of ``namespace/name`` at ``now`` (default: the backend's clock); None when
    the schedule is gone. Raises the backend's errors (the caller retries)."""
    schedule = read_schedule(backend.client, namespace, name)
    if schedule is None or schedule.metadata.deletion_timestamp is not None:
        return None
    runs = runs_of_namespace(backend.client, namespace)
    decision = decide(schedule, runs, now or backend.now())
    apply(decision.actions, ScheduleStore(backend, schedule))
    return decision


class ScheduleDaemons:
    """The wake-ups of the schedule daemons of this process (all on kopf's loop)."""

    def __init__(self, context: OperatorContext) -> None:
        self.context = context
        self._wakes: dict[tuple[str, str], asyncio.Event] = {}

    def wake(self, namespace: str, name: str) -> None:
        event = self._wakes.get((namespace, name))
        if event is not None:
            event.set()

    def _pass(self, namespace: str, name: str) -> float:
        """One reconcile; the cluster seconds until the next is owed."""
        try:
            decision = reconcile_schedule(self.context.backend, namespace, name)
        except BackendError as e:
            log.warning("BurnInSchedule %s/%s: %s; retrying", namespace, name, e)
            return RETRY_SECONDS
        if decision is None or decision.requeue_after is None:
            return IDLE_SECONDS
        return min(decision.requeue_after, IDLE_SECONDS)

    async def drive(self, namespace: str, name: str, stopped: kopf.DaemonStopped) -> None:
        wake = self._wakes.setdefault((namespace, name), asyncio.Event())
        try:
            while not stopped:
                wake.clear()
                wait = await asyncio.to_thread(self._pass, namespace, name)
                host = self.context.clock.host_seconds(wait)
                # asyncio.wait, not wait_for: on 3.11 a wait_for whose event fires as the task
                # is cancelled returns normally and loses the cancellation.
                woken = asyncio.ensure_future(wake.wait())
                try:
                    await asyncio.wait({woken}, timeout=host)
                finally:
                    woken.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await woken
        finally:
            self._wakes.pop((namespace, name), None)


def register(registry: kopf.OperatorRegistry, context: OperatorContext) -> None:
    """The schedule daemon and the events that wake it, on ``registry``."""
    import kopf

    daemons = ScheduleDaemons(context)

    @kopf.daemon(API_GROUP, VERSION, BurnInSchedule.PLURAL, id=DAEMON_ID, registry=registry)
    async def ticks(
        name: str, namespace: str | None, stopped: kopf.DaemonStopped, **_: Any
    ) -> None:
        await daemons.drive(namespace or "default", name, stopped)

    from glimmer.operator.daemons import without_kopf_finalizer

    without_kopf_finalizer(registry, DAEMON_ID)

    @kopf.on.event(
        API_GROUP, VERSION, BurnInSchedule.PLURAL, id="burninschedule-changed", registry=registry
    )
    async def schedule_changed(name: str, namespace: str | None, **_: Any) -> None:
        daemons.wake(namespace or "default", name)

    @kopf.on.event(
        API_GROUP,
        VERSION,
        BurnInRun.PLURAL,
        id="burninschedule-run-changed",
        labels={SCHEDULE_LABEL: kopf.PRESENT},
        registry=registry,
    )
    async def run_changed(labels: kopf.Labels, namespace: str | None, **_: Any) -> None:
        daemons.wake(namespace or "default", str(labels.get(SCHEDULE_LABEL, "")))
