"""The BandwidthMeasurement and GoodputMeasurement controllers (specs/certify.md §6, §2.6–2.7):
a Job's pod logs read incrementally through a LogProfile into running figures, frozen once
Complete.

Per reconcile (one measurement):

1. **Complete → nothing** but its metrics shown again (a restarted operator's exporter starts
   empty). The terminal write is the last one (ADR-072): re-entering a Complete measurement,
   whatever happened to its Job or pods since, leaves it byte-identical.
2. The Job (``spec.jobRef``) must exist (else requeue); the LogProfile is the cluster's
   (``spec.logProfileRef``), else the built-in one of that name (:mod:`glimmer.certify.catalog`);
   neither → ``Measuring=False`` reason ``LogProfileNotFound`` (not terminal).
3. The logs: the pod of each role the profile's ``workerStrategy`` names
   (:mod:`.measurement_reads`: ``log``, or ``lifecycle`` and ``steps`` for ``Multi``, merged in
   kubelet time; a line waits at most :data:`LOG_SETTLE_SECONDS` for the other pod), read from
   its cursor in ``status.logCursors``, skipped while its container waits. Once the Job is
   terminal and no pod is left, the Job's frozen ``status.outcome`` text (the same launcher log)
   stands in — only when nothing was read before (the outcome is the last attempt's log, and
   lines already counted are not counted again).
4. The new lines are folded into the state in status — bandwidth: exact per-size sums
   (``status.sums``) behind the running averages of ``results`` (§6.1); goodput: the incremental
   reader's exact state (``status.readerState``,
   :meth:`~glimmer.certify.measure.goodput_reader.TrainingLogReader.state`). The figures, the
   state and the cursors go in ONE status write: a crash before it re-reads the same lines, a
   crash after it has them counted. Sampled any number of times, the figures equal one whole
   read's. A checkpoint restart's new pods start new cursors: every attempt is folded in as it
   is read, so no copy of an old attempt's log is kept (§7.7 t_ch, t_re, t_rm).
5. Job running → ``Measuring=True`` (``JobRunning``), requeue after ``sampleInterval``; Job
   terminal → one write (ADR-072): the last lines folded in, the training time ending at the
   Job's terminal-condition ``lastTransitionTime`` (the anchor), ``completionTime`` = anchor,
   ``Measuring=False``, ``Complete=True`` (``JobSucceeded`` / ``JobFailed``, or
   ``NoDataCollected`` when a succeeded Job left nothing to measure).

Every sample also sets the measurement's ``burnin_*`` gauges (:mod:`.measurement_metrics`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from lightkube import Client

from glimmer.api.certify.logprofile import LogProfile
from glimmer.backends.kubernetes.certify import logs
from glimmer.backends.kubernetes.certify.resources import (
    BANDWIDTH_MEASUREMENTS,
    GOODPUT_MEASUREMENTS,
    JOBS,
    LOG_PROFILES,
)
from glimmer.backends.kubernetes.errors import api_call
from glimmer.backends.kubernetes.resources import as_dict
from glimmer.certify.catalog.entries import builtin_log_profiles
from glimmer.certify.catalog.naming import workload_name
from glimmer.certify.measure.bandwidth import (
    BandwidthParser,
    SizeSums,
    accumulate,
    bandwidth_parser,
)
from glimmer.certify.measure.goodput import (
    LIFECYCLE,
    STEPS,
    TrainingLogReader,
    WorkerLogReader,
    training_profile,
)
from glimmer.certify.measure.goodput_reader import kubelet_time
from glimmer.certify.measure.goodput_workers import Role
from glimmer.certify.measure.log_cursor import Cursor, advance
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
from glimmer.operator.certify.measurement_goodput import decimal, goodput_status, parser_profile
from glimmer.operator.certify.measurement_metrics import MeasurementSeries
from glimmer.operator.certify.measurement_reads import (
    LOG,
    PodRead,
    cursors_of,
    cursors_status,
    read_pod,
    role_pods,
)

log = logging.getLogger("glimmer.operator.certify.measurements")

Obj = dict[str, Any]
MEASURING, COMPLETE = "Measuring", "Complete"
DEFAULT_SAMPLE_SECONDS = 60.0
JOB_MISSING_REQUEUE = 5.0
PROFILE_MISSING_REQUEUE = 30.0
NO_BANDWIDTH = "Job succeeded but no bandwidth data was parsed; check spec.logProfileRef"
NO_GOODPUT = "Job succeeded but no training step was parsed; check spec.logProfileRef"
OUTCOME = "outcome"  # the pseudo-pod the Job's outcome text is read as
# How long after a line's kubelet time it is surely in the log a read returns (the runtime
# writes a line as it gets it; this is margin for a busy node).
LOG_SETTLE_SECONDS = 5.0

RESOURCES = {
    "bandwidthmeasurements": BANDWIDTH_MEASUREMENTS,
    "goodputmeasurements": GOODPUT_MEASUREMENTS,
}


def sums_of(status: Mapping[str, Any]) -> list[SizeSums]:
    """``status.sums``: the exact per-size sums a bandwidth measurement keeps."""
    return [
        SizeSums(int(s["sizeBytes"]), float(s["algBW"]), float(s["busBW"]), int(s["samples"]))
        for s in status.get("sums") or ()
    ]


def bandwidth_status(status: Mapping[str, Any], sums: list[SizeSums]) -> Obj:
    """``status`` with ``results`` (the running averages, as shown) and ``sums`` behind them."""
    out = dict(status)
    if not sums:
        return out
    out["results"] = [
        {
            "sizeBytes": r.size,
            "algBW": decimal(r.alg_bw),
            "busBW": decimal(r.bus_bw),
            "samples": r.samples,
        }
        for r in (s.result() for s in sums)
    ]
    out["sums"] = [
        {"sizeBytes": s.size, "algBW": repr(s.alg_sum), "busBW": repr(s.bus_sum),
         "samples": s.samples}
        for s in sums
    ]  # fmt: skip
    return out


def terminal_condition(job: Mapping[str, Any]) -> Mapping[str, Any] | None:
    conditions = get(job, "status", "conditions")
    for kind in (SUCCEEDED, FAILED):
        c = find(conditions, kind)
        if c is not None and c.get("status") == "True":
            return c
    return None


class MeasurementReconciler:
    """One measurement kind (``plural``) through ``client`` on the clock ``now``; its gauges go
    to ``series`` (none: not exported)."""

    def __init__(
        self,
        client: Client,
        now: Callable[[], datetime],
        plural: str,
        series: MeasurementSeries | None = None,
    ) -> None:
        self.client = client
        self.now = now
        self.plural = plural
        self.res = RESOURCES[plural]
        self.goodput = plural == "goodputmeasurements"
        self.series = series or MeasurementSeries(None)

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

    def forget(self, namespace: str, name: str) -> None:
        """The measurement was deleted: its gauges go."""
        self.series.forget(self.plural, namespace, name)

    def reconcile(self, namespace: str, name: str) -> float | None:
        m = self._get(self.res, name, namespace)
        if m is None:
            self.forget(namespace, name)
            return None
        status: Obj = dict(m.get("status") or {})
        if is_true(status.get("conditions"), COMPLETE):
            self.series.publish(self.plural, m, status)
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
        anchor = (parse_time(ended.get("lastTransitionTime")) or self.now()) if ended else None
        reads = self.reads(m, job, profile, ended is not None)
        if not reads and ended is None:
            return seconds(get(m, "spec", "sampleInterval"), DEFAULT_SAMPLE_SECONDS)
        now = self.now()
        figured, found = self.figures(status, reads, profile, anchor, now)
        figured.setdefault("startTime", stamp(now))
        if anchor is None or ended is None:
            figured["conditions"] = set_condition(
                figured.get("conditions"),
                MEASURING,
                True,
                "JobRunning",
                "Reading the job's log",
                now,
            )
            self.write(m, figured)
            self.series.publish(self.plural, m, figured)
            return seconds(get(m, "spec", "sampleInterval"), DEFAULT_SAMPLE_SECONDS)
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
        self.series.publish(self.plural, m, figured)
        return None

    # ---- the logs ------------------------------------------------------------------------------

    def reads(self, m: Obj, job: Obj, profile: LogProfile, ended: bool) -> list[PodRead]:
        """What each role's pod printed since its cursor; the Job's outcome text when the Job
        ended, no pod is left and nothing was read before."""
        namespace = str(m["metadata"].get("namespace") or "default")
        workload = str(
            get(job, "status", "workloadRef", "name") or workload_name(str(job["metadata"]["name"]))
        )
        cursors = cursors_of(m.get("status") or {})
        pods = role_pods(logs.workload_pods(self.client, namespace, workload),
                         profile.spec.worker_strategy)  # fmt: skip
        reads = []
        for role, pod in pods.items():
            container = logs.container_of(pod, profile.spec.container_name)
            got = read_pod(self.client, pod, container, role, cursors.get(role))
            if got is not None:
                reads.append(got)
        outcome = get(job, "status", "outcome", "text") if ended else None
        if not pods and not cursors and isinstance(outcome, str) and outcome:
            start = Cursor(OUTCOME)
            reads.append(PodRead(LOG, advance(outcome, start, final=True), start, True, None))
        return reads

    # ---- the figures ---------------------------------------------------------------------------

    def figures(
        self,
        status: Obj,
        reads: list[PodRead],
        profile: LogProfile,
        anchor: datetime | None,
        read_at: datetime | None = None,
    ) -> tuple[Obj, bool]:
        """``status`` with the new lines of ``reads`` (made at ``read_at``) folded in, the cursors
        past them, and whether it holds anything to measure."""
        cursors = cursors_of(status)
        if not self.goodput:
            parser: BandwidthParser = bandwidth_parser(profile)
            sums = sums_of(status)
            for r in reads:
                sums = accumulate(sums, parser.parse("\n".join(r.read.lines)))
                cursors[r.role] = r.cursor_after(len(r.read.lines))
            out = bandwidth_status(status, sums)
            out["logCursors"] = cursors_status(cursors)
            return out, bool(sums)
        tp = parser_profile(training_profile(profile))
        state = status.get("readerState")
        reader = TrainingLogReader.resume(tp, state) if state else TrainingLogReader(tp)
        single = [r for r in reads if r.role == LOG]
        for r in single:
            for raw in r.read.lines:
                reader.raw_line(raw)
            cursors[r.role] = r.cursor_after(len(r.read.lines))
        multi: dict[Role, PodRead] = {role: r for role in (LIFECYCLE, STEPS)
                                      for r in reads if r.role == role}  # fmt: skip
        if multi:
            merged = WorkerLogReader(tp, reader=reader)
            settled = read_at.timestamp() - LOG_SETTLE_SECONDS if read_at else -math.inf
            for role, r in multi.items():
                # A pod's log holds every line up to its last one, and every line stamped more
                # than LOG_SETTLE_SECONDS before the read: a quiet lifecycle pod (rank 0 prints
                # between checkpoints only) holds the steps back that long at most, not until
                # its next line — the stall rule reads lastStepTimestamp.
                last = kubelet_time(f"{r.read_to} ") if r.read_to else None
                mark = max(settled, -math.inf if last is None else last)
                text = "".join(f"{line}\n" for line in r.read.lines)
                merged.feed(role, text, None if mark == -math.inf else mark)
            for role in (LIFECYCLE, STEPS):
                # A pod that finished (or a Job that ended) prints nothing more.
                if anchor is not None or (role in multi and multi[role].final):
                    merged.close(role)
            for role, r in multi.items():
                cursors[role] = r.cursor_after(merged.released[role])
        figures = reader.figures(anchor.timestamp() if anchor is not None else None)
        out = goodput_status(status, figures, reader.progress(), tp.log_interval, reader.state())
        out["logCursors"] = cursors_status(cursors)
        return out, figures is not None
