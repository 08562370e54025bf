"""Which node the stand-in's scheduler binds a pod without nodeName to (kubelet_scheduler)."""

from __future__ import annotations

from typing import Any

from tools.k8s_standin.kubelet_scheduler import choose, fits, taints_of

HOSTNAME = "kubernetes.io/hostname"
CORDON_TOLERATION = {
    "key": "node.kubernetes.io/unschedulable",
    "operator": "Exists",
    "effect": "NoSchedule",
}


def _node(
    name: str, *, unschedulable: bool = False, taints: list[Any] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = taints
    return {"metadata": {"name": name, "labels": {HOSTNAME: name, "zone": "a"}}, "spec": spec}


def _pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": spec}


def test_a_hostname_node_selector_picks_that_node() -> None:
    nodes = [_node("node-1"), _node("node-2"), _node("node-3")]
    assert choose(_pod(nodeSelector={HOSTNAME: "node-2"}), nodes) == ("node-2", "")


def test_without_constraints_the_first_node_by_name_is_chosen() -> None:
    assert choose(_pod(), [_node("node-b"), _node("node-a")]) == ("node-a", "")


def test_a_cordoned_node_takes_only_a_pod_that_tolerates_the_unschedulable_taint() -> None:
    nodes = [_node("node-1", unschedulable=True)]
    selector = {HOSTNAME: "node-1"}
    node, message = choose(_pod(nodeSelector=selector), nodes)
    assert node is None
    assert message == (
        "0/1 nodes are available: 1 node(s) had untolerated taint "
        "{node.kubernetes.io/unschedulable: NoSchedule}."
    )
    assert choose(_pod(nodeSelector=selector, tolerations=[CORDON_TOLERATION]), nodes) == (
        "node-1",
        "",
    )


def test_a_no_schedule_taint_needs_a_matching_toleration() -> None:
    node = _node("node-1", taints=[{"key": "gpu", "value": "broken", "effect": "NoSchedule"}])
    assert fits({}, node) == "had untolerated taint {gpu=broken: NoSchedule}"
    wrong = {"tolerations": [{"key": "gpu", "operator": "Equal", "value": "ok"}]}
    assert fits(wrong, node) is not None
    right = {"tolerations": [{"key": "gpu", "operator": "Equal", "value": "broken"}]}
    assert fits(right, node) is None
    assert fits({"tolerations": [{"operator": "Exists"}]}, node) is None


def test_a_prefer_no_schedule_taint_does_not_block() -> None:
    node = _node("node-1", taints=[{"key": "x", "effect": "PreferNoSchedule"}])
    assert fits({}, node) is None


def test_required_node_affinity_on_the_hostname_label_and_the_name_field() -> None:
    def affinity(term: dict[str, Any]) -> dict[str, Any]:
        required = {"nodeSelectorTerms": [term]}
        return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}

    nodes = [_node("node-1"), _node("node-2")]
    by_label = {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": ["node-2"]}]}
    assert choose(_pod(affinity=affinity(by_label)), nodes) == ("node-2", "")
    by_field = {
        "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-1"]}]
    }
    assert choose(_pod(affinity=affinity(by_field)), nodes) == ("node-2", "")
    absent = {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}
    node, message = choose(_pod(affinity=affinity(absent)), nodes)
    assert node is None
    assert (
        message == "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
    )


def test_no_node_at_all_is_said_so() -> None:
    assert choose(_pod(), []) == (None, "0/0 nodes are available.")


def test_spec_unschedulable_stands_for_the_unschedulable_taint_once() -> None:
    taint = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    assert taints_of(_node("n", unschedulable=True)) == [taint]
    assert taints_of(_node("n", unschedulable=True, taints=[taint])) == [taint]
