"""The BandwidthMeasurement and GoodputMeasurement controllers (specs/certify.md §6, §2.6–2.7):
a Job's launcher log read through a LogProfile into running figures, frozen once Complete.

Per reconcile (one measurement):

1. **Complete → nothing.** The terminal write is the last one (ADR-072): re-entering a Complete
   measurement, whatever happened to its Job or pods since, leaves it byte-identical.
2. The Job (``spec.jobRef``) must exist (else requeue); the LogProfile is the cluster's
   (``spec.logProfileRef``), else the built-in one of that name (:mod:`glimmer.certify.catalog`);
   neither → ``Measuring=False`` reason ``LogProfileNotFound`` (not terminal).
3. The log: the pod of the profile's ``workerStrategy`` (replicated job, first or last pod)
   of the Job's workload, read whole (:mod:`glimmer.backends.kubernetes.certify.logs` says
   why), skipped while its container waits; once the Job is terminal and its pods are gone, the
   Job's frozen ``status.outcome`` text (the same launcher log) stands in.
4. The figures are recomputed from the whole log every time — bandwidth: per-size running
   averages over every table row (§6.1, :func:`~glimmer.certify.measure.bandwidth.merge`);
   goodput: :func:`~glimmer.certify.measure.goodput.parse_training` over every attempt. A
   goodput Job restarted from a checkpoint runs in a new workload whose pods are new, and the
   old attempt's log goes with its pods: each attempt's log is kept in the ConfigMap
   ``<measurement>-logs`` (owned by the measurement), keyed by pod UID, so every attempt is
   folded in, as §7.7 requires (t_ch, t_re, t_rm).
5. Job running → ``Measuring=True`` (``JobRunning``), requeue after ``sampleInterval``; Job
   terminal → one write: figures, ``completionTime`` = the Job's terminal-condition time,
   ``Measuring=False``, ``Complete=True`` (``JobSucceeded`` / ``JobFailed``, or
   ``NoDataCollected`` when a succeeded Job left nothing to measure).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, cast

from lightkube import Client
from lightkube.resources.core_v1 import ConfigMap

from glimmer.api.certify.logprofile import LogProfile
from glimmer.backends.kubernetes.certify import logs
from glimmer.backends.kubernetes.certify.ledger import owner_reference
from glimmer.backends.kubernetes.certify.resources import (
    BANDWIDTH_MEASUREMENTS,
    GOODPUT_MEASUREMENTS,
    JOBS,
    LOG_PROFILES,
)
from glimmer.backends.kubernetes.errors import AlreadyExists, api_call
from glimmer.backends.kubernetes.resources import as_dict
from glimmer.certify.catalog.entries import builtin_log_profiles
from glimmer.certify.catalog.naming import truncate, workload_name
from glimmer.certify.measure.bandwidth import BandwidthParser, bandwidth_parser, merge
from glimmer.certify.measure.goodput import TrainingProfile, parse_training, training_profile
from glimmer.certify.platform.vocab import JOB_LABEL, MANAGED_BY, MANAGED_BY_KEY
from glimmer.engine.backend import NotFound
from glimmer.errors import GlimmerError
from glimmer.operator.certify.certification_conditions import (
    FAILED,
    SUCCEEDED,
    find,
    is_true,
    set_condition,
)
from glimmer.operator.certify.job_status import get, parse_time, seconds, stamp
from glimmer.operator.certify.measurement_goodput import (
    decimal,
    goodput_status,
    marks,
    parser_profile,
)

log = logging.getLogger("glimmer.operator.certify.measurements")

Obj = dict[str, Any]
MEASURING, COMPLETE = "Measuring", "Complete"
DEFAULT_SAMPLE_SECONDS = 60.0
JOB_MISSING_REQUEUE = 5.0
PROFILE_MISSING_REQUEUE = 30.0
NO_BANDWIDTH = "Job succeeded but no bandwidth data was parsed; check spec.logProfileRef"
NO_GOODPUT = "Job succeeded but no training step was parsed; check spec.logProfileRef"
LOG_ARCHIVE_LIMIT = 256 * 1024  # bytes of one attempt's log kept (a ConfigMap holds 1 MiB)

RESOURCES = {
    "bandwidthmeasurements": BANDWIDTH_MEASUREMENTS,
    "goodputmeasurements": GOODPUT_MEASUREMENTS,
}


def bandwidth_results(text: str, parser: BandwidthParser) -> list[Obj]:
    """``status.results``: running averages per size over every row of the log."""
    return [
        {
            "sizeBytes": r.size,
            "algBW": decimal(r.alg_bw),
            "busBW": decimal(r.bus_bw),
            "samples": r.samples,
        }
        for r in merge([], parser.parse(text))
    ]


def terminal_condition(job: Mapping[str, Any]) -> Mapping[str, Any] | None:
    conditions = get(job, "status", "conditions")
    for kind in (SUCCEEDED, FAILED):
        c = find(conditions, kind)
        if c is not None and c.get("status") == "True":
            return c
    return None


class MeasurementReconciler:
    """One measurement kind (``plural``) through ``client`` on the clock ``now``."""

    def __init__(self, client: Client, now: Callable[[], datetime], plural: str) -> None:
        self.client = client
        self.now = now
        self.plural = plural
        self.res = RESOURCES[plural]
        self.goodput = plural == "goodputmeasurements"

    def _get(self, res: Any, name: str, namespace: str | None) -> Obj | None:
        try:
            with api_call(f"get {res.__name__} {namespace}/{name}"):
                return as_dict(self.client.get(res, name, namespace=namespace))
        except NotFound:
            return None

    def profile(self, name: str) -> LogProfile | None:
        found = self._get(LOG_PROFILES, name, None)
        if found is not None:
            return LogProfile.model_validate(found)
        return builtin_log_profiles().get(name)

    def write(self, m: Obj, status: Obj) -> None:
        if status == (m.get("status") or {}):
            return
        meta = m["metadata"]
        with api_call(f"write status of {self.plural} {meta.get('namespace')}/{meta['name']}"):
            self.client.replace(
                self.res.Status.from_dict({**m, "status": status}),
                meta["name"],
                namespace=meta.get("namespace"),
            )

    def reconcile(self, namespace: str, name: str) -> float | None:
        m = self._get(self.res, name, namespace)
        if m is None:
            return None
        status: Obj = dict(m.get("status") or {})
        if is_true(status.get("conditions"), COMPLETE):
            return None  # frozen (ADR-072)
        job_name = str(get(m, "spec", "jobRef", "name") or "")
        job = self._get(JOBS, job_name, namespace) if job_name else None
        if job is None:
            return JOB_MISSING_REQUEUE
        ref = str(get(m, "spec", "logProfileRef") or "")
        try:
            profile = self.profile(ref)
        except (GlimmerError, ValueError) as e:
            log.warning("%s %s/%s: LogProfile %s refused: %s", self.plural, namespace, name, ref, e)
            profile = None
        if profile is None:
            status["conditions"] = set_condition(
                status.get("conditions"), MEASURING, False, "LogProfileNotFound",
                f"LogProfile {ref!r} not found", self.now(),
            )  # fmt: skip
            self.write(m, status)
            return PROFILE_MISSING_REQUEUE
        ended = terminal_condition(job)
        text = self.log_text(m, job, profile, ended is not None)
        if text is None and ended is None:
            return seconds(get(m, "spec", "sampleInterval"), DEFAULT_SAMPLE_SECONDS)
        figured, found = self.figures(status, text or "", profile)
        now = self.now()
        figured.setdefault("startTime", stamp(now))
        if ended is None:
            figured["conditions"] = set_condition(
                figured.get("conditions"),
                MEASURING,
                True,
                "JobRunning",
                "Reading the job's log",
                now,
            )
            self.write(m, figured)
            return seconds(get(m, "spec", "sampleInterval"), DEFAULT_SAMPLE_SECONDS)
        anchor = parse_time(ended.get("lastTransitionTime")) or now
        succeeded = ended.get("type") == SUCCEEDED
        reason, message = (
            ("JobSucceeded", "The job succeeded") if succeeded else ("JobFailed", "The job failed")
        )
        if succeeded and not found:
            reason, message = "NoDataCollected", NO_GOODPUT if self.goodput else NO_BANDWIDTH
        figured["completionTime"] = stamp(anchor)
        conditions = set_condition(
            figured.get("conditions"), MEASURING, False, reason, message, anchor
        )
        figured["conditions"] = set_condition(conditions, COMPLETE, True, reason, message, anchor)
        self.write(m, figured)
        return None

    # ---- the log -------------------------------------------------------------------------------

    def log_text(self, m: Obj, job: Obj, profile: LogProfile, ended: bool) -> str | None:
        """The log to measure (every attempt's, for goodput); None when nothing is readable."""
        namespace = str(m["metadata"].get("namespace") or "default")
        workload = str(
            get(job, "status", "workloadRef", "name") or workload_name(str(job["metadata"]["name"]))
        )
        strategy = profile.spec.worker_strategy
        pods = logs.workload_pods(self.client, namespace, workload)
        pod = logs.worker_pod(
            pods,
            strategy.replicated_job_name if strategy else None,
            strategy.lifecycle_pod if strategy else "first",
        )
        current: str | None = None
        uid = ""
        if pod is not None:
            container = logs.container_of(pod, profile.spec.container_name)
            if not logs.waiting(pod, container):
                current = logs.read_log(
                    self.client, namespace, str(pod["metadata"]["name"]), container
                )
                uid = str(pod["metadata"].get("uid") or "")
        outcome = get(job, "status", "outcome", "text") if ended else None
        if not self.goodput:
            return current if current is not None else outcome
        if current is None and outcome is not None:
            # The pods are gone: the archive holds every attempt it saw, and the outcome (the
            # last attempt's launcher log) stands in only when it saw none.
            return self.attempts(m, "", None) or self.attempts(m, "outcome", outcome)
        return self.attempts(m, uid, current)

    def attempts(self, m: Obj, uid: str, current: str | None) -> str | None:
        """Every attempt's log in the order seen, ``current`` (pod ``uid``'s) kept among them."""
        meta = m["metadata"]
        namespace = str(meta.get("namespace") or "default")
        name = truncate(f"{meta['name']}-logs", 63)
        found = self._get(ConfigMap, name, namespace)
        data: dict[str, str] = dict((found or {}).get("data") or {})
        order = [u for u in data.get("order", "").split(",") if u]
        if current is not None and uid:
            kept = current.encode()[-LOG_ARCHIVE_LIMIT:].decode(errors="ignore")
            if uid not in order:
                order.append(uid)
            if data.get(uid) != kept:
                data[uid] = kept
                data["order"] = ",".join(order)
                self.save_attempts(m, name, namespace, found, data)
        texts = [data[u] for u in order if u in data]
        return (
            "".join(t if t.endswith("\n") or not t else t + "\n" for t in texts) if texts else None
        )

    def save_attempts(
        self, m: Obj, name: str, namespace: str, found: Obj | None, data: dict[str, str]
    ) -> None:
        if found is None:
            body = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "labels": {
                        MANAGED_BY_KEY: MANAGED_BY,
                        JOB_LABEL: str(get(m, "spec", "jobRef", "name") or ""),
                    },
                    "ownerReferences": [owner_reference(m)],
                },
                "data": data,
            }
            try:
                with api_call(f"create configmap {namespace}/{name}"):
                    self.client.create(
                        cast(ConfigMap, ConfigMap.from_dict(body)), namespace=namespace
                    )
            except AlreadyExists:
                pass  # another pass made it; the next sample updates it
            return
        with api_call(f"replace configmap {namespace}/{name}"):
            replaced = cast(ConfigMap, ConfigMap.from_dict({**found, "data": data}))
            self.client.replace(replaced)

    # ---- the figures ---------------------------------------------------------------------------

    def figures(self, status: Obj, text: str, profile: LogProfile) -> tuple[Obj, bool]:
        """``status`` with the figures of ``text``, and whether it held anything to measure."""
        if not self.goodput:
            results = bandwidth_results(text, bandwidth_parser(profile))
            out = dict(status)
            if results:
                out["results"] = results
            return out, bool(results)
        tp: TrainingProfile = parser_profile(training_profile(profile))
        figures = parse_training(text, tp)
        seen = marks(text, tp)
        out = goodput_status(status, figures, seen, tp.log_interval)
        if seen.last_line_time is not None:
            out["applicationStopTime"] = stamp(seen.last_line_time)
        return out, figures is not None
