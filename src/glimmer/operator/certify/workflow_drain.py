"""A group whose Job the health check failed (specs/certify.md §3.2 completeTerminalGroup,
§3.3, §7.1): the Job keeps running with HardwareFailed=True, and the Workflow treats it as a
failed group — it deletes the workload, then holds the group until the workload's pods are
gone, at most :data:`DRAIN_GRACE` after the verdict.

The hold is the replay's: :class:`HeldLedger` answers "not finished" for a held Job, so the
core waits there and asks for nothing that comes after it — no later job lands on a node
whose pods still drain (a GPU still held, a DRA claim still allocated), and no
dependency is cleaned under a live pod. Once the pods are gone (or the grace is spent) the
Job's frozen outcome, which ends with the hardware verdict, is what the core reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from glimmer.backends.kubernetes.certify.ledger import JobLedger
from glimmer.backends.kubernetes.certify.resources import TRAIN_JOBS
from glimmer.certify.catalog.naming import workload_name
from glimmer.certify.jobs import Job, JobLog
from glimmer.operator.certify.certification_conditions import find, terminal
from glimmer.operator.certify.job_endings import JobReads
from glimmer.operator.certify.job_status import HARDWARE_FAILED, get, parse_time
from glimmer.operator.certify.workflow_cluster import Cluster, Obj, meta

DRAIN_GRACE = timedelta(seconds=60)  # as long as a deleted Job waits for its pods
HOLD_POLL = 1.0  # seconds between looks while a group drains (pods going send no Job event)


class HeldLedger:
    """``ledger`` with the Jobs of ``held`` not finished yet (their pods still drain)."""

    def __init__(self, ledger: JobLedger, held: set[str]) -> None:
        self.ledger = ledger
        self.held = held

    def outcome(self, key: str) -> JobLog | None:
        return None if key in self.held else self.ledger.outcome(key)

    def submit(self, key: str, job: Job, nodes: tuple[str, ...]) -> None:
        self.ledger.submit(key, job, nodes)


def drain_hardware_failed(
    cluster: Cluster, jobs: Mapping[str, Obj], now: datetime, grace: timedelta = DRAIN_GRACE
) -> set[str]:
    """Delete the workload of every HardwareFailed Job still running; the names of those whose
    pods are not gone yet, within ``grace`` of the verdict."""
    reads = JobReads(cluster.client, lambda: now)
    held: set[str] = set()
    for name, job in jobs.items():
        verdict = find(get(job, "status", "conditions"), HARDWARE_FAILED)
        if verdict is None or verdict.get("status") != "True":
            continue
        since = parse_time(verdict.get("lastTransitionTime"))
        if since is None or now - since >= grace:
            continue  # the grace is spent: the group is done, drained or not
        if not terminal(get(job, "status", "conditions")):
            namespace = str(meta(job).get("namespace") or "default")
            workload = get(job, "status", "workloadRef", "name") or workload_name(name)
            cluster.delete(TRAIN_JOBS, str(workload), namespace)
        if reads.pods(job):
            held.add(name)
    return held
