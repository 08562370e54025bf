"""A cluster's Nodes as the certification core sees them (:class:`NodeInfo`).

The core selects targets and groups nodes from a node's name, labels, taints and cordon — what
``kubectl get node -o json`` says, GPU feature discovery's labels included — so the cluster
substrate's ``nodes()`` is one LIST of Nodes turned into NodeInfos, read fresh each time (a
cordon or a label written since the last replay counts at once), sorted by name so the same
cluster always gives the core the same order (§3.2 "sort by name": replay stays deterministic).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lightkube import Client

from glimmer.backends.kubernetes.errors import api_call
from glimmer.backends.kubernetes.resources import NODES, as_dict
from glimmer.certify.grouping import NodeInfo, Taint


def taints_of(node: Mapping[str, Any]) -> tuple[Taint, ...]:
    """A Node's ``spec.taints`` as Taints (a taint without a value has value "")."""
    out = []
    for taint in (node.get("spec") or {}).get("taints") or ():
        if not isinstance(taint, Mapping) or not taint.get("key"):
            continue  # the API never stores one; a hand-made object must not break a replay
        out.append(
            Taint(
                key=str(taint["key"]),
                value=str(taint.get("value") or ""),
                effect=str(taint.get("effect") or "NoSchedule"),
            )
        )
    return tuple(out)


def node_info(node: Mapping[str, Any]) -> NodeInfo:
    """The core's view of one Node object (plain JSON data)."""
    meta = node.get("metadata") or {}
    return NodeInfo(
        name=str(meta.get("name") or ""),
        labels={str(k): str(v) for k, v in (meta.get("labels") or {}).items()},
        taints=taints_of(node),
        unschedulable=bool((node.get("spec") or {}).get("unschedulable", False)),
    )


def list_node_objects(client: Client) -> list[dict[str, Any]]:
    """Every Node as plain JSON, sorted by name."""
    with api_call("list nodes"):
        found = [as_dict(n) for n in client.list(NODES)]
    return sorted(found, key=lambda n: str((n.get("metadata") or {}).get("name") or ""))


def cluster_nodes(client: Client) -> list[NodeInfo]:
    """Every node of the cluster as a NodeInfo, sorted by name (one LIST, uncached)."""
    return [node_info(n) for n in list_node_objects(client)]
