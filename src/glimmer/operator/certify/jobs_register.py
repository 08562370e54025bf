"""The certify Job and measurement controllers as kopf handlers (issue 17, helper E):
``register(registry, context)`` puts them on the operator's registry.

The same shape as the BurnInRun handlers (:mod:`glimmer.operator.runs`):

* **A daemon per object** (Job, GoodputMeasurement, BandwidthMeasurement): a reconcile, then
  sleep until the time it asked for, a wake-up, or kopf stopping it. The reconciles are
  synchronous API calls and run on a small thread pool of their own, never on kopf's loop; one
  object's reconciles never overlap (its daemon awaits each). A failed reconcile is logged and
  retried with the operator's doubling backoff: the status is the only checkpoint.
* **Sleep**: as long as the reconcile asked, at most :data:`SAFETY_NET`; a reconcile that
  answers None (the object finished) sleeps until an event.
* **Events only wake**: a Job's own event, its TrainJob's (label ``certify.glimmer.ai/job``),
  a measurement's, and Node events that change what a health expression sees
  (:mod:`.health_watch`), mapped to the Jobs whose pods run on the node. Pods are not watched:
  the operator's pod watch is filtered to burn-in runners (:mod:`glimmer.operator.settings`),
  and a Job's pods are read when its reconcile runs.
* **Deletion**: kopf stops a daemon once ``deletionTimestamp`` is set; the Job's event handler
  then drives the deleted path (workload deleted, finalizer held until the pods are gone).

No kopf finalizer is added (:func:`glimmer.operator.daemons.without_kopf_finalizer`): the Job
holds its own, ``certify.glimmer.ai/finalizer``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import kopf
from lightkube import ALL_NS, operators

from glimmer.backends.kubernetes.errors import api_call
from glimmer.backends.kubernetes.resources import PODS, as_dict
from glimmer.certify.platform.vocab import GROUP, JOB_LABEL
from glimmer.operator.certify.health_watch import NodeChanges, jobs_on
from glimmer.operator.certify.job_measured import measurement_name
from glimmer.operator.certify.job_reconcile import JOB_FINALIZER, JobReconciler
from glimmer.operator.certify.measurement_metrics import MeasurementSeries
from glimmer.operator.certify.measurements import MeasurementReconciler
from glimmer.operator.context import OperatorContext
from glimmer.operator.daemons import without_kopf_finalizer
from glimmer.operator.exporter import exporter_of
from glimmer.operator.passes import retry_after
from glimmer.operator.wakes import Key, Wakes

VERSION = "v1alpha1"
TRAINER_GROUP = "trainer.kubeflow.org"
WORKERS = 4  # reconciles at once across every certify object of this replica
SAFETY_NET = 15.0  # seconds: the longest a followed object waits without an event (§1)
DELETION_TRIES = 20
PASS_GRACE = 25.0  # as glimmer.operator.runs: a stopped daemon finishes the pass it is in

log = logging.getLogger("glimmer.operator.certify.jobs")

Reconcile = Callable[[str, str], "float | None"]


class Followers:
    """The daemons of one kind: their wakes and the reconcile they run on the shared pool."""

    def __init__(
        self,
        kind: str,
        reconcile: Reconcile,
        pool: ThreadPoolExecutor,
        host: Callable[[float], float],
    ) -> None:
        self.kind = kind
        self.reconcile = reconcile
        self.pool = pool
        self.host = host  # cluster seconds -> host seconds (a test's fast clock)
        self.wakes = Wakes()

    async def attempt(self, namespace: str, name: str, failures: int) -> tuple[float | None, int]:
        loop = asyncio.get_running_loop()
        try:
            after = await loop.run_in_executor(self.pool, self.reconcile, namespace, name)
        except Exception:  # the status is the checkpoint: the next pass resumes from it
            failures += 1
            wait = retry_after(failures)
            log.warning(
                "%s %s/%s: reconcile failed; retry in %.1f s",
                self.kind, namespace, name, wait, exc_info=True,
            )  # fmt: skip
            return wait, failures
        return after, 0

    async def drive(self, namespace: str, name: str, stopped: kopf.DaemonStopped) -> None:
        key: Key = (namespace, name)
        stop = asyncio.ensure_future(stopped.wait())
        failures = 0
        try:
            while not stopped:
                self.wakes.of(key).clear()
                after, failures = await self.attempt(namespace, name, failures)
                # None: only an event can change anything (a finished Job, a Complete
                # measurement) — a thousand finished DCGM Jobs poll nothing.
                wait = None if after is None else min(SAFETY_NET, self.host(after))
                if not await self.wakes.sleep(key, wait, stop):
                    break
        finally:
            stop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stop

    async def delete(self, namespace: str, name: str) -> None:
        """The deleted path, pass after pass, until it lets the object go."""
        failures = 0
        for _ in range(DELETION_TRIES):
            after, failures = await self.attempt(namespace, name, failures)
            if after is None and failures == 0:
                return
            await asyncio.sleep(self.host(after or 0.0) if failures == 0 else (after or 1.0))

    def wake(self, namespace: str, name: str) -> None:
        self.wakes.wake((namespace, name))


def _key(event: kopf.RawEvent) -> tuple[str, str, dict[str, Any]]:
    body = event.get("object") or {}
    meta: dict[str, Any] = dict(body.get("metadata") or {})
    return str(meta.get("namespace") or "default"), str(meta.get("name") or ""), meta


class CertifyJobHandlers:
    """Everything the Job and measurement handlers share."""

    def __init__(self, context: OperatorContext) -> None:
        self.context = context
        self.client = context.backend.client
        self.pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="glimmer-certify")
        now = context.clock.now
        host = context.clock.host_seconds
        self.jobs = Followers(
            "job",
            JobReconciler(self.client, now, running_requeue=SAFETY_NET).reconcile,
            self.pool,
            host,
        )
        # The measurements' gauges go to the operator's one exporter, beside the BurnInRuns'.
        series = MeasurementSeries(exporter_of(context))
        self.measurers = {
            plural: MeasurementReconciler(self.client, now, plural, series)
            for plural in ("goodputmeasurements", "bandwidthmeasurements")
        }
        self.measurements = {
            plural: Followers(plural, measurer.reconcile, self.pool, host)
            for plural, measurer in self.measurers.items()
        }
        self.nodes = NodeChanges()

    async def job_event(self, event: kopf.RawEvent) -> None:
        namespace, name, meta = _key(event)
        if event.get("type") == "DELETED":
            self.jobs.wakes.forget((namespace, name))
            return
        if meta.get("deletionTimestamp") and JOB_FINALIZER in (meta.get("finalizers") or ()):
            await self.jobs.delete(namespace, name)
            return
        self.jobs.wake(namespace, name)
        # A Job's change (terminal, above all) is news to its measurements.
        for followers, suffix in zip(
            self.measurements.values(), ("goodput", "bandwidth"), strict=True
        ):
            followers.wake(namespace, measurement_name(name, suffix))

    def train_job_event(self, event: kopf.RawEvent) -> None:
        namespace, _, meta = _key(event)
        job = (meta.get("labels") or {}).get(JOB_LABEL)
        if job:
            self.jobs.wake(namespace, str(job))

    def measurement_event(self, plural: str, event: kopf.RawEvent) -> None:
        namespace, name, _ = _key(event)
        if event.get("type") == "DELETED":
            self.measurements[plural].wakes.forget((namespace, name))
            self.measurers[plural].forget(namespace, name)
            return
        self.measurements[plural].wake(namespace, name)
        labels = ((event.get("object") or {}).get("metadata") or {}).get("labels") or {}
        if labels.get(JOB_LABEL):  # a stall or threshold verdict may be waiting on it
            self.jobs.wake(namespace, str(labels[JOB_LABEL]))

    def pods_with_jobs(self) -> list[dict[str, Any]]:
        namespace = self.context.namespace or ALL_NS
        with api_call("list certify job pods"):
            return [
                as_dict(p)
                for p in self.client.list(
                    PODS, namespace=namespace, labels={JOB_LABEL: operators.exists()}
                )
            ]

    async def node_event(self, event: kopf.RawEvent) -> None:
        node = event.get("object") or {}
        if not self.nodes.changed(str(event.get("type") or ""), node):
            return
        name = str((node.get("metadata") or {}).get("name") or "")
        loop = asyncio.get_running_loop()
        try:
            pods = await loop.run_in_executor(self.pool, self.pods_with_jobs)
        except Exception:  # the Jobs' safety-net requeue runs their health checks anyway
            log.warning("node %s changed; could not list the certify pods", name, exc_info=True)
            return
        for namespace, job in jobs_on(name, pods):
            self.jobs.wake(namespace, job)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def _daemon(
    registry: kopf.OperatorRegistry, plural: str, handler_id: str, followers: Followers
) -> None:
    async def drive(
        name: str, namespace: str | None, stopped: kopf.DaemonStopped, **_: Any
    ) -> None:
        await followers.drive(namespace or "default", name, stopped)

    kopf.daemon(
        GROUP, VERSION, plural, id=handler_id, cancellation_backoff=PASS_GRACE, registry=registry
    )(drive)
    without_kopf_finalizer(registry, handler_id)


def register(registry: kopf.OperatorRegistry, context: OperatorContext) -> CertifyJobHandlers:
    """The Job and measurement controllers on ``registry``; their shared state."""
    handlers = CertifyJobHandlers(context)
    _daemon(registry, "jobs", "certify-job-passes", handlers.jobs)
    for plural, followers in handlers.measurements.items():
        _daemon(registry, plural, f"certify-{plural}-passes", followers)

    async def on_job(event: kopf.RawEvent, **_: Any) -> None:
        await handlers.job_event(event)

    async def on_train_job(event: kopf.RawEvent, **_: Any) -> None:
        handlers.train_job_event(event)

    async def on_goodput(event: kopf.RawEvent, **_: Any) -> None:
        handlers.measurement_event("goodputmeasurements", event)

    async def on_bandwidth(event: kopf.RawEvent, **_: Any) -> None:
        handlers.measurement_event("bandwidthmeasurements", event)

    async def on_node(event: kopf.RawEvent, **_: Any) -> None:
        await handlers.node_event(event)

    kopf.on.event(GROUP, VERSION, "jobs", id="certify-job-events", registry=registry)(on_job)
    kopf.on.event(
        TRAINER_GROUP, VERSION, "trainjobs", id="certify-trainjob-events",
        labels={JOB_LABEL: kopf.PRESENT}, registry=registry,
    )(on_train_job)  # fmt: skip
    kopf.on.event(
        GROUP, VERSION, "goodputmeasurements", id="certify-goodput-events", registry=registry
    )(on_goodput)
    kopf.on.event(
        GROUP, VERSION, "bandwidthmeasurements", id="certify-bandwidth-events", registry=registry
    )(on_bandwidth)
    kopf.on.event("", "v1", "nodes", id="certify-job-node-events", registry=registry)(on_node)

    @kopf.on.cleanup(id="certify-jobs-close", registry=registry)
    async def close(**_: Any) -> None:
        handlers.close()

    return handlers
