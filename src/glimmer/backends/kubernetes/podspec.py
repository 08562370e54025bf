"""The Pod a neutral execution request becomes on Kubernetes, as one pure function.

Everything Kubernetes-shaped about an execution lives here and nowhere in the engine: the
restart policy, placement by the hostname label, the one extra toleration (the run's own
cordon taint, so the execution lands on the node the run cordoned), the autoscaler's
never-evict annotation, the headless-service host name and subdomain a rendezvous resolves
through, host paths as volumes, and the deadline as ``activeDeadlineSeconds``. The rendezvous
itself is :func:`service_of`: a headless Service (§2.8) whose DNS publishes the unit's pods
before they are Ready, so a Pair client or a Group worker can reach a peer that is still
starting.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from glimmer.api.k8s import Toleration
from glimmer.api.meta import API_VERSION
from glimmer.engine.backend import ExecutionSpec, Mount, Rendezvous
from glimmer.engine.keys import ATTEMPT_LABEL, RUN_LABEL, TEST_LABEL

HOSTNAME_LABEL = "kubernetes.io/hostname"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
RUNNER_CONTAINER = "runner"
MAX_VOLUME_NAME = 63
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def rendezvous_address(namespace: str, rendezvous: str, role: str) -> str:
    """``<role>.<service>.<namespace>.svc``: the pod's name under the headless rendezvous
    service — deliberately not suffixed ``cluster.local``, which a cluster may rename."""
    return f"{role}.{rendezvous}.{namespace}.svc"


def volume_name(index: int, mount_path: str) -> str:
    """``host-<i>-<mountPath lower-cased, non-alphanumerics as '-'>``, at most 63 characters."""
    slug = _NOT_ALNUM.sub("-", mount_path.lower())
    return f"host-{index}-{slug.strip('-')}"[:MAX_VOLUME_NAME].strip("-")


def tolerations(own: Sequence[Toleration] = ()) -> list[dict[str, Any]]:
    """The run's own tolerations, then the cordon taint's (the run cordons before it starts)."""
    out = [t.model_dump(by_alias=True, exclude_none=True) for t in own]
    out.append({"key": UNSCHEDULABLE_TAINT, "operator": "Exists", "effect": "NoSchedule"})
    return out


def _volume(index: int, mount: Mount) -> dict[str, Any]:
    host_path: dict[str, Any] = {"path": mount.host_path}
    if mount.host_type:
        host_path["type"] = mount.host_type
    return {"name": volume_name(index, mount.path), "hostPath": host_path}


def _resources(spec: ExecutionSpec) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if spec.resources.limits:
        out["limits"] = dict(spec.resources.limits)
    if spec.resources.requests:
        out["requests"] = dict(spec.resources.requests)
    claims = spec.test_spec.resources.claims if spec.test_spec.resources else None
    if claims:
        out["claims"] = [dict(c) for c in claims]
    return out


def _container(spec: ExecutionSpec) -> dict[str, Any]:
    """The runner container. ``command`` and ``args`` are the test's own or absent: a kind's
    default image is a per-kind tag whose entrypoint runs that kind (contract/images.py)."""
    runner = spec.test_spec.runner
    container: dict[str, Any] = {
        "name": RUNNER_CONTAINER,
        "image": spec.image,
        "env": [{"name": name, "value": value} for name, value in spec.env],
    }
    if spec.command:
        container["command"] = list(spec.command)
    if spec.args:
        container["args"] = list(spec.args)
    resources = _resources(spec)
    if resources:
        container["resources"] = resources
    security: dict[str, Any] = {}
    if spec.privileges.privileged:
        security["privileged"] = True
    if spec.privileges.run_as_user is not None:
        security["runAsUser"] = spec.privileges.run_as_user
    if security:
        container["securityContext"] = security
    if spec.mounts:
        container["volumeMounts"] = [
            {"name": volume_name(i, m.path), "mountPath": m.path, "readOnly": m.read_only}
            for i, m in enumerate(spec.mounts)
        ]
    if runner is not None and runner.readiness_probe:
        container["readinessProbe"] = dict(runner.readiness_probe)
    return container


def owner_reference(run: str, run_uid: str) -> dict[str, Any]:
    """The controller reference to the run: what the cluster's garbage collector deletes the
    run's pods and Services by, and what a recreated run of the same name does not match."""
    return {
        "apiVersion": API_VERSION,
        "kind": "BurnInRun",
        "name": run,
        "uid": run_uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _owner(spec: ExecutionSpec) -> dict[str, Any]:
    return owner_reference(spec.run, spec.run_uid)


def pod_of(
    spec: ExecutionSpec,
    run_tolerations: Sequence[Toleration] = (),
) -> dict[str, Any]:
    """The Pod manifest of ``spec``, owned by its run; ``run_tolerations`` are the run's
    ``spec.target.tolerations`` (the request does not carry Kubernetes scheduling terms)."""
    runner = spec.test_spec.runner
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "nodeSelector": {HOSTNAME_LABEL: spec.node},
        "hostNetwork": spec.privileges.host_network,
        "activeDeadlineSeconds": spec.deadline_seconds,
        "tolerations": tolerations(run_tolerations),
        "containers": [_container(spec)],
    }
    if runner is not None and runner.priority_class_name:
        pod_spec["priorityClassName"] = runner.priority_class_name
    if spec.mounts:
        pod_spec["volumes"] = [_volume(i, m) for i, m in enumerate(spec.mounts)]
    if spec.seat is not None:
        # A pod is resolvable as <hostname>.<subdomain> under its headless service.
        pod_spec["hostname"] = spec.role
        pod_spec["subdomain"] = spec.seat.rendezvous
        if spec.privileges.host_network:
            # On the host network the cluster DNS (and so the service name) is not used
            # unless asked for explicitly.
            pod_spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": spec.name,
            "namespace": spec.namespace,
            "labels": dict(spec.labels),
            # A burn-in must not be evicted by a scale-down halfway through its measurement.
            "annotations": {SAFE_TO_EVICT: "false"},
            "ownerReferences": [_owner(spec)],
        },
        "spec": pod_spec,
    }


def service_of(rendezvous: Rendezvous) -> dict[str, Any]:
    """The headless rendezvous Service of a Pair or Group attempt (§2.8): no cluster IP, no
    ports, not-ready addresses published, selecting the attempt's pods by run, test and
    attempt (so a retry never resolves its predecessor's dead peer), owned by the run."""
    labels = {
        RUN_LABEL: rendezvous.run,
        TEST_LABEL: rendezvous.test,
        ATTEMPT_LABEL: str(rendezvous.attempt),
    }
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": rendezvous.name,
            "namespace": rendezvous.namespace,
            "labels": dict(labels),
            "ownerReferences": [owner_reference(rendezvous.run, rendezvous.run_uid)],
        },
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": dict(labels),
        },
    }
