"""Workflow node discovery (specs/certify.md §3.2, §3.1 steps 1-4) — §9.2 scenario 40: cordoned
discovery, node order determinism, arch exclusion & fallback, capacity filter, exclusion
summary merging."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from glimmer.certify.discovery import (
    ARCHITECTURE_UNKNOWN,
    CORDONED_EVENT,
    HETEROGENEOUS_GPU_EVENT,
    NODE_DISCOVERY_ERROR,
    PARTITION_ERROR,
    ArchitectureUnknown,
    DiscoveryError,
    PartitionError,
    capacity_filter,
    check_nodes_required,
    choose_architecture,
    discover,
    discover_for_category,
    discover_for_workflow,
    discover_target_nodes,
    still_waiting,
    waiting_message,
    with_capacity,
    workload_gpus_per_node,
)
from glimmer.certify.platform.detect import HeterogeneousPlatform

H100 = "NVIDIA-H100-80GB-HBM3"
GB200 = "NVIDIA-GB200"


def node(
    name: str,
    product: str | None = H100,
    *,
    gpus: Any = None,
    cordoned: bool = False,
    gpu: bool = True,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    lab = dict(labels or {})
    if product:
        lab["nvidia.com/gpu.product"] = product
    if gpu:
        lab["nvidia.com/gpu.present"] = "true"
    spec: dict[str, Any] = {"unschedulable": cordoned}
    if taints:
        spec["taints"] = taints
    alloc = {} if gpus is None else {"nvidia.com/gpu": gpus}
    return {
        "metadata": {"name": name, "labels": lab},
        "spec": spec,
        "status": {"allocatable": alloc},
    }


def names(nodes: Any) -> list[str]:
    return [n["metadata"]["name"] for n in nodes]


def test_cordoned_gpu_nodes_are_dropped_and_reported_sorted() -> None:
    nodes = [
        node("n3", cordoned=True),
        node("n1"),
        node("n2", cordoned=True),
        node("cpu", product=None, gpu=False, cordoned=True),  # not a GPU node: not reported
    ]
    got = discover_target_nodes(nodes, None)
    assert got.names == ("n1",)
    assert got.cordoned == ("n2", "n3")


def test_a_target_including_unschedulable_keeps_cordoned_nodes() -> None:
    nodes = [node("n2", cordoned=True), node("n1")]
    got = discover_target_nodes(nodes, {"includeUnschedulable": True})
    assert (got.names, got.cordoned) == (("n1", "n2"), ())
    # The documented spelling of the same opt-in: the cordon taint as a selector.
    cordon = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
    tainted = [node("n2", cordoned=True, taints=cordon), node("n1")]
    sel = {"taintSelectors": [{"key": "node.kubernetes.io/unschedulable"}]}
    assert discover_target_nodes(tainted, sel).names == ("n2",)


def test_only_nodes_labelled_gpu_present_are_kept() -> None:
    nodes = [node("a"), node("b", gpu=False), {"metadata": {"name": "c"}}]
    assert discover_target_nodes(nodes, None).names == ("a",)


def test_selector_expressions_names_and_taints_filter_in_turn() -> None:
    nodes = [
        node("a", labels={"pool": "x", "rack": "r1"}),
        node(
            "b",
            labels={"pool": "x", "rack": "r2"},
            taints=[{"key": "dedicated", "value": "burn", "effect": "NoSchedule"}],
        ),
        node(
            "c",
            labels={"pool": "x", "rack": "r2"},
            taints=[{"key": "dedicated", "value": "other", "effect": "NoSchedule"}],
        ),
        node("d", labels={"pool": "y", "rack": "r2"}),
    ]
    sel: dict[str, Any] = {"nodeSelector": {"pool": "x"}}
    assert discover_target_nodes(nodes, sel).names == ("a", "b", "c")
    sel["matchExpressions"] = [{"key": "rack", "operator": "In", "values": ["r2"]}]
    assert discover_target_nodes(nodes, sel).names == ("b", "c")
    sel["taintSelectors"] = [{"key": "dedicated"}]  # value and effect omitted: any
    assert discover_target_nodes(nodes, sel).names == ("b", "c")
    sel["taintSelectors"] = [{"key": "dedicated", "value": "burn", "effect": ""}]
    assert discover_target_nodes(nodes, sel).names == ("b",)
    sel["nodeNames"] = ["c"]
    assert discover_target_nodes(nodes, sel).names == ()


def test_node_order_is_by_name_whatever_the_api_order() -> None:
    nodes = [node(f"gpu-{i:03d}", cordoned=i % 7 == 0) for i in range(40)]
    want = discover_target_nodes(nodes, None)
    for seed in range(5):
        shuffled = list(nodes)
        random.Random(seed).shuffle(shuffled)
        got = discover_target_nodes(shuffled, None)
        assert got == want
    assert list(want.names) == sorted(want.names)


def test_the_majority_architecture_is_kept_and_the_others_excluded() -> None:
    nodes = [node("a", GB200), node("b"), node("c"), node("d", product=None)]
    got = choose_architecture(nodes)
    assert got.arch == "h100"
    assert names(got.nodes) == ["b", "c"]
    assert got.excluded == ("a", "d")
    assert got.reason == "target set has more than one GPU architecture; certified h100 only"


def test_a_tie_keeps_the_earliest_nodes_architecture() -> None:
    assert choose_architecture([node("a", GB200), node("b")]).arch == "gb200"


def test_unlabelled_nodes_fall_back_to_the_selector_product() -> None:
    nodes = [node("a", product=None), node("b", product=None)]
    got = choose_architecture(nodes, {"nvidia.com/gpu.product": GB200})
    assert (got.arch, names(got.nodes), got.excluded) == ("gb200", ["a", "b"], ())


def test_no_architecture_anywhere_is_refused_naming_the_label() -> None:
    with pytest.raises(
        ArchitectureUnknown, match=r"nvidia\.com/gpu\.product label is required"
    ) as e:
        choose_architecture([node("a", product=None)])
    assert e.value.reason == ARCHITECTURE_UNKNOWN


def test_no_matching_node_is_a_node_discovery_error() -> None:
    with pytest.raises(
        DiscoveryError, match=r"No target nodes found matching orchestration target"
    ) as e:
        discover([node("a")], {"nodeSelector": {"pool": "none"}})
    assert e.value.reason == NODE_DISCOVERY_ERROR
    assert e.value.location.field == "spec.orchestration.target"


def test_workload_gpus_per_node_is_the_largest_request_anywhere() -> None:
    template = {
        "spec": {
            "workload": {
                "trainJob": {
                    "trainer": {"resourcesPerNode": {"limits": {"nvidia.com/gpu": 4, "cpu": "8"}}}
                }
            }
        }
    }
    deps = [
        {
            "kind": "TrainingRuntime",
            "spec": {"x": [{"resources": {"requests": {"nvidia.com/gpu": "8"}}}]},
        }
    ]
    assert workload_gpus_per_node(template) == 4
    assert workload_gpus_per_node(template, deps) == 8
    assert workload_gpus_per_node({"spec": {}}) == 0


def test_the_capacity_filter_keeps_unknown_and_zero_and_drops_short() -> None:
    nodes = [
        node("a", gpus="8"),
        node("b", gpus="4"),
        node("c"),
        node("d", gpus="0"),
        node("e", gpus=2),
    ]
    cut = capacity_filter(nodes, 8)
    assert names(cut.nodes) == ["a", "c", "d"]
    assert cut.short == (("b", 4), ("e", 2))
    assert cut.reason == (
        "2 node(s) matched the target but have insufficient GPU capacity, the workload requests 8 "
        "nvidia.com/gpu per node: b has 4, e has 2"
    )
    assert capacity_filter(nodes, 0).nodes == tuple(nodes)


def test_every_node_short_is_a_partition_error_naming_the_best() -> None:
    with pytest.raises(
        PartitionError, match=r"best available is 4 across 2 matching node\(s\)"
    ) as e:
        capacity_filter([node("a", gpus="2"), node("b", gpus="4")], 8)
    assert e.value.reason == PARTITION_ERROR
    assert "Lower gpusPerNode or target nodes with more GPUs" in e.value.message


def test_the_exclusion_summary_merges_every_cause_with_dots() -> None:
    nodes = [node("a", gpus="8"), node("b", gpus="2"), node("c", cordoned=True), node("d", GB200)]
    found = with_capacity(discover(nodes, None), 8)
    assert found.names == ("a",)
    assert found.excluded_nodes == ("b", "c", "d")
    assert found.exclusion_reason == (
        "1 node(s) matched the target but were unschedulable (cordoned): c. "
        "target set has more than one GPU architecture; certified h100 only. "
        "1 node(s) matched the target but have insufficient GPU capacity, the workload requests 8 "
        "nvidia.com/gpu per node: b has 2"
    )
    assert [e[1] for e in found.events()] == [CORDONED_EVENT, HETEROGENEOUS_GPU_EVENT]
    clean = with_capacity(discover([node("a", gpus="8")], None), 8)
    assert (clean.exclusion_reason, clean.excluded_nodes, clean.events()) == ("", (), [])


def test_too_few_nodes_names_the_causes_and_the_remedies() -> None:
    found = discover([node("a"), node("b", cordoned=True)], None)
    assert check_nodes_required(0, found) == 1
    assert check_nodes_required(1, found) == 1
    with pytest.raises(PartitionError) as e:
        check_nodes_required(2, found)
    assert e.value.message == (
        "Not enough schedulable nodes: need 2, found 1 (1 node(s) matched the target but were "
        "unschedulable (cordoned): b). Set nodesPerJob to 1, or narrow the target to one "
        "architecture, or lower gpusPerNode"
    )


T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_certification_waits_five_minutes_for_nodes() -> None:
    assert still_waiting(T0, T0 + timedelta(minutes=4, seconds=59))
    assert not still_waiting(T0, T0 + timedelta(minutes=5))
    msg = waiting_message({"nodeSelector": {"pool": "gpu"}}, T0, T0 + timedelta(seconds=90))
    assert msg == (
        "No schedulable GPU nodes match target nodeSelector pool=gpu; waiting 3m30s more for "
        "nodes to join"
    )
    assert "<all nodes>" in waiting_message(None, T0, T0 + timedelta(minutes=9))
    assert "waiting 0s more" in waiting_message(None, T0, T0 + timedelta(minutes=9))


def test_the_workflow_path_needs_one_platform_the_category_path_takes_the_first() -> None:
    aws = node("a")
    aws["spec"]["providerID"] = "aws:///i-1"
    gcp = node("b")
    gcp["spec"]["providerID"] = "gce://p/z/b"
    assert discover_for_category([gcp, aws], None).platform == "aws"  # "a" sorts first
    assert discover_for_workflow([aws], None).platform == "aws"
    with pytest.raises(HeterogeneousPlatform, match=r"aws: a; gcp: b"):
        discover_for_workflow([gcp, aws], None)
    # Only discovered nodes count: a cordoned node on another platform is no disagreement.
    gcp["spec"]["unschedulable"] = True
    assert discover_for_workflow([gcp, aws], None).platform == "aws"
