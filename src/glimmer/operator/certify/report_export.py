"""The ReportExport controller (specs/certify.md §2.9): one durable delivery of one
Certification report, "snapshot persisted locally" kept apart from "accepted remotely".

Phases (each status write is one checkpoint; docs/certify.md, "Report export"):

* (new) → ``Snapshotting``: ``snapshotStartedAt`` and ``reportID`` recorded;
* ``Snapshotting`` → ``Pending``: the payload persisted in ConfigMap ``<export>-snapshot``
  (owned by the export; :mod:`.report_export_snapshot`), its ``sha256`` and ``payloadBytes``
  recorded, condition ``SnapshotPersisted``; the first cycle starts, due at once;
* ``Pending`` → ``Delivering`` once ``nextAttemptTime`` has come: ``attempts`` and
  ``cycleAttempts`` counted *before* the POST, so a kill during it never loses an attempt;
* ``Delivering`` → ``Succeeded`` (2xx; condition ``Accepted``), ``Failed`` (a permanent
  refusal, the cycle's ``maxAttempts`` spent, or its ``maxElapsedTime`` passed) or back to
  ``Pending`` with ``nextAttemptTime`` after the backoff. An export found ``Delivering`` by a
  fresh reconcile lost its attempt's answer to a restart: that attempt counts as failed
  (``AttemptInterrupted``) and the next one follows the backoff.

Delivery is at least once: an attempt whose answer was lost is sent again, with the same bytes
and the same ``Idempotency-Key`` (``reportID``), which is what a receiver dedupes on.

``cancel`` fails a delivery not yet finished (``Cancelled``). A ``retryNonce`` different from
``observedRetryNonce`` on a Failed export starts a new cycle: same snapshot, same key, the
total ``attempts`` kept, ``cycleAttempts`` from zero (a nonce changed while a cycle runs is
recorded and changes nothing). A finished export is deleted ``retention.succeeded`` or
``retention.failed`` after ``completionTime`` (its snapshot with it, by owner reference).

An ``http://`` URL is refused (``PlainHTTPRefused``) unless the operator runs with
``--allow-plain-http-exports``; the refusal is a failure a ``retryNonce`` can retry once the
operator allows it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from lightkube import Client
from pydantic import ValidationError

from glimmer.api.certify.report_export import ExportPhase, ReportExportSpec
from glimmer.api.explain import explain
from glimmer.api.fleet_sched import parse_duration
from glimmer.engine.backend import Conflict
from glimmer.operator.certify.certification_conditions import set_condition
from glimmer.operator.certify.job_status import parse_time, stamp
from glimmer.operator.certify.report_export_delivery import Answer, backoff, post
from glimmer.operator.certify.report_export_names import EXPORTS
from glimmer.operator.certify.report_export_snapshot import read, take
from glimmer.operator.certify.workflow_cluster import Cluster, Obj, meta
from glimmer.operator.certify.workflow_discovery import Refused

log = logging.getLogger("glimmer.operator.certify.report_export")

SNAPSHOT_PERSISTED, ACCEPTED = "SnapshotPersisted", "Accepted"
CONFLICT_TRIES = 5
Poster = Callable[[Client, str, Any, bytes, str, str], Answer]

PENDING, DELIVERING = ExportPhase.PENDING.value, ExportPhase.DELIVERING.value
SUCCEEDED, FAILED = ExportPhase.SUCCEEDED.value, ExportPhase.FAILED.value
SNAPSHOTTING = ExportPhase.SNAPSHOTTING.value


class ExportController:
    """Reconciles ReportExports through ``cluster``; ``now`` is the operator's clock (tests
    move it by hand: no backoff is ever slept through), ``allow_plain_http`` the operator's
    ``--allow-plain-http-exports``."""

    def __init__(
        self,
        cluster: Cluster,
        now: Callable[[], datetime],
        *,
        allow_plain_http: bool = False,
        poster: Poster = post,
    ) -> None:
        self.cluster = cluster
        self.now = now
        self.allow_plain_http = allow_plain_http
        self.poster = poster

    def reconcile(self, namespace: str, name: str) -> float | None:
        """One step; the seconds until the next is due (None: only an event brings one)."""
        body = self.cluster.get(EXPORTS, name, namespace)
        if body is None or meta(body).get("deletionTimestamp"):
            return None
        status: Obj = dict(body.get("status") or {})
        phase = status.get("phase")
        try:
            spec = ReportExportSpec.model_validate(body.get("spec") or {})
        except ValidationError as e:
            if phase in (SUCCEEDED, FAILED):
                return None
            problems = "; ".join(f"spec.{where}: {why}" for where, why in explain(e))
            self._finish(body, status, FAILED, "InvalidSpec", problems)
            return None
        if phase in (SUCCEEDED, FAILED):
            return self._finished(body, status, spec)
        if spec.cancel:
            self._finish(body, status, FAILED, "Cancelled", "cancelled by spec.cancel")
            return None
        if phase and _nonce_changed(spec, status):
            _observe(status, spec)  # recorded; no cycle restarts while one runs
        if not phase:
            status.update(
                phase=SNAPSHOTTING,
                reportID=spec.report_id,
                snapshotStartedAt=stamp(self.now()),
                attempts=0,
                cycleAttempts=0,
            )
            _observe(status, spec)
            self._write(body, status, "Snapshotting", "taking the report's snapshot")
            return 0.0
        if phase == SNAPSHOTTING:
            return self._snapshot(body, status, spec)
        if phase == DELIVERING:
            self._interrupted(body, status, spec)
            return 0.0
        return self._attempt(body, status, spec)

    # -- steps --------------------------------------------------------------------------------

    def _snapshot(self, body: Obj, status: Obj, spec: ReportExportSpec) -> float | None:
        try:
            snap = take(self.cluster, body, spec)
        except Refused as e:
            self._finish(body, status, FAILED, e.reason, e.message)
            return None
        now = self.now()
        status.update(
            phase=PENDING,
            snapshotRef={"name": snap.name, "key": snap.key},
            sha256=snap.sha256,
            payloadBytes=snap.size,
            cycleStartedAt=stamp(now),
            nextAttemptTime=stamp(now),
        )
        if snap.result:
            status["result"] = snap.result
        status["conditions"] = set_condition(
            status.get("conditions"), SNAPSHOT_PERSISTED, True, "Persisted",
            f"{snap.size} bytes in ConfigMap {snap.name}, sha256 {snap.sha256}", now,
        )  # fmt: skip
        self._write(body, status, "SnapshotPersisted", "snapshot persisted; first attempt due")
        return 0.0

    def _attempt(self, body: Obj, status: Obj, spec: ReportExportSpec) -> float | None:
        now = self.now()
        due = parse_time(status.get("nextAttemptTime")) or now
        if due > now:
            return (due - now).total_seconds()
        if spec.webhook.url.startswith("http://") and not self.allow_plain_http:
            message = (
                "plain http:// is refused; use https, or start the operator with "
                "--allow-plain-http-exports (then change spec.retryNonce to retry)"
            )
            self._finish(body, status, FAILED, "PlainHTTPRefused", message)
            return None
        past = self._past_elapsed(status, spec, now)
        if past:
            self._finish(body, status, FAILED, "MaxElapsedTimeExceeded", past)
            return None
        namespace = str(meta(body).get("namespace") or "default")
        ref = status.get("snapshotRef") or {}
        try:
            payload = read(
                self.cluster, namespace, str(ref.get("name")), str(ref.get("key")),
                str(status.get("sha256")),
            )  # fmt: skip
        except Refused as e:
            self._finish(body, status, FAILED, e.reason, e.message)
            return None
        status.update(
            phase=DELIVERING,
            attempts=int(status.get("attempts") or 0) + 1,
            cycleAttempts=int(status.get("cycleAttempts") or 0) + 1,
            lastAttemptTime=stamp(now),
        )
        status.setdefault("firstAttemptTime", stamp(now))
        status.pop("nextAttemptTime", None)
        body = self._write(body, status, "Delivering", f"attempt {status['attempts']}")
        ident = f"ReportExport {namespace}/{meta(body).get('name')}"
        answer = self.poster(
            self.cluster.client, namespace, spec.webhook, payload, spec.report_id, ident
        )
        return self._answered(body, status, spec, answer)

    def _answered(self, body: Obj, status: Obj, spec: ReportExportSpec, answer: Answer) -> float:
        if answer.status is not None:
            status["lastHTTPStatus"] = answer.status
        if answer.accepted:
            now = self.now()
            status["conditions"] = set_condition(
                status.get("conditions"), ACCEPTED, True, "Accepted", answer.message, now
            )
            self._finish(body, status, SUCCEEDED, "Delivered", answer.message)
            return 0.0
        if not answer.retryable:
            self._finish(body, status, FAILED, "Refused", answer.message)
            return 0.0
        return self._again(body, status, spec, "AttemptFailed", answer.message)

    def _interrupted(self, body: Obj, status: Obj, spec: ReportExportSpec) -> None:
        message = (
            f"attempt {status.get('attempts')} was interrupted (the operator stopped); its "
            "answer is unknown, so it counts as failed and is sent again"
        )
        self._again(body, status, spec, "AttemptInterrupted", message)

    def _again(
        self, body: Obj, status: Obj, spec: ReportExportSpec, reason: str, why: str
    ) -> float:
        """After a failed attempt: the next one scheduled, or the cycle over."""
        made = int(status.get("cycleAttempts") or 0)
        if made >= spec.retry.max_attempts:
            message = (
                f"{made} attempts this cycle (maxAttempts {spec.retry.max_attempts}); last: {why}"
            )
            self._finish(body, status, FAILED, "MaxAttemptsExceeded", message)
            return 0.0
        last = parse_time(status.get("lastAttemptTime")) or self.now()
        due = last + timedelta(seconds=backoff(spec.retry, made + 1))
        past = self._past_elapsed(status, spec, due)
        if past:
            self._finish(body, status, FAILED, "MaxElapsedTimeExceeded", f"{past}; last: {why}")
            return 0.0
        status.update(phase=PENDING, nextAttemptTime=stamp(due))
        self._write(body, status, reason, why)
        return max((due - self.now()).total_seconds(), 0.0)

    def _past_elapsed(self, status: Obj, spec: ReportExportSpec, at: datetime) -> str:
        """Why an attempt at ``at`` may not be made (the cycle's maxElapsedTime passed), or
        the empty string when it may."""
        started = parse_time(status.get("cycleStartedAt")) or at
        bound = timedelta(seconds=parse_duration(spec.retry.max_elapsed_time))
        if at - started <= bound:
            return ""
        return (
            f"the cycle started {stamp(started)} would run past maxElapsedTime "
            f"{spec.retry.max_elapsed_time}"
        )

    def _finished(self, body: Obj, status: Obj, spec: ReportExportSpec) -> float | None:
        if status.get("phase") == FAILED and _nonce_changed(spec, status):
            if spec.cancel:
                return None
            return self._new_cycle(body, status, spec)
        done = parse_time(status.get("completionTime"))
        if done is None:
            return None
        kept = (
            spec.retention.succeeded if status.get("phase") == SUCCEEDED else spec.retention.failed
        )
        until = done + timedelta(seconds=parse_duration(kept))
        now = self.now()
        if now < until:
            return (until - now).total_seconds()
        # The UID precondition: an export re-made under the name since the read is kept.
        with contextlib.suppress(Conflict):
            self.cluster.delete(
                EXPORTS, str(meta(body)["name"]), meta(body).get("namespace"),
                uid=str(meta(body).get("uid") or ""),
            )  # fmt: skip
        return None

    def _new_cycle(self, body: Obj, status: Obj, spec: ReportExportSpec) -> float:
        now = self.now()
        nonce = _observe(status, spec)
        for key in ("completionTime", "nextAttemptTime"):
            status.pop(key, None)
        if not status.get("snapshotRef"):
            status.update(phase=SNAPSHOTTING, snapshotStartedAt=stamp(now), cycleAttempts=0)
            self._write(body, status, "RetryRequested", f"retryNonce {nonce!r}: snapshot again")
            return 0.0
        status.update(
            phase=PENDING, cycleAttempts=0, cycleStartedAt=stamp(now), nextAttemptTime=stamp(now)
        )
        self._write(body, status, "RetryRequested", f"retryNonce {nonce!r}: a new cycle")
        return 0.0

    # -- status ---------------------------------------------------------------------------------

    def _finish_current(self, status: Obj, phase: str, reason: str, message: str) -> None:
        status.update(phase=phase, reason=reason, message=message)
        status["completionTime"] = stamp(self.now())
        status.pop("nextAttemptTime", None)

    def _finish(self, body: Obj, status: Obj, phase: str, reason: str, message: str) -> None:
        self._finish_current(status, phase, reason, message)
        self._write(body, status, reason, message)
        self.cluster.event(
            body, "Delivered" if phase == SUCCEEDED else reason, message,
            warning=phase != SUCCEEDED, at=self.now(),
        )  # fmt: skip

    def _write(self, body: Obj, status: Obj, reason: str, message: str) -> Obj:
        """Write ``status`` (its reason and message set). A Conflict whose fresh read holds
        the status this step started from (the spec or metadata changed under us: a cancel,
        a nonce) writes the same status again — what this step did happened (an answer
        came), and the next reconcile acts on the new spec; one whose status moved on is
        raised, and the next reconcile starts from the fresh read."""
        if status.get("phase") not in (SUCCEEDED, FAILED):  # _finish set a terminal one's
            status.update(reason=reason, message=message)
        for _ in range(CONFLICT_TRIES):
            try:
                written = self.cluster.write_status(EXPORTS, {**body, "status": status})
                log.info(
                    "ReportExport %s/%s: %s %s (%s)", meta(body).get("namespace"),
                    meta(body).get("name"), status.get("phase"), reason, message,
                )  # fmt: skip
                return written
            except Conflict:
                fresh = self.cluster.get(
                    EXPORTS, str(meta(body)["name"]), meta(body).get("namespace")
                )
                if fresh is None or (fresh.get("status") or {}) != (body.get("status") or {}):
                    raise
                body = fresh
        raise Conflict(f"ReportExport {meta(body).get('name')}: status kept conflicting")


def _nonce_changed(spec: ReportExportSpec, status: Obj) -> bool:
    return (spec.retry_nonce or "") != (status.get("observedRetryNonce") or "")


def _observe(status: Obj, spec: ReportExportSpec) -> str:
    """Record the spec's retryNonce as observed (none: the field left out); the nonce."""
    nonce = spec.retry_nonce or ""
    if nonce:
        status["observedRetryNonce"] = nonce
    else:
        status.pop("observedRetryNonce", None)
    return nonce
