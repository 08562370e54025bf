"""What a finished Workflow leaves for its Certification and for ``glimmer certify status``:
ConfigMap ``<workflow>-result`` (owned by the Workflow) with the category's result document
(``category.json``, :func:`glimmer.certify.result.category_to_doc`) and the target it ran on
(``target.json``: the certified nodes as the core saw them, the excluded ones and why), and
ConfigMap ``<cert>-report`` (owned by the Certification) with the whole result document
(``result.json``, :func:`glimmer.certify.result.to_doc`).

The target travels with the category because the report is assembled by the core's own
:func:`glimmer.certify.run.cert_result` from exactly the nodes the categories ran on, not from
a Node list read later (a node cordoned since would change the report).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from glimmer.certify.grouping import NodeInfo, Taint
from glimmer.certify.report_names import CATEGORY_KEY as CATEGORY_KEY
from glimmer.certify.report_names import REPORT_KEY as REPORT_KEY
from glimmer.certify.report_names import report_name as report_name
from glimmer.certify.report_names import result_name as result_name
from glimmer.certify.run import Targeted

Obj = dict[str, Any]

TARGET_KEY = "target.json"
PLATFORM_KEY = "platform"


def node_doc(n: NodeInfo) -> Obj:
    return {
        "name": n.name,
        "labels": dict(n.labels),
        "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in n.taints],
        "unschedulable": n.unschedulable,
    }


def node_from_doc(d: Mapping[str, Any]) -> NodeInfo:
    return NodeInfo(
        name=str(d["name"]),
        labels={str(k): str(v) for k, v in (d.get("labels") or {}).items()},
        taints=tuple(
            Taint(str(t["key"]), str(t.get("value", "")), str(t.get("effect", "NoSchedule")))
            for t in d.get("taints") or ()
        ),
        unschedulable=bool(d.get("unschedulable", False)),
    )


def nodes_text(nodes: Sequence[NodeInfo]) -> str:
    return json.dumps([node_doc(n) for n in nodes], sort_keys=True, separators=(",", ":"))


def nodes_from_text(text: str) -> list[NodeInfo]:
    return [node_from_doc(d) for d in json.loads(text)]


def target_text(target: Targeted) -> str:
    return json.dumps(
        {
            "gpu": target.gpu,
            "nodes": [node_doc(n) for n in target.nodes],
            "excluded": list(target.excluded),
            "exclusionReason": target.exclusion_reason,
        },
        sort_keys=True,
        separators=(",", ":"),
    )


def target_from_text(text: str) -> Targeted:
    d = json.loads(text)
    return Targeted(
        gpu=str(d.get("gpu", "")),
        nodes=tuple(node_from_doc(n) for n in d.get("nodes") or ()),
        excluded=tuple(str(n) for n in d.get("excluded") or ()),
        exclusion_reason=str(d.get("exclusionReason", "")),
    )


def configmap(
    name: str, namespace: str, data: Mapping[str, str], owner: Obj, labels: Mapping[str, str]
) -> Obj:
    """A ConfigMap owned by ``owner`` (an owner reference: deleted with it)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(labels),
            "ownerReferences": [owner],
        },
        "data": dict(data),
    }
