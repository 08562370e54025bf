"""``glimmer certify cluster-info`` against the API stand-in (the GPU product and architecture
of the majority, the platform from providerID, GPUs per node, NIC resources, cordoned nodes),
``certify list-categories`` offline, and a kubeconfig that reaches no cluster (exit 2 naming
it, no traceback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glimmer.certify.catalog.entries import list_entries
from glimmer.cli.app import main
from tests.cli.certify_cluster_standin import (
    StandIn,
    add_node,
    create_certification,
    served,
    standin,
)

__all__ = ["served", "standin"]  # the fixtures, used by name

GB200 = "NVIDIA-GB200"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["certify", *argv])
    out, err = capsys.readouterr()
    return code, out, err


AWS_BLOCK = "topology.k8s.aws/network-node-layer-1"


def _fleet(standin: StandIn) -> None:
    for i in range(3):
        add_node(
            standin.http,
            f"gpu-{i}",
            provider=f"aws:///us-east-1a/i-{i}",
            allocatable={"vpc.amazonaws.com/efa": "32"},
            **{AWS_BLOCK: "nn-1" if i < 2 else "nn-2"},
        )
    add_node(standin.http, "gpu-3", product=GB200, gpus="4", provider="aws:///x/i-3")
    add_node(standin.http, "gpu-4", provider="aws:///x/i-4", unschedulable=True, ready=False)
    add_node(standin.http, "cpu-0", product=None, provider="aws:///x/i-5")


def test_cluster_info_reports_the_majority_gpu_the_platform_and_gpus_per_node(
    standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    _fleet(standin)
    create_certification(standin.http)
    code, out, _ = run(capsys, "cluster-info")
    assert code == 0, out
    assert "Nodes:          6 (5 with GPUs, 4 of them Ready, 1 cordoned: gpu-4)" in out
    assert "Platform:       aws" in out
    assert "GPU:            h100 (NVIDIA-H100-80GB-HBM3); the majority of: h100 on 4" in out
    assert "GPUs per node:  8 on 4 node(s), 4 on 1 node(s)" in out
    assert "Defaults:       gpusPerNode 8" in out
    # The platform's own topology label (aws's, from its overrides), largest domain first.
    assert (
        f"Topology:       {AWS_BLOCK}: 2 domain(s): nn-1 (2), nn-2 (1); 2 node(s) without it" in out
    )
    assert "Certifications: acceptance (Pending) (namespace default)" in out


def test_cluster_info_json_counts_nic_resources_per_node(
    standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in range(2):
        add_node(standin.http, f"gb-{i}", product=GB200, gpus="4", allocatable={"rdma/ib": "4"})
    add_node(standin.http, "gb-2", product=GB200, gpus="4", allocatable={"rdma/ib": "2"})
    code, out, _ = run(capsys, "cluster-info", "-o", "json")
    doc = json.loads(out)
    assert code == 0
    assert (doc["platform"], doc["gpuArchitecture"], doc["gpuProduct"]) == (
        "onprem",
        "gb200",
        GB200,
    )
    assert doc["gpusPerNode"] == {"4": 3}
    assert doc["nicResources"] == {"rdma/ib": {"4": 2, "2": 1}}
    assert doc["cordoned"] == [] and doc["certifications"] == []
    assert doc["topology"] is None  # no platform key, no clique label: nothing to group by


def test_cluster_info_groups_by_the_topology_key_given(
    standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in range(3):
        add_node(standin.http, f"n-{i}", rack=f"r{i % 2}", **{"nvidia.com/gpu.clique": "c.1"})
    code, out, _ = run(capsys, "cluster-info", "-o", "json")
    assert json.loads(out)["topology"] == {
        "key": "nvidia.com/gpu.clique",
        "domains": {"c.1": 3},
        "unlabelled": 0,
    }
    code, out, _ = run(capsys, "cluster-info", "--topology-key", "rack")
    assert code == 0 and "Topology:       rack: 2 domain(s): r0 (2), r1 (1)" in out


def test_a_kubeconfig_that_is_not_there_is_exit_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.yaml"
    code, _, err = run(capsys, "cluster-info", "--kubeconfig", str(missing))
    assert code == 2 and str(missing) in err and "no such file" in err
    assert "Traceback" not in err


def test_a_kubeconfig_that_is_not_one_is_exit_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "kubeconfig"
    bad.write_text("just: [text\n")
    code, _, err = run(capsys, "status", "acceptance", "--kubeconfig", str(bad))
    assert code == 2 and f"--kubeconfig {bad}" in err and "cannot reach a cluster" in err
    assert "Traceback" not in err


def test_a_cluster_that_does_not_answer_is_exit_2_naming_the_kubeconfig(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tools.k8s_standin.kubeconfig import write_kubeconfig

    config = write_kubeconfig(tmp_path / "kubeconfig", "http://127.0.0.1:9")  # nothing listens
    code, _, err = run(capsys, "cluster-info", "--kubeconfig", str(config))
    assert code == 2 and f"--kubeconfig {config}: list nodes failed" in err


def test_list_categories_lists_every_catalog_entry_with_what_it_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "list-categories")
    assert code == 0
    for entry in list_entries():
        assert entry.ref in out
    row = next(line for line in out.splitlines() if line.startswith("communication/nccl-all-r"))
    assert row.split()[1:3] == ["mpirun", "all_reduce_perf_mpi"]
    assert "intra-node, intra-rack, diagnose, full-scale" in row


def test_list_categories_json_has_scales_and_measured_keys(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "list-categories", "-o", "json")
    docs = {d["ref"]: d for d in json.loads(out)}
    assert code == 0 and set(docs) == {e.ref for e in list_entries()}
    assert docs["diagnostics/dcgm-level2"]["testScales"] == ["per-node"]
    assert docs["diagnostics/dcgm-level2"]["runs"] == "dcgmi diag"
    assert "goodputRatio" in docs["training/nemotron5-8b"]["measures"]
    assert docs["communication/nccl-sendrecv"]["measures"] == [
        "algBandwidthGBps",
        "busBandwidthGBps",
    ]
