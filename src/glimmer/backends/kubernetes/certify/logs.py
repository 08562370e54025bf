"""Pod logs of a certify workload: which pods speak for a measurement (§2.8 workerStrategy) and
their container's log, read from a point on (specs/certify.md §6, ADR-005).

A measurement reads incrementally: :func:`read_log` asks for the log ``sinceTime`` its cursor's
whole second (the API has no finer one) with kubelet timestamps (``timestamps=true``), and the
reader (:mod:`glimmer.certify.measure.log_cursor`) drops the lines at or before the cursor by
their nanosecond prefix, so the overlap second is never counted twice. The text comes back as
the server sent it: an unterminated last line stays unterminated (lightkube's ``Client.log``
would append a newline to it, and a line still being written would be read as a whole one).
``previous=true`` reads the container instance before a restart, whose last lines a restart
would otherwise hide.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lightkube import Client
from lightkube.resources.core_v1 import PodLog

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
    ordered = worker_pods(pods, replicated_job)
    if not ordered:
        return None
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


def worker_pods(
    pods: Sequence[Mapping[str, Any]], replicated_job: str | None
) -> list[Mapping[str, Any]]:
    """The started pods of ``replicated_job`` (empty: ``node``) in worker order (by name)."""
    rj = replicated_job or DEFAULT_REPLICATED_JOB
    mine = [
        p
        for p in pods
        if ((p.get("metadata") or {}).get("labels") or {}).get(REPLICATED_JOB_LABEL) == rj
        and (p.get("status") or {}).get("phase") in STARTED_PHASES
    ]
    return sorted(mine, key=_name)


def restarts(pod: Mapping[str, Any], container: str) -> int:
    """How often ``container`` restarted in ``pod`` (its status's ``restartCount``)."""
    for status in (pod.get("status") or {}).get("containerStatuses") or ():
        if status.get("name") == container:
            return int(status.get("restartCount") or 0)
    return 0


def finished(pod: Mapping[str, Any]) -> bool:
    """Whether the pod's containers are done: its log will not grow."""
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def read_log(
    client: Client,
    namespace: str,
    pod: str,
    container: str,
    *,
    timestamps: bool = True,
    since_time: str | None = None,
    previous: bool = False,
) -> str | None:
    """The log of ``pod``'s ``container`` (from ``since_time``, RFC 3339 whole seconds, when
    given; the instance before the last restart when ``previous``), as sent; None when it
    cannot be read now."""
    params: dict[str, Any] = {"container": container, "timestamps": timestamps}
    if since_time:
        params["sinceTime"] = since_time
    if previous:
        params["previous"] = True
    try:
        with api_call(f"log of pod {namespace}/{pod}"):
            # lightkube's Client.log has no sinceTime and rewrites line ends; the same request
            # through its generic client, read as text.
            generic: Any = client._client
            request = generic.prepare_request(
                "get", PodLog, name=pod, namespace=namespace, params=params
            )
            response = generic.send(generic.build_adapter_request(request))
            generic.raise_for_status(response)
            return str(response.text)
    except BackendError:
        return None
