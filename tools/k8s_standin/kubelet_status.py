"""The Pod and Node status documents the stand-in kubelet writes, as pure builders.

They are shaped as a real kubelet's are where our code reads them (§2.7 and §2.7a: phase,
``startTime``, the ``runner`` container's waiting/running/terminated state with exit code and
reason, the Ready and PodScheduled conditions, a pod-level reason such as DeadlineExceeded)
and never hold a ``null``: the Pod schema has none where it says string, object or array.
"""

from __future__ import annotations

import os
import platform
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

KUBELET_VERSION = "v1.30.0-glimmer-standin"
RUNTIME = "standin"
_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64", "ppc64le": "ppc64le"}


def now() -> str:
    """An RFC 3339 timestamp in seconds, as the API writes them."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def condition(kind: str, ok: bool, at: str, reason: str = "", message: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"type": kind, "status": "True" if ok else "False"}
    out["lastTransitionTime"] = at
    if reason:
        out["reason"] = reason
    if message:
        out["message"] = message
    return out


def waiting(reason: str, message: str = "") -> dict[str, Any]:
    state: dict[str, Any] = {"reason": reason}
    if message:
        state["message"] = message
    return {"waiting": state}


def running(started_at: str) -> dict[str, Any]:
    return {"running": {"startedAt": started_at}}


def terminated(
    exit_code: int, reason: str, started_at: str, finished_at: str, message: str = "", pid: int = 0
) -> dict[str, Any]:
    state: dict[str, Any] = {
        "exitCode": exit_code,
        "reason": reason,
        "startedAt": started_at,
        "finishedAt": finished_at,
    }
    if message:
        state["message"] = message
    if pid:
        state["containerID"] = f"{RUNTIME}://{pid}"
    return {"terminated": state}


def container_status(
    container: Mapping[str, Any], state: Mapping[str, Any], *, ready: bool, pid: int = 0
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": container["name"],
        "image": str(container.get("image") or ""),
        "imageID": "",
        "ready": ready,
        "restartCount": 0,
        "started": "running" in state,
        "state": dict(state),
        "lastState": {},
    }
    if pid:
        out["containerID"] = f"{RUNTIME}://{pid}"
    return out


def pod_conditions(
    at: str, *, initialized: bool, ready: bool, reason: str = ""
) -> list[dict[str, Any]]:
    """PodScheduled (the pod is on this node), Initialized, ContainersReady and Ready."""
    return [
        condition("PodScheduled", True, at),
        condition("Initialized", initialized, at),
        condition("ContainersReady", ready, at, "" if ready else reason),
        condition("Ready", ready, at, "" if ready else reason),
    ]


def unschedulable(message: str, at: str) -> dict[str, Any]:
    """The status the scheduler writes on a pod no node fits."""
    return {
        "phase": "Pending",
        "conditions": [condition("PodScheduled", False, at, "Unschedulable", message)],
    }


def node_object(name: str, address: str, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A Node as the stand-in kubelet registers it: the well-known labels, its address, this
    machine's cpu and memory as capacity and allocatable, no GPU, Ready."""
    arch = _ARCH.get(platform.machine(), platform.machine())
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/arch": arch,
                "kubernetes.io/os": "linux",
                **(labels or {}),
            },
        },
        "spec": {},
        "status": node_status(name, address, arch),
    }


def _memory_ki() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 1024
    except (ValueError, OSError):
        return 8 * 1024 * 1024


def node_status(name: str, address: str, arch: str) -> dict[str, Any]:
    at = now()
    resources = {"cpu": str(os.cpu_count() or 1), "memory": f"{_memory_ki()}Ki", "pods": "110"}
    boot = str(uuid.uuid5(uuid.NAMESPACE_DNS, name))
    return {
        "addresses": [
            {"type": "InternalIP", "address": address},
            {"type": "Hostname", "address": name},
        ],
        "capacity": dict(resources),
        "allocatable": dict(resources),
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "stand-in kubelet is posting ready status",
                "lastHeartbeatTime": at,
                "lastTransitionTime": at,
            }
        ],
        "nodeInfo": {
            "architecture": arch,
            "bootID": boot,
            "containerRuntimeVersion": f"{RUNTIME}://1",
            "kernelVersion": platform.release(),
            "kubeProxyVersion": KUBELET_VERSION,
            "kubeletVersion": KUBELET_VERSION,
            "machineID": boot.replace("-", ""),
            "operatingSystem": "linux",
            "osImage": "glimmer stand-in node",
            "systemUUID": boot,
        },
    }


def internal_ip(node: Mapping[str, Any]) -> str | None:
    """A Node's InternalIP, as its status lists it."""
    addresses: Sequence[Mapping[str, Any]] = (node.get("status") or {}).get("addresses") or []
    for a in addresses:
        if a.get("type") == "InternalIP" and a.get("address"):
            return str(a["address"])
    return None
