"""Pod logs of a certify workload: which pod speaks for a measurement (§2.8 workerStrategy) and
its container's log, read whole.

**Why whole, not incrementally** (sinceTime or a persisted byte offset): a measurement's
status is recomputed from the complete log at every sample, so a reconcile that crashed after
reading, a second replica, or an operator restart (§9.2 ``-state-recovery``) recomputes the
same figures, and a Complete measurement re-entered gives byte-identical output
(``-frozen-after-complete``). An incremental read would have to persist its cursor beside the
running averages in ONE write, and the measurement kinds' status has no field for a cursor;
a cursor in an annotation is a second write that a crash can separate from the status, and
then rows are counted twice or never. ``sinceTime`` also has one-second granularity on the
wire (a boundary second is read twice or skipped) and the API offers no byte-range read, so
an offset would still transfer the whole log. The logs measured are small (an nccl-tests table
is a few dozen lines per cycle; a training log a line per ``logInterval`` steps), and a sample
comes once per ``sampleInterval`` (60 s by default).

Logs are read with kubelet timestamps (``timestamps=true``): the goodput parser takes an
event's time from them when the line carries none of its own (§6.2), and both parsers strip
them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lightkube import Client

from glimmer.backends.kubernetes.errors import api_call
from glimmer.backends.kubernetes.resources import PODS, as_dict
from glimmer.engine.backend import BackendError

JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
DEFAULT_REPLICATED_JOB = "node"  # the bandwidth controller's fallback (§2.8)
DEFAULT_CONTAINER = "node"
STARTED_PHASES = frozenset({"Running", "Succeeded", "Failed"})


def workload_pods(client: Client, namespace: str, workload: str) -> list[dict[str, Any]]:
    """Every pod of the TrainJob ``workload`` (its JobSet's), sorted by name."""
    with api_call(f"list pods of workload {namespace}/{workload}"):
        found = [
            as_dict(p)
            for p in client.list(PODS, namespace=namespace, labels={JOBSET_LABEL: workload})
        ]
    return sorted(found, key=lambda p: str(p["metadata"]["name"]))


def _name(pod: Mapping[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("name") or "")


def worker_pod(
    pods: Sequence[Mapping[str, Any]], replicated_job: str | None, which: str = "first"
) -> Mapping[str, Any] | None:
    """The pod of ``replicated_job`` (empty: ``node``) a profile reads: the first or last by
    name among those that have started; None while none has."""
    rj = replicated_job or DEFAULT_REPLICATED_JOB
    mine = [
        p
        for p in pods
        if ((p.get("metadata") or {}).get("labels") or {}).get(REPLICATED_JOB_LABEL) == rj
        and (p.get("status") or {}).get("phase") in STARTED_PHASES
    ]
    if not mine:
        return None
    ordered = sorted(mine, key=_name)
    return ordered[-1] if which == "last" else ordered[0]


def waiting(pod: Mapping[str, Any], container: str) -> bool:
    """Whether ``container`` waits (CrashLoopBackOff, image pull): no log worth reading yet."""
    for status in (pod.get("status") or {}).get("containerStatuses") or ():
        if status.get("name") == container:
            return "waiting" in (status.get("state") or {})
    return False


def container_of(pod: Mapping[str, Any], preferred: str | None = None) -> str:
    """The container to read: the profile's, else ``node`` when the pod has one, else its
    first."""
    names = [str(c.get("name")) for c in (pod.get("spec") or {}).get("containers") or ()]
    if preferred and preferred in names:
        return preferred
    if DEFAULT_CONTAINER in names or not names:
        return DEFAULT_CONTAINER
    return names[0]


def read_log(
    client: Client, namespace: str, pod: str, container: str, *, timestamps: bool = True
) -> str | None:
    """The whole log of ``pod``'s ``container``; None when it cannot be read now."""
    try:
        with api_call(f"log of pod {namespace}/{pod}"):
            return "".join(
                client.log(pod, namespace=namespace, container=container, timestamps=timestamps)
            )
    except BackendError:
        return None
