"""Platform detection from Node objects (specs/certify.md §3.6) and the NIC resource of an
on-prem GB200/GB300 fleet (§9.2 scenario 34 "on-prem autodetect, ambiguous NIC"; scenario 40
"NIC detection")."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.certify.grouping import UNSCHEDULABLE_TAINT, NodeInfo, Taint
from glimmer.certify.platform.detect import (
    HETEROGENEOUS_PLATFORM,
    NIC_AMBIGUOUS,
    NIC_NONE,
    NIC_SHORT,
    HeterogeneousPlatform,
    agreed_platform,
    detect_nic,
    first_node_platform,
    node_object,
    platform_of,
    refuse_ambiguous_nic,
)
from glimmer.certify.platform.errors import PlatformError


def node(
    name: str,
    provider: str = "",
    labels: dict[str, str] | None = None,
    alloc: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec = {"providerID": provider} if provider else {}
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
        "status": {"allocatable": alloc or {}},
    }


@pytest.mark.parametrize(
    ("provider", "labels", "platform"),
    [
        ("", {}, "onprem"),
        ("", {"kubernetes.io/hostname": "forge-gpu-01"}, "forge"),
        ("", {"nke.nvidia.com/site-name": "sjc"}, "forge"),
        ("aws:///us-east-1a/i-0abc", {}, "aws"),
        ("gce://proj/us-central1-a/gke-node", {}, "gcp"),
        ("azure:///subscriptions/x/vm-0", {}, "azure"),
        ("ocid1.instance.oc1.iad.abc", {}, "oci"),
        ("openstack:///a1b2", {}, "onprem"),
        ("nscale://region/n-1", {}, "nscale"),
        ("kubevirt://ns/vm-1", {"node-role.together.ai/worker": ""}, "togetherai"),
        ("kubevirt://ns/vm-1", {}, "onprem"),
        ("metal3://ns/bmh-1", {}, "mistral"),
        ("vsphere://4201", {}, "onprem"),
        # A forge hostname does not outvote a providerID.
        ("aws:///x", {"kubernetes.io/hostname": "forge-1"}, "aws"),
    ],
)
def test_platform_follows_the_provider_id_table(
    provider: str, labels: dict[str, str], platform: str
) -> None:
    assert platform_of(node("n", provider, labels)) == platform


def test_a_node_without_spec_or_labels_is_on_prem() -> None:
    assert platform_of({"metadata": {"name": "bare"}}) == "onprem"


def test_the_certification_path_takes_the_first_node() -> None:
    nodes = [node("a", "aws:///1"), node("b", "gce://2")]
    assert first_node_platform(nodes) == "aws"
    assert first_node_platform([]) == "onprem"


def test_the_workflow_path_needs_every_node_to_agree() -> None:
    assert agreed_platform([node("a", "aws:///1"), node("b", "aws:///2")]) == "aws"
    assert agreed_platform([]) == "onprem"


def test_a_mixed_platform_target_names_the_disagreeing_nodes() -> None:
    nodes = [node("a", "aws:///1"), node("c", ""), node("b", "aws:///2")]
    with pytest.raises(HeterogeneousPlatform, match=r"aws: a, b; onprem: c") as got:
        agreed_platform(nodes)
    assert got.value.reason == HETEROGENEOUS_PLATFORM
    assert got.value.location.field == "spec.orchestration.target"


GB = {"platform": "onprem", "arch": "gb200"}


def test_the_one_rdma_resource_every_node_has_enough_of_is_picked() -> None:
    nodes = [node(f"n{i}", alloc={"rdma/ib": "8", "cpu": "64"}) for i in range(3)]
    got = detect_nic(nodes, 8, **GB)
    assert (got.resource, got.message, got.declined) == ("rdma/ib", "", "")


def test_mlnxnics_is_a_candidate_but_other_nvidia_resources_are_not() -> None:
    nodes = [node("n", alloc={"nvidia.com/mlnxnics": "8", "nvidia.com/gpu": "4"})]
    assert detect_nic(nodes, 8, **GB).resource == "nvidia.com/mlnxnics"
    other = [node("n", alloc={"nvidia.com/hostdev": "8"})]
    assert detect_nic(other, 8, **GB).declined == NIC_NONE


def test_two_sufficient_candidates_are_ambiguous_and_name_the_count() -> None:
    nodes = [node(f"n{i}", alloc={"rdma/ib": "8", "rdma/roce": "8"}) for i in range(2)]
    got = detect_nic(nodes, 8, **GB)
    assert got.resource == ""
    assert got.ambiguous and got.declined == NIC_AMBIGUOUS
    assert "8 per node" in got.message and "rdma/ib, rdma/roce" in got.message


def test_a_candidate_short_on_one_node_is_not_picked() -> None:
    nodes = [node("n0", alloc={"rdma/ib": "8"}), node("n1", alloc={"rdma/ib": "4"})]
    got = detect_nic(nodes, 8, **GB)
    assert (got.resource, got.declined) == ("", NIC_SHORT)
    assert "8 per node on every one of the 2 target node(s)" in got.message
    assert not got.ambiguous


def test_a_second_candidate_short_somewhere_leaves_one_choice() -> None:
    nodes = [node("n0", alloc={"rdma/ib": "8", "rdma/roce": "8"}), node("n1", alloc={"rdma/ib": 8})]
    assert detect_nic(nodes, 8, **GB).resource == "rdma/ib"


def test_no_candidate_at_all_explains_the_opt_out() -> None:
    got = detect_nic([node("n0", alloc={"cpu": "64"})], 8, **GB)
    assert got.declined == NIC_NONE and "mlnxPerNode to 0" in got.message


@pytest.mark.parametrize(
    ("platform", "arch", "configured", "per_node"),
    [
        ("aws", "gb200", "", 8),  # a cloud names its NICs in its overrides
        ("onprem", "h100", "", 8),  # older parts use nvidia.com/mlnxnics as rendered
        ("onprem", "gb300", "", 0),  # mlnxPerNode 0 opts out
    ],
)
def test_detection_applies_to_on_prem_gb200_gb300_only(
    platform: str, arch: str, configured: str, per_node: int
) -> None:
    nodes = [node("n", alloc={"rdma/ib": "8"})]
    got = detect_nic(nodes, per_node, platform=platform, arch=arch, configured=configured)
    assert (got.resource, got.message) == ("", "")


def test_a_configured_resource_always_wins() -> None:
    nodes = [node("n", alloc={"rdma/ib": "8", "rdma/roce": "8"})]
    assert detect_nic(nodes, 8, configured="rdma/roce", **GB).resource == "rdma/roce"


def test_the_render_path_refuses_an_ambiguous_nic() -> None:
    nodes = [node("n", alloc={"rdma/ib": "8", "rdma/roce": "8"})]
    with pytest.raises(PlatformError, match=r"more than one RDMA resource") as got:
        refuse_ambiguous_nic(detect_nic(nodes, 8, **GB), "spec.nicResourceName")
    assert got.value.location.field == "spec.nicResourceName"
    refuse_ambiguous_nic(detect_nic([node("n", alloc={"rdma/ib": "8"})], 8, **GB), "x")


def test_a_simulated_node_reads_as_the_node_a_cluster_lists() -> None:
    info = NodeInfo(
        "gpu-001",
        {"nvidia.com/gpu.product": "NVIDIA-GB200", "kubernetes.io/hostname": "gpu-001"},
        (Taint(UNSCHEDULABLE_TAINT, "", "NoSchedule"),),
        unschedulable=True,
    )
    obj = node_object(info, provider_id="aws:///i-1", allocatable={"nvidia.com/gpu": "4"})
    assert obj["metadata"]["labels"]["nvidia.com/gpu.present"] == "true"
    assert obj["spec"] == {
        "unschedulable": True,
        "providerID": "aws:///i-1",
        "taints": [{"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}],
    }
    assert platform_of(obj) == "aws"
    assert "nvidia.com/gpu.present" not in node_object(NodeInfo("cpu-1"))["metadata"]["labels"]
