"""A training category on the simulated fleet: a slow GPU fails its job by the throughput floor
of its product, and a failed job is narrowed down by isolation before anyone is named."""

from __future__ import annotations

from typing import Any

import yaml

from glimmer.backends.sim.certify import certify
from glimmer.certify.grouping import PRODUCT_LABEL
from glimmer.certify.result import WORKLOAD, CategoryResult
from glimmer.certify.spec import from_text
from glimmer.fleet.load import load_topology
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim

TOPO = load_topology("ai-factory")
GB200 = {"nodeSelector": {PRODUCT_LABEL: "NVIDIA-GB200"}}
H100 = {"nodeSelector": {PRODUCT_LABEL: "NVIDIA-H100-80GB-HBM3"}}


def _training(
    faults: list[Fault], target: dict[str, Any], options: dict[str, Any] | None = None
) -> CategoryResult:
    cat: dict[str, Any] = {"domain": "training", "variant": "nemotron5-8b"}
    if options:
        cat["options"] = options
    doc = yaml.safe_dump(
        {
            "apiVersion": "certify.glimmer.ai/v1alpha1",
            "kind": "Certification",
            "metadata": {"name": "t", "namespace": "default"},
            "spec": {"target": target, "categories": [cat]},
        }
    )
    (result,) = certify(FleetSim(TOPO, faults), from_text(doc)).categories
    return result


def test_a_gpu_pinned_to_a_low_pstate_fails_training_by_its_products_throughput_floor() -> None:
    train = _training([Fault("gpu_low_pstate", "gpu:nvl-node-0003/2")], GB200)
    assert train.status == "Failed"
    (job,) = train.groups
    assert job.metric == "avgTFLOPsPerGPU" and job.floor == 625.0
    assert job.measured is not None and job.measured < 200
    assert 'Threshold "avgTFLOPsPerGPU" violated' in job.reason


def test_a_healthy_nvl72_rack_clears_the_throughput_floor() -> None:
    train = _training([], GB200)
    assert train.status == "Succeeded" and not train.failed_nodes and train.isolation is None
    assert train.training["tflops"] >= 625.0


def test_one_slow_gpu_in_an_eighteen_node_job_names_only_its_node() -> None:
    train = _training([Fault("gpu_low_pstate", "gpu:nvl-node-0003/2")], GB200)
    assert len(train.groups[0].nodes) == 18
    assert [(f.name, f.reason) for f in train.failed_nodes] == [("nvl-node-0003", WORKLOAD)]
    assert "confirmed beside healthy" in train.failed_nodes[0].message
    assert train.isolation is not None and train.isolation.jobs > 0
    assert "1 faulty nodes confirmed" in train.failure_reason


def test_two_slow_gpus_on_two_nodes_are_both_named_and_no_one_else() -> None:
    faults = [
        Fault("gpu_low_pstate", "gpu:nvl-node-0004/0"),
        Fault("gpu_low_pstate", "gpu:nvl-node-0015/3"),
    ]
    train = _training(faults, GB200)
    assert sorted(f.name for f in train.failed_nodes) == ["nvl-node-0004", "nvl-node-0015"]


def test_a_one_node_job_that_fails_its_floor_names_its_node_without_isolation() -> None:
    train = _training([Fault("gpu_low_pstate", "gpu:hgx-node-0001/3")], H100, {"nodesPerJob": 1})
    assert [f.name for f in train.failed_nodes] == ["hgx-node-0001"]
    assert train.isolation is None


def test_a_crashed_job_still_names_the_node_its_failure_log_names() -> None:
    train = _training([Fault("gpu_xid_burst", "gpu:nvl-node-0009/2")], GB200)
    assert [f.name for f in train.failed_nodes] == ["nvl-node-0009"]
    assert "died at step" in train.failed_nodes[0].message and train.isolation is None


def test_goodput_lost_to_restarts_names_the_node_the_log_names_as_lost() -> None:
    options = {"enableCheckpoint": True, "saveInterval": 100, "maxSteps": 1000, "maxRestarts": 3}
    train = _training([Fault("gpu_xid_burst", "gpu:nvl-node-0009/2")], GB200, options)
    assert train.groups[0].metric == "goodputRatio" and not train.groups[0].passed
    assert [(f.name, f.reason) for f in train.failed_nodes] == [
        ("nvl-node-0009", "ThresholdViolation")
    ]
    assert "names nvl-node-0009 as the peer lost" in train.failed_nodes[0].message


def test_a_job_failing_for_want_of_any_one_node_accuses_no_one() -> None:
    # Checkpoints this frequent cost every 18-node job its goodput, however healthy its nodes;
    # the smaller jobs of isolation pass, so no node is named, and the category still fails.
    options = {"enableCheckpoint": True, "saveInterval": 100, "maxSteps": 1000}
    train = _training([], GB200, options)
    assert train.status == "Failed" and not train.failed_nodes
    assert train.isolation is not None and "no faults detected" in train.isolation.message


def test_one_slow_node_of_a_two_node_job_is_named_alone() -> None:
    # A one-node training job measures its GPUs, so isolation may split a pair.
    train = _training([Fault("gpu_low_pstate", "gpu:hgx-node-0002/6")], H100)
    assert len(train.groups[0].nodes) == 2
    assert [f.name for f in train.failed_nodes] == ["hgx-node-0002"]


def test_a_categorys_own_min_group_size_holds_for_training_isolation() -> None:
    train = _training([Fault("gpu_low_pstate", "gpu:hgx-node-0002/6")], H100, {"minGroupSize": 2})
    # Two nodes cannot be split into groups of two: with no healthy node to confirm against,
    # the failed group is named (§7.4), as for a collective.
    assert sorted(f.name for f in train.failed_nodes) == ["hgx-node-0001", "hgx-node-0002"]
    assert all("no healthy node to confirm against" in f.message for f in train.failed_nodes)
