"""Server-side ``Table`` output, what ``kubectl get`` asks for (``Accept: application/json;
as=Table;v=v1;g=meta.k8s.io``) and prints as columns.

A custom resource's columns are its CRD's ``additionalPrinterColumns`` (JSONPath subset:
``.a.b``, ``[n]`` (``[-1]`` from the end), ``[*]``, slices ``[a:b]`` (``[-1:]``: the last, as
Trainer's TrainJob column reads its newest condition) and ``[?(@.k=="v")]``; several results
are joined by spaces; a
``date`` column is shown as an age, as the API server does); Pods and Nodes get the columns
kubectl shows for them; anything else gets Name and Age.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

from tools.k8s_standin.resources import ResourceType
from tools.k8s_standin.store import Obj

_STEP = re.compile(
    r"\.([A-Za-z0-9_-]+)|\[(-?\d+|\*)\]|\[(-?\d*:-?\d*)\]"
    r"|\[\?\(@\.([A-Za-z0-9_.-]+)\s*==\s*[\"']([^\"']*)[\"']\)\]"
)


def _steps(path: str) -> list[re.Match[str]] | None:
    """The steps of ``path``, None when it is outside the subset."""
    out, pos = [], 0
    while pos < len(path):
        m = _STEP.match(path, pos)
        if m is None:
            return None
        out.append(m)
        pos = m.end()
    return out


def supported(path: str) -> bool:
    """Whether ``path`` is in the subset (a printer column outside it would print nothing)."""
    return _steps(path) is not None


def jsonpath(obj: Any, path: str) -> list[Any]:
    """Every value ``path`` reaches in ``obj`` (empty when it reaches nothing)."""
    steps = _steps(path)
    if steps is None:
        return []
    nodes = [obj]
    for m in steps:
        field, index, span, fkey, fval = m.groups()
        out: list[Any] = []
        for node in nodes:
            if field is not None and isinstance(node, Mapping) and field in node:
                out.append(node[field])
            elif index == "*" and isinstance(node, list):
                out.extend(node)
            elif (
                index is not None
                and index != "*"
                and isinstance(node, list)
                and -len(node) <= int(index) < len(node)
            ):
                out.append(node[int(index)])
            elif span is not None and isinstance(node, list):
                start, _, stop = span.partition(":")
                out.extend(node[int(start) if start else None : int(stop) if stop else None])
            elif fkey is not None and isinstance(node, list):
                out.extend(
                    i for i in node if [str(v) for v in jsonpath(i, "." + fkey)][:1] == [fval]
                )
        nodes = out
    return nodes


def age(timestamp: Any) -> str:
    """``5s``, ``3m``, ``2h``, ``4d`` — kubectl's short human duration."""
    if not isinstance(timestamp, str):
        return "<unknown>"
    try:
        then = datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return "<invalid>"
    seconds = max(0, int((datetime.datetime.now(datetime.UTC) - then).total_seconds()))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 3 * 3600:
        return f"{seconds // 60}m"
    if seconds < 48 * 3600:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


def _cell(values: list[Any], kind: str) -> Any:
    if not values:
        return None
    if kind == "date":
        return age(values[0])
    if len(values) == 1:
        return values[0]
    return " ".join(str(v) for v in values)


def _pod_cells(pod: Obj) -> list[Any]:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    containers = (pod.get("spec") or {}).get("containers") or []
    ready = sum(1 for s in statuses if s.get("ready"))
    phase = (pod.get("status") or {}).get("phase", "Pending")
    if pod.get("metadata", {}).get("deletionTimestamp"):
        phase = "Terminating"
    restarts = sum(int(s.get("restartCount", 0)) for s in statuses)
    return [
        f"{ready}/{len(containers)}",
        phase,
        restarts,
        age(pod["metadata"].get("creationTimestamp")),
        (pod.get("spec") or {}).get("nodeName") or "<none>",
    ]


def _node_cells(node: Obj) -> list[Any]:
    conditions = (node.get("status") or {}).get("conditions") or []
    ready = next((c.get("status") for c in conditions if c.get("type") == "Ready"), "Unknown")
    status = "Ready" if ready == "True" else "NotReady"
    if (node.get("spec") or {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    return [status, age(node["metadata"].get("creationTimestamp"))]


def _event_cells(event: Obj) -> list[Any]:
    involved = event.get("involvedObject") or event.get("regarding") or {}
    seen = (
        event.get("lastTimestamp")
        or event.get("eventTime")
        or event["metadata"].get("creationTimestamp")
    )
    target = f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}"
    return [
        age(seen),
        event.get("type", ""),
        event.get("reason", ""),
        target,
        event.get("message") or event.get("note") or "",
    ]


def _plain(*names: str) -> list[dict[str, Any]]:
    return [
        {"name": n, "type": "string", "format": "", "description": n, "priority": 0} for n in names
    ]


def columns(rtype: ResourceType) -> list[dict[str, Any]]:
    name = {
        "name": "Name",
        "type": "string",
        "format": "name",
        "description": "Name",
        "priority": 0,
    }
    if rtype.crd_version is not None:
        extra = rtype.crd_version.get("additionalPrinterColumns")
        if extra:
            return [name] + [
                {
                    "name": c["name"],
                    "type": c.get("type", "string"),
                    "format": c.get("format", ""),
                    "description": c.get("description", ""),
                    "priority": int(c.get("priority", 0)),
                }
                for c in extra
            ]
    if rtype.key == ("", "pods"):
        return [name] + [
            {"name": n, "type": t, "format": "", "description": n, "priority": p}
            for n, t, p in (
                ("Ready", "string", 0),
                ("Status", "string", 0),
                ("Restarts", "integer", 0),
                ("Age", "string", 0),
                ("Node", "string", 1),
            )
        ]
    if rtype.kind == "Event":
        return [name, *_plain("Last Seen", "Type", "Reason", "Object", "Message")]
    if rtype.key == ("", "nodes"):
        return [
            name,
            {"name": "Status", "type": "string", "format": "", "description": "", "priority": 0},
            {"name": "Age", "type": "string", "format": "", "description": "", "priority": 0},
        ]
    return [name, {"name": "Age", "type": "string", "format": "", "description": "", "priority": 0}]


def cells(rtype: ResourceType, obj: Obj) -> list[Any]:
    name = obj["metadata"]["name"]
    if rtype.crd_version is not None and rtype.crd_version.get("additionalPrinterColumns"):
        return [name] + [
            _cell(jsonpath(obj, c["jsonPath"]), c.get("type", "string"))
            for c in rtype.crd_version["additionalPrinterColumns"]
        ]
    if rtype.key == ("", "pods"):
        return [name, *_pod_cells(obj)]
    if rtype.key == ("", "nodes"):
        return [name, *_node_cells(obj)]
    if rtype.kind == "Event":
        return [name, *_event_cells(obj)]
    return [name, age(obj["metadata"].get("creationTimestamp"))]


def _row_object(obj: Obj, include: str) -> Obj:
    if include == "Object":
        return obj
    if include == "None":
        return {}
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj["metadata"],
    }


def table(
    rtype: ResourceType,
    objs: list[Obj],
    rv: str,
    include: str = "Metadata",
    with_columns: bool = True,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": rv},
        "rows": [{"cells": cells(rtype, o), "object": _row_object(o, include)} for o in objs],
    }
    out["columnDefinitions"] = columns(rtype) if with_columns else []
    return out


def wants_table(accept: str) -> bool:
    return "as=Table" in accept
