"""A measurement's reads of its pods' logs, each from where the last sample stopped
(specs/certify.md §6.1 "since an advancing anchor", §6.2, ADR-005).

A measurement reads one log per *role*: ``log`` (a bandwidth table, a single-worker training
log) or, with ``workerStrategy.type: Multi``, ``lifecycle`` and ``steps`` (§2.8). Each role's
:class:`~glimmer.certify.measure.log_cursor.Cursor` is kept in the measurement's
``status.logCursors``, written in the same status update as the figures the lines it passed
went into — one write, so a crash between samples loses nothing and counts nothing twice.

A read names the pod by UID: another pod (a checkpoint restart's new workload) starts from its
beginning. A container restarted since the cursor first gives the rest of the instance before
(``previous=true``), then the new one from its start; while the new instance has printed
nothing the cursor stays on the old one (§6.1: no rows and restarts > 0 do not advance it). A
pod first seen after a restart is read from the instance before it (the one the kubelet keeps).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lightkube import Client

from glimmer.api.certify.logprofile import WorkerStrategy
from glimmer.backends.kubernetes.certify import logs
from glimmer.certify.measure.goodput import LIFECYCLE, STEPS, pick_workers
from glimmer.certify.measure.log_cursor import Cursor, Read, advance, from_status, line_stamp

LOG = "log"  # the one log a Single strategy (and every bandwidth measurement) reads


@dataclass(frozen=True)
class PodRead:
    """What one role's read added: its lines, the cursor after each, and whether the pod's
    log is complete (it finished)."""

    role: str
    read: Read
    before: Cursor
    final: bool
    read_to: str | None  # the kubelet time of the last line the read returned (seen before or not)

    def cursor_after(self, count: int) -> Cursor:
        return self.read.cursor_after(count, self.before)


def cursors_of(status: Mapping[str, Any]) -> dict[str, Cursor]:
    return {str(c.get("role") or LOG): from_status(c) for c in status.get("logCursors") or ()}


def cursors_status(cursors: Mapping[str, Cursor]) -> list[dict[str, Any]]:
    return [cursors[role].to_status(role) for role in sorted(cursors)]


def _last_stamp(text: str) -> str | None:
    for raw in reversed(text.split("\n")):
        got = line_stamp(raw)
        if got:
            return got
    return None


def read_pod(
    client: Client,
    pod: Mapping[str, Any],
    container: str,
    role: str,
    cursor: Cursor | None,
) -> PodRead | None:
    """The lines of ``pod``'s ``container`` past ``cursor``; None while it cannot be read."""
    meta = pod.get("metadata") or {}
    namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
    if logs.waiting(pod, container):
        return None
    uid, restarts = str(meta.get("uid") or ""), logs.restarts(pod, container)
    final = logs.finished(pod)
    if cursor is None or cursor.pod_uid != uid:
        # A pod first seen after its container restarted: the instance before (the only one
        # the kubelet keeps) is read from its start first.
        cursor = Cursor(uid, max(0, restarts - 1))
    lines: list[str] = []
    cursors: list[Cursor] = []
    before = cursor
    if cursor.restarts != restarts:
        old = logs.read_log(
            client, namespace, name, container, since_time=cursor.since_time(), previous=True
        )
        # An instance the kubelet no longer keeps (two restarts since the cursor) cannot be read
        # again by waiting: its rest is lost, and the new instance is read rather than none.
        if old is not None:
            got = advance(old, cursor, final=True)
            lines += got.lines
            cursors += got.cursors
        cursor = Cursor(uid, restarts)
    text = logs.read_log(client, namespace, name, container, since_time=cursor.since_time())
    if text is None:
        return None
    got = advance(text, cursor, final=final)
    return PodRead(
        role,
        Read((*lines, *got.lines), (*cursors, *got.cursors)),
        before,
        final,
        _last_stamp(text),
    )


def role_pods(
    pods: Sequence[Mapping[str, Any]], strategy: WorkerStrategy | None
) -> dict[str, Mapping[str, Any]]:
    """The pod each role reads, by the profile's worker strategy; {} while none has started."""
    picked = pick_workers(
        logs.worker_pods(pods, strategy.replicated_job_name if strategy else None), strategy
    )
    if picked is None:
        return {}
    if strategy is None or strategy.type != "Multi":
        return {LOG: picked[0]}
    return {LIFECYCLE: picked[0], STEPS: picked[1]}
