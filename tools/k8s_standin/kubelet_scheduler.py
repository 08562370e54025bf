"""The stand-in's scheduler, as one pure choice: which node a pod without ``spec.nodeName`` is
bound to, or why none fits.

What it weighs is what our runner pods carry (podspec.py): ``nodeSelector`` (the hostname
label), required node affinity (``matchExpressions`` on labels, ``matchFields`` on
``metadata.name``), and taints against tolerations — a cordoned node (``spec.unschedulable``)
carries the ``node.kubernetes.io/unschedulable:NoSchedule`` taint, which our pods tolerate
because the run cordons a node before it places a pod there. Resources are not weighed — a
stand-in node has no real capacity to fit — except an extended resource (``nvidia.com/gpu``)
on a node whose allocatable declares it, as a simulated fleet's nodes do: there the pods
already placed on the node leave the rest for others, so the pods of one multi-node job that
may go to any of a group's hosts spread over them as on a cluster. Among several fitting nodes
the first by name wins, so a test knows where a pod lands.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Usage = Mapping[str, Mapping[str, float]]  # node -> extended resource -> amount placed

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
_BLOCKING = ("NoSchedule", "NoExecute")


def _expression_holds(expr: Mapping[str, Any], value: str | None) -> bool:
    op = expr.get("operator")
    values = expr.get("values") or []
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt") and value is not None and values:
        try:
            a, b = int(value), int(values[0])
        except ValueError:
            return False
        return a > b if op == "Gt" else a < b
    return False


def _term_holds(term: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    labels = node["metadata"].get("labels") or {}
    fields = {"metadata.name": node["metadata"]["name"]}
    exprs = term.get("matchExpressions") or []
    field_exprs = term.get("matchFields") or []
    if not exprs and not field_exprs:
        return False  # an empty term matches nothing, as the API documents
    return all(_expression_holds(e, labels.get(e.get("key", ""))) for e in exprs) and all(
        _expression_holds(e, fields.get(e.get("key", ""))) for e in field_exprs
    )


def _affinity_holds(pod_spec: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    required = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms")
    if not terms:
        return True
    return any(_term_holds(t, node) for t in terms)  # terms are ORed


def taints_of(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The node's taints, with the one ``spec.unschedulable`` stands for."""
    spec = node.get("spec") or {}
    taints: list[Mapping[str, Any]] = list(spec.get("taints") or [])
    if spec.get("unschedulable") and not any(t.get("key") == UNSCHEDULABLE_TAINT for t in taints):
        taints.append({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"})
    return taints


def _tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    effect = toleration.get("effect")
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key")
    if toleration.get("operator") == "Exists":
        return not key or key == taint.get("key")
    return key == taint.get("key") and (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated(pod_spec: Mapping[str, Any], node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The node's scheduling-blocking taints the pod does not tolerate."""
    tolerations: Sequence[Mapping[str, Any]] = pod_spec.get("tolerations") or []
    return [
        t
        for t in taints_of(node)
        if t.get("effect") in _BLOCKING and not any(_tolerates(o, t) for o in tolerations)
    ]


def extended_requests(pod_spec: Mapping[str, Any]) -> dict[str, float]:
    """The pod's requests of extended resources (a domain-prefixed name), limits standing in
    for requests as the API server defaults them."""
    out: dict[str, float] = {}
    for container in pod_spec.get("containers") or []:
        resources = container.get("resources") or {}
        asked = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        for name, value in asked.items():
            if "/" in name:
                try:
                    out[name] = out.get(name, 0.0) + float(value)
                except (TypeError, ValueError):
                    continue
    return out


def _short_of(pod_spec: Mapping[str, Any], node: Mapping[str, Any], used: Usage) -> str | None:
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    placed = used.get(str(node["metadata"]["name"])) or {}
    for name, amount in sorted(extended_requests(pod_spec).items()):
        if name not in allocatable:
            continue  # a node that does not declare it is not weighed (see the module's doc)
        try:
            have = float(allocatable[name])
        except (TypeError, ValueError):
            continue
        if placed.get(name, 0.0) + amount > have:
            return f"Insufficient {name}"
    return None


def fits(
    pod_spec: Mapping[str, Any], node: Mapping[str, Any], used: Usage | None = None
) -> str | None:
    """None when the pod may go to the node, else the scheduler's reason it may not."""
    labels = node["metadata"].get("labels") or {}
    selector: Mapping[str, str] = pod_spec.get("nodeSelector") or {}
    if any(labels.get(k) != v for k, v in selector.items()):
        return "didn't match Pod's node affinity/selector"
    if not _affinity_holds(pod_spec, node):
        return "didn't match Pod's node affinity/selector"
    blocking = untolerated(pod_spec, node)
    if blocking:
        t = blocking[0]
        value = f"={t['value']}" if t.get("value") else ""
        return f"had untolerated taint {{{t.get('key')}{value}: {t.get('effect')}}}"
    return _short_of(pod_spec, node, used or {})


def choose(
    pod: Mapping[str, Any],
    nodes: Iterable[Mapping[str, Any]],
    used: Usage | None = None,
    refused: Mapping[str, str] | None = None,
) -> tuple[str | None, str]:
    """(node name, "") for the first fitting node by name, else (None, the message a real
    scheduler writes on the PodScheduled=False condition). ``refused``: nodes another plugin
    (the DRA driver's claims) already turned down, with its reason."""
    pod_spec = pod.get("spec") or {}
    ordered = sorted(nodes, key=lambda n: str(n["metadata"]["name"]))
    reasons: dict[str, int] = {}
    for node in ordered:
        why = (refused or {}).get(str(node["metadata"]["name"])) or fits(pod_spec, node, used)
        if why is None:
            return str(node["metadata"]["name"]), ""
        reasons[why] = reasons.get(why, 0) + 1
    parts = ", ".join(f"{n} node(s) {why}" for why, n in sorted(reasons.items()))
    message = f"0/{len(ordered)} nodes are available" + (f": {parts}." if parts else ".")
    return None, message
