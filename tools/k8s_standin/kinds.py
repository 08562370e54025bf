"""What the API server does specially for some kinds: the defaults it fills in on create
(a Pod's restart policy and Pending phase, a Service's cluster IP, a Namespace's phase), the
fields an update may not change (a Pod's spec, a Service's clusterIP), and a CRD's
``Established`` status."""

from __future__ import annotations

import datetime
from collections.abc import Callable

from tools.k8s_standin import errors
from tools.k8s_standin.resources import ResourceType
from tools.k8s_standin.store import Obj, meta

# The fields of a Pod's spec an update may change (the rest is immutable once created).
POD_IMMUTABLE = (
    "Forbidden: pod updates may not change fields other than `spec.containers[*].image`, "
    "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only "
    "additions to existing tolerations) or `spec.terminationGracePeriodSeconds`"
)
POD_MUTABLE = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds")


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def later(seconds: int) -> str:
    at = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=seconds)
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def established(crd: Obj) -> Obj:
    """A CRD as the API server stores it once its names are accepted."""
    out = dict(crd)
    names = crd.get("spec", {}).get("names", {})
    out["status"] = {
        "acceptedNames": names,
        "storedVersions": [
            v["name"] for v in crd.get("spec", {}).get("versions", []) if v.get("storage")
        ],
        "conditions": [
            {
                "type": "NamesAccepted",
                "status": "True",
                "reason": "NoConflicts",
                "message": "no conflicts found",
                "lastTransitionTime": now(),
            },
            {
                "type": "Established",
                "status": "True",
                "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted",
                "lastTransitionTime": now(),
            },
        ],
    }
    return out


def defaults(rtype: ResourceType, obj: Obj, next_ip: Callable[[], str]) -> None:
    """The fields the API server fills in on create (the few a client may read back)."""
    if rtype.key == ("", "pods"):
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict):
            spec.setdefault("restartPolicy", "Always")
            spec.setdefault("terminationGracePeriodSeconds", 30)
            spec.setdefault("dnsPolicy", "ClusterFirst")
            spec.setdefault("schedulerName", "default-scheduler")
        status = obj.setdefault("status", {})
        if isinstance(status, dict):
            status.setdefault("phase", "Pending")
    elif rtype.key == ("", "services"):
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict):
            spec.setdefault("type", "ClusterIP")
            if "clusterIP" not in spec:
                spec["clusterIP"] = next_ip()
            spec.setdefault("clusterIPs", [spec["clusterIP"]])
    elif rtype.key == ("", "namespaces"):
        obj.setdefault("spec", {"finalizers": ["kubernetes"]})
        obj["status"] = {"phase": "Active"}


def check_immutable(rtype: ResourceType, old: Obj, new: Obj) -> None:
    """422 for an update of what the kind makes immutable: a Pod's spec, a clusterIP."""
    name = meta(old)["name"]
    if rtype.key == ("", "pods"):
        before = {k: v for k, v in (old.get("spec") or {}).items() if k not in POD_MUTABLE}
        after = {k: v for k, v in (new.get("spec") or {}).items() if k not in POD_MUTABLE}
        if before != after:
            raise errors.invalid(
                rtype,
                name,
                [
                    errors.Cause(
                        "spec",
                        POD_IMMUTABLE,
                        "FieldValueForbidden",
                    )
                ],
            )
    if rtype.key == ("", "services"):
        before_ip = (old.get("spec") or {}).get("clusterIP")
        after_ip = (new.get("spec") or {}).get("clusterIP", before_ip)
        if after_ip != before_ip:
            raise errors.invalid(
                rtype,
                name,
                [errors.Cause("spec.clusterIP", "Invalid value: field is immutable")],
            )
