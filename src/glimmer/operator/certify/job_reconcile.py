"""The certify Job controller's reconcile (specs/certify.md §3.3), synchronous, one Job at a
time: read the Job, its TrainJob, pods and nodes; decide; write the status once.

Every decision is a rule of :mod:`glimmer.certify.job_rules` (timeout, stall, restart, failure
log) or :mod:`glimmer.certify.threshold_verdict` over what this reconcile read and ``now``; the
status is the only state (a restarted operator resumes from it), and every status write is a
PUT carrying the resourceVersion that was read, so a write that raced another is refused (409)
and the pass is retried from a fresh read. Events are posted after the write they describe.

A Job ends exactly once, in one status write with its frozen ``outcome`` (:mod:`.job_status`):
the launcher's log, its exit code, the error line, the node a failure names, how long it ran,
and the collective's path — what the Workflow's replayed core reads back.

A node found unhealthy while the workload runs (§3.3, §7.1) sets HardwareFailed and the
failed nodes and freezes the outcome with that verdict (the replayed core reads it at once),
and the Job keeps running: the Workflow deletes the workload and waits for its pods. Once the
verdict is given, whatever ends the workload — that delete, its own end, the timeout — ends
the Job as that hardware failure (Failed, reason HardwareFailureDetected): never a second,
different failure ("was deleted"), never a checkpoint restart onto the failed node.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from lightkube import Client
from lightkube.types import PatchType

from glimmer.backends.kubernetes.certify.ledger import controlled_by
from glimmer.backends.kubernetes.certify.resources import (
    BANDWIDTH_MEASUREMENTS,
    CERTIFY_API_VERSION,
    GOODPUT_MEASUREMENTS,
    JOBS,
    TRAIN_JOBS,
    WORKFLOWS,
)
from glimmer.backends.kubernetes.errors import AlreadyExists, api_call
from glimmer.backends.kubernetes.events import NORMAL, WARNING, Involved, post_event
from glimmer.backends.kubernetes.resources import as_dict
from glimmer.certify import job_rules
from glimmer.certify.catalog.naming import workload_name
from glimmer.certify.outcome import outcome_log
from glimmer.certify.platform.vocab import (
    GROUP,
)
from glimmer.certify.result import THRESHOLD
from glimmer.certify.threshold_verdict import DEFAULT_MEASUREMENT_TIMEOUT, judge
from glimmer.engine.backend import BackendError, NotFound
from glimmer.errors import InputError
from glimmer.operator.certify import job_workload as wl
from glimmer.operator.certify.certification_conditions import (
    FAILED,
    IN_PROGRESS,
    SUCCEEDED,
    Transition,
    find,
    is_true,
    set_condition,
    set_exclusive,
    terminal,
)
from glimmer.operator.certify.job_endings import HARDWARE_DETECTED, JobReads
from glimmer.operator.certify.job_measured import (
    measured_values,
    measurement_manifest,
    measurement_name,
    progress_of,
)
from glimmer.operator.certify.job_status import (
    HARDWARE_FAILED,
    VALIDATION_FAILED,
    Ending,
    blame_group,
    duration,
    failed_nodes,
    failed_nodes_wire,
    get,
    hardware_status,
    parse_time,
    stamp,
    terminal_status,
)

log = logging.getLogger("glimmer.operator.certify.job")

Obj = dict[str, Any]
JOB_FINALIZER = f"{GROUP}/finalizer"
DEFAULT_TIMEOUT = timedelta(hours=1)  # §2.2 timeoutPerJob when nothing sets it
DRAIN_GRACE = timedelta(seconds=60)  # how long a deleted Job waits for its pods to go
RUNNING_REQUEUE = 15.0  # seconds between looks at a followed workload: the safety net beside events
RETRY_FIRST, RETRY_MAX = 1.0, 60.0

# Condition reasons of §3.3 and §7.
WORKLOAD_CREATED = "WorkloadCreated"
WORKLOAD_PENDING = "WorkloadPending"
WORKLOAD_RUNNING = "WorkloadRunning"
WORKLOAD_FAILED = "WorkloadFailed"
WORKLOAD_DELETED = "WorkloadDeleted"
WORKLOAD_CREATION_ERROR = "WorkloadCreationError"
MEASUREMENT_CREATION_ERROR = "MeasurementCreationError"
INVALID_JOB = "InvalidJob"


def job_involved(job: Mapping[str, Any]) -> Involved:
    meta = job.get("metadata") or {}
    return Involved(
        CERTIFY_API_VERSION,
        "Job",
        str(meta.get("namespace") or "default"),
        str(meta.get("name") or ""),
        str(meta.get("uid") or ""),
    )


@dataclass
class Read:
    """What one reconcile read about a Job with a workload."""

    job: Obj
    train_job: Obj | None
    pods: list[Obj]


class JobReconciler(JobReads):
    """Reconciles certify Jobs through ``client`` on the clock ``now``."""

    def __init__(
        self,
        client: Client,
        now: Callable[[], datetime],
        *,
        drain_grace: timedelta = DRAIN_GRACE,
        running_requeue: float = RUNNING_REQUEUE,
    ) -> None:
        super().__init__(client, now)
        self.drain_grace = drain_grace
        self.running_requeue = running_requeue
        self._create_failures: dict[tuple[str, str], int] = {}  # backoff only, not state
        # Jobs whose measurements this process saw created (saves a 409 per pass; a restart
        # asks once more, harmlessly).
        self._measured: set[tuple[str, str]] = set()

    # ---- writes --------------------------------------------------------------------------------

    def write_status(self, job: Obj, status: Obj) -> Obj:
        meta = job["metadata"]
        body = {**job, "status": status}
        with api_call(f"write status of job {meta.get('namespace')}/{meta['name']}"):
            stored = self.client.replace(
                JOBS.Status.from_dict(body), meta["name"], namespace=meta.get("namespace")
            )
        return as_dict(stored)

    def event(
        self, job: Mapping[str, Any], reason: str, message: str, warning: bool = False
    ) -> None:
        try:
            post_event(
                self.client,
                job_involved(job),
                reason,
                message,
                kind=WARNING if warning else NORMAL,
                at=self.now(),
            )
        except BackendError:
            log.warning("could not post event %s on job %s", reason, job_involved(job).name)

    def transition_event(self, job: Mapping[str, Any], moved: Transition | None) -> None:
        if moved is not None:
            self.event(job, moved.reason, moved.message, warning=moved.warning)

    def set_progress(self, job: Obj, reason: str, message: str, **extra: Any) -> Obj:
        """InProgress with ``reason`` (and status fields ``extra``), written only on change."""
        status: Obj = dict(job.get("status") or {})
        conditions, moved = set_exclusive(
            status.get("conditions"), IN_PROGRESS, reason, message, self.now()
        )
        new = {**status, "conditions": conditions, **extra}
        if new == status:
            return job
        stored = self.write_status(job, new)
        self.transition_event(stored, moved)
        return stored

    def delete_workload(self, job: Mapping[str, Any]) -> None:
        meta = job.get("metadata") or {}
        ns = str(meta.get("namespace") or "default")
        name = str(
            get(job, "status", "workloadRef", "name") or workload_name(str(meta.get("name")))
        )
        try:
            with api_call(f"delete trainjob {ns}/{name}"):
                self.client.delete(TRAIN_JOBS, name, namespace=ns)
        except NotFound:
            pass

    # ---- the reconcile -------------------------------------------------------------------------

    def reconcile(self, namespace: str, name: str) -> float | None:
        """One pass over Job ``namespace/name``: seconds until the next, None when only an
        event can change anything."""
        job = self._get(JOBS, name, namespace)
        if job is None:
            self._create_failures.pop((namespace, name), None)
            self._measured.discard((namespace, name))
            return None
        if (job.get("metadata") or {}).get("deletionTimestamp"):
            return self.deleting(job)
        job = self.ensure_finalizer(job)
        status = job.get("status") or {}
        if terminal(status.get("conditions")):
            return self.after_terminal(job)
        if not get(status, "workloadRef", "name"):
            return self.create_workload(job)
        return self.follow(job)

    def ensure_finalizer(self, job: Obj) -> Obj:
        meta = job["metadata"]
        finalizers = list(meta.get("finalizers") or ())
        if JOB_FINALIZER in finalizers:
            return job
        patch = {
            "metadata": {
                "finalizers": [*finalizers, JOB_FINALIZER],
                "resourceVersion": meta.get("resourceVersion"),
            }
        }
        with api_call(f"add finalizer to job {meta.get('namespace')}/{meta['name']}"):
            return as_dict(
                self.client.patch(
                    JOBS,
                    meta["name"],
                    patch,
                    namespace=meta.get("namespace"),
                    patch_type=PatchType.MERGE,
                )
            )

    def deleting(self, job: Obj) -> float | None:
        """§3.3 deletion: delete the workload, hold the finalizer until its pods are gone (at
        most the drain grace after the deletion began), then let the Job go."""
        meta = job["metadata"]
        if JOB_FINALIZER not in (meta.get("finalizers") or ()):
            return None
        self.delete_workload(job)
        began = parse_time(meta.get("deletionTimestamp")) or self.now()
        if self.pods(job) and self.now() - began < self.drain_grace:
            return 1.0
        kept = [f for f in meta.get("finalizers") or () if f != JOB_FINALIZER]
        patch = {"metadata": {"finalizers": kept, "resourceVersion": meta.get("resourceVersion")}}
        try:
            with api_call(f"drop finalizer of job {meta.get('namespace')}/{meta['name']}"):
                self.client.patch(
                    JOBS,
                    meta["name"],
                    patch,
                    namespace=meta.get("namespace"),
                    patch_type=PatchType.MERGE,
                )
        except NotFound:
            pass
        return None

    # ---- creating the workload -----------------------------------------------------------------

    def create_workload(self, job: Obj) -> float | None:
        key = (str(job["metadata"].get("namespace") or "default"), str(job["metadata"]["name"]))
        restarting = find(get(job, "status", "conditions"), IN_PROGRESS)
        if restarting and restarting.get("reason") == job_rules.WORKLOAD_RESTARTING:
            grace = job_rules.restart_grace(self.sample_interval(job, "goodputMeasurement"))
            since = parse_time(restarting.get("lastTransitionTime"))
            if since is not None and self.now() - since < grace:
                return (grace - (self.now() - since)).total_seconds()
        try:
            manifest = wl.train_job_manifest(job)
        except InputError as e:
            return self.finish(
                job, [], self.failed_ending(job, [], INVALID_JOB, str(e), timeout=False)
            )
        try:
            with api_call(f"create trainjob {key[0]}/{manifest['metadata']['name']}"):
                made = as_dict(self.client.create(TRAIN_JOBS.from_dict(manifest), namespace=key[0]))
        except AlreadyExists:
            found = self._get(TRAIN_JOBS, manifest["metadata"]["name"], key[0])
            uid = str(job["metadata"].get("uid") or "")
            if found is None or (found.get("metadata") or {}).get("deletionTimestamp"):
                return RETRY_FIRST  # the last attempt's, still going (a checkpoint restart)
            if not controlled_by(found, uid):
                self.event(job, WORKLOAD_CREATION_ERROR, f"TrainJob/{manifest['metadata']['name']} "
                           "exists and belongs to another object", warning=True)  # fmt: skip
                return RETRY_MAX
            if restarting and restarting.get("reason") == job_rules.WORKLOAD_RESTARTING:
                born = parse_time((found.get("metadata") or {}).get("creationTimestamp"))
                since = parse_time(restarting.get("lastTransitionTime"))
                old = wl.train_job_condition(found, "Failed") is not None or (
                    born is not None and since is not None and born < since
                )
                if old:
                    # The failed attempt's, left by a pass that crashed between the restart's
                    # status write and the delete: never resume into it.
                    self.delete_workload(job)
                    return RETRY_FIRST
            made = found  # ours from a pass that crashed before writing the ref
        except BackendError as e:
            # Retried, never failed (§3.3): an admission webhook may refuse it until the
            # TrainingRuntime it names is ready.
            failures = self._create_failures.get(key, 0) + 1
            self._create_failures[key] = failures
            self.event(job, WORKLOAD_CREATION_ERROR, str(e), warning=True)
            return float(min(RETRY_MAX, RETRY_FIRST * 2 ** (failures - 1)))
        self._create_failures.pop(key, None)
        ref = wl.workload_ref(made)
        self.set_progress(
            job,
            WORKLOAD_CREATED,
            f"Workload TrainJob/{ref['name']} created and is starting",
            workloadRef=ref,
        )
        self.ensure_measurements(job)
        return self.running_requeue

    def ensure_measurements(self, job: Mapping[str, Any]) -> None:
        """The GoodputMeasurement / BandwidthMeasurement the Job spec asks for (non-fatal)."""
        meta = job.get("metadata") or {}
        key = (str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
        if key in self._measured:
            return
        made = True
        for field, res, suffix, kind in (
            ("goodputMeasurement", GOODPUT_MEASUREMENTS, "goodput", "GoodputMeasurement"),
            ("bandwidthMeasurement", BANDWIDTH_MEASUREMENTS, "bandwidth", "BandwidthMeasurement"),
        ):
            asked = get(job, "spec", field)
            if not isinstance(asked, Mapping):
                continue
            body = measurement_manifest(job, kind, suffix, asked)
            ns = body["metadata"]["namespace"]
            try:
                with api_call(f"create {kind} {ns}/{body['metadata']['name']}"):
                    self.client.create(res.from_dict(body), namespace=ns)
            except AlreadyExists:
                pass
            except BackendError as e:
                made = False
                self.event(job, MEASUREMENT_CREATION_ERROR, str(e), warning=True)
        if made:
            self._measured.add(key)

    # ---- following the workload ----------------------------------------------------------------

    def follow(self, job: Obj) -> float | None:
        self.ensure_measurements(job)
        meta = job["metadata"]
        ns = str(meta.get("namespace") or "default")
        ref = str(get(job, "status", "workloadRef", "name"))
        train_job = self._get(TRAIN_JOBS, ref, ns)
        pods = self.pods(job)
        read = Read(job, train_job, pods)
        hardware = self.health(job, pods)
        if hardware is not None:
            return self.hardware_failed(job, hardware)
        if is_true(get(job, "status", "conditions"), HARDWARE_FAILED):
            ended = (
                train_job is None
                or wl.train_job_condition(train_job, "Failed") is not None
                or wl.train_job_condition(train_job, "Complete") is not None
                or self.timed_out(job)
            )
            if ended:
                return self.finish(job, pods, self.hardware_ending(job), delete=True)
            return self.running_requeue  # the Workflow deletes the workload
        if train_job is None:
            return self.interrupted(read, WORKLOAD_DELETED, f"Workload TrainJob/{ref} was deleted")
        failed = wl.train_job_condition(train_job, "Failed")
        if failed is not None:
            message = str(failed.get("message") or f"Workload TrainJob/{ref} failed")
            return self.interrupted(read, WORKLOAD_FAILED, message)
        if wl.train_job_condition(train_job, "Complete") is not None:
            ending = self.success_ending(job, pods)
            self.finish(job, pods, ending)
            return 0.0  # the thresholds next, if any
        if self.timed_out(job):
            ending = self.failed_ending(
                job, pods, job_rules.JOB_TIMED_OUT, job_rules.JOB_TIMED_OUT_MESSAGE, timeout=True
            )
            return self.finish(job, pods, ending, delete=True)
        if not wl.running(train_job, pods):
            self.set_progress(job, WORKLOAD_PENDING, f"Workload TrainJob/{ref} is pending")
            return self.running_requeue
        stalled = self.stalled(job)
        if stalled is not None:
            return self.interrupted(read, job_rules.WORKLOAD_STALLED, stalled)
        extra: Obj = {}
        if not get(job, "status", "workloadStartTime"):
            extra["workloadStartTime"] = stamp(self.now())
        self.set_progress(job, WORKLOAD_RUNNING, f"Workload TrainJob/{ref} is running", **extra)
        return self.running_requeue

    def timed_out(self, job: Mapping[str, Any]) -> bool:
        timeout = duration(self.execution(job).get("timeoutPerJob"), DEFAULT_TIMEOUT)
        return job_rules.timed_out(
            self.now(),
            timeout,
            workload_start=parse_time(get(job, "status", "workloadStartTime")),
            workload_created=True,
            group_start=parse_time(get(job, "metadata", "creationTimestamp")),
        )

    def workflow(self, job: Mapping[str, Any]) -> Obj | None:
        for ref in get(job, "metadata", "ownerReferences") or ():
            if ref.get("kind") == "Workflow" and ref.get("controller"):
                return self._get(
                    WORKFLOWS,
                    str(ref.get("name")),
                    str(get(job, "metadata", "namespace") or "default"),
                )
        return None

    def execution(self, job: Mapping[str, Any]) -> Mapping[str, Any]:
        found = get(self.workflow(job), "spec", "orchestration", "execution")
        return found if isinstance(found, Mapping) else {}

    def sample_interval(self, job: Mapping[str, Any], field: str) -> timedelta | None:
        text = get(job, "spec", field, "sampleInterval")
        return duration(text, job_rules.DEFAULT_SAMPLE_INTERVAL) if text else None

    def goodput(self, job: Mapping[str, Any]) -> Obj | None:
        if not isinstance(get(job, "spec", "goodputMeasurement"), Mapping):
            return None
        meta = job["metadata"]
        return self._get(
            GOODPUT_MEASUREMENTS,
            measurement_name(str(meta["name"]), "goodput"),
            str(meta.get("namespace") or "default"),
        )

    def stalled(self, job: Mapping[str, Any]) -> str | None:
        multiplier = get(job, "spec", "stallMultiplier")
        if not multiplier:
            return None
        gm = self.goodput(job)
        if gm is None:
            return None
        start = parse_time(get(job, "status", "workloadStartTime"))
        return job_rules.stall(
            self.now(),
            progress_of(gm, start),
            stall_multiplier=float(multiplier),
            workload_start=start or self.now(),
            startup_timeout=timedelta(
                seconds=int(get(job, "spec", "startupStallTimeoutSeconds") or 1200)
            ),
            sample_interval=self.sample_interval(job, "goodputMeasurement"),
        )

    def finish(
        self, job: Obj, pods: Sequence[Mapping[str, Any]], ending: Ending, *, delete: bool = False
    ) -> float | None:
        """Write the terminal status (once), post its Events, delete the workload if asked."""
        status, moved = terminal_status(job.get("status") or {}, ending, self.now())
        stored = self.write_status(job, status)
        self.transition_event(stored, moved)
        if ending.hardware and not is_true(get(job, "status", "conditions"), HARDWARE_FAILED):
            self.event(stored, HARDWARE_DETECTED, ending.message, warning=True)
        if delete or not ending.succeeded:
            self.delete_workload(stored)
        return None if not ending.succeeded else 0.0

    def hardware_failed(self, job: Obj, ending: Ending) -> float | None:
        """HardwareFailed, the failed nodes and the frozen outcome written; the Job goes on."""
        stored = self.write_status(
            job, hardware_status(job.get("status") or {}, ending, self.now())
        )
        self.event(stored, HARDWARE_DETECTED, ending.message, warning=True)
        return self.running_requeue

    def hardware_ending(self, job: Mapping[str, Any]) -> Ending:
        """The end of a Job whose hardware verdict was given: that verdict, as written."""
        status = job.get("status") or {}
        verdict = find(status.get("conditions"), HARDWARE_FAILED) or {}
        message = str(verdict.get("message") or HARDWARE_DETECTED)
        name = f"Job {get(job, 'metadata', 'namespace')}/{get(job, 'metadata', 'name')}"
        return Ending(
            False,
            HARDWARE_DETECTED,
            message,
            outcome_log(status["outcome"], name),
            failed=failed_nodes(status),
            hardware=True,
        )

    def interrupted(self, read: Read, reason: str, message: str) -> float | None:
        """A workload that failed, was deleted or stalled: restart from the checkpoint when
        §7.7 allows, else the Job fails."""
        job = read.job
        checkpoint = get(job, "spec", "checkpoint")
        count = int(get(job, "status", "restartCount") or 0)
        gm = self.goodput(job)
        if job_rules.restart_allowed(
            checkpoint=isinstance(checkpoint, Mapping),
            restart_count=count,
            max_restarts=int(get(checkpoint, "maxRestarts") or 0),
            last_checkpoint_step=int(get(gm, "status", "lastCheckpointStep") or 0) if gm else None,
        ):
            return self.restart(read, count + 1, int(get(checkpoint, "maxRestarts") or 0))
        ending = self.failed_ending(job, read.pods, reason, message, timeout=False)
        return self.finish(job, read.pods, ending, delete=True)

    def restart(self, read: Read, restart: int, max_restarts: int) -> float | None:
        """§7.7: delete the workload, clear its ref and clock, count the restart; the next
        pass recreates it after the grace (the measurement reads the old pods' last lines)."""
        job = read.job
        status: Obj = dict(job.get("status") or {})
        status.pop("workloadRef", None)
        status.pop("workloadStartTime", None)
        status["restartCount"] = restart
        message = job_rules.restart_message(restart, max_restarts)
        status["conditions"], moved = set_exclusive(
            status.get("conditions"),
            IN_PROGRESS,
            job_rules.WORKLOAD_RESTARTING,
            message,
            self.now(),
        )
        stored = self.write_status(job, status)
        self.transition_event(stored, moved)
        self.delete_workload(job)
        grace = job_rules.restart_grace(self.sample_interval(job, "goodputMeasurement"))
        return grace.total_seconds()

    # ---- after the end: thresholds (§7.5) ------------------------------------------------------

    def after_terminal(self, job: Obj) -> float | None:
        """A finished Job: its failed workload gone (a pass that died between the terminal
        write and the delete left it, pods and GPUs held), then the thresholds (§7.5)."""
        status = job.get("status") or {}
        thresholds = get(job, "spec", "thresholds") or {}
        conditions = status.get("conditions")
        if is_true(conditions, FAILED):
            ref = get(status, "workloadRef", "name")
            namespace = str(job["metadata"].get("namespace") or "default")
            if ref and self._get(TRAIN_JOBS, str(ref), namespace) is not None:
                self.delete_workload(job)
            return None
        succeeded = find(conditions, SUCCEEDED)
        if not thresholds or not succeeded or succeeded.get("status") != "True":
            return None
        if find(conditions, VALIDATION_FAILED) is not None:
            return None
        verdict = judge(
            {str(k): str(v) for k, v in thresholds.items()},
            self.measured(job),
            self.now() - (parse_time(succeeded.get("lastTransitionTime")) or self.now()),
            duration(get(job, "spec", "measurementTimeout"), DEFAULT_MEASUREMENT_TIMEOUT),
        )
        if verdict.failed is None:
            return 1.0
        new = dict(status)
        new["conditions"] = set_condition(
            conditions,
            VALIDATION_FAILED,
            verdict.failed,
            verdict.reason,
            verdict.message,
            self.now(),
        )
        if verdict.failed:
            blamed = blame_group(job, failed_nodes(status), THRESHOLD, verdict.message)
            new["failedNodes"] = failed_nodes_wire(blamed)
        stored = self.write_status(job, new)
        self.event(stored, verdict.reason, verdict.message, warning=verdict.failed)
        return None

    def measured(self, job: Mapping[str, Any]) -> dict[str, float]:
        """The values the Job's thresholds may read now (§7.5)."""
        meta = job["metadata"]
        ns, name = str(meta.get("namespace") or "default"), str(meta["name"])
        bw = (
            self._get(BANDWIDTH_MEASUREMENTS, measurement_name(name, "bandwidth"), ns)
            if get(job, "spec", "bandwidthMeasurement")
            else None
        )
        return measured_values(bw, self.goodput(job))
