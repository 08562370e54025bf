"""Catalog scenarios of specs/certify.md §9.2 (17–21, 31) and the naming rules of §1.3."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.api.certify.options import CategoryOptions, TestScale, TrainingResources
from glimmer.certify.catalog.build import BuildConfig, build_workflow_spec, max_valid_nodes
from glimmer.certify.catalog.entries import get_entry, list_entries, platform_overrides
from glimmer.certify.catalog.gpu import architectures, node_defaults, parse_product
from glimmer.certify.catalog.naming import (
    extract_hash,
    fnv32a,
    job_name,
    short_hash,
    truncate,
    workflow_name,
    workload_name,
)
from glimmer.certify.catalog.render import render_entry
from glimmer.certify.platform import PlatformError, names
from glimmer.certify.platform.scripts import WORKER_SSHD_SCRIPT

Obj = dict[str, Any]


def _cfg(**kw: Any) -> BuildConfig:
    base: Obj = dict(
        platform="onprem",
        gpu_architecture="h100",
        nodes_per_job=1,
        gpus_per_node=8,
        mlnx_per_node=8,
        enable_mnnvl=False,
    )
    return BuildConfig(**{**base, **kw})


def _trainer(spec: Obj) -> Obj:
    trainer: Obj = spec["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]
    return trainer


def _node_container(spec: Obj) -> Obj:
    rt = spec["dependencies"][0]
    jobs = rt["spec"]["template"]["spec"]["replicatedJobs"]
    node = next(j for j in jobs if j["name"] == "node")
    container: Obj = node["template"]["spec"]["template"]["spec"]["containers"][0]
    return container


def test_every_entry_builds_with_default_options() -> None:
    for entry in list_entries():
        spec, _ = build_workflow_spec(entry, _cfg())
        assert spec["dependencies"][0]["kind"] == "TrainingRuntime"


def test_an_entry_needs_a_gpu_architecture() -> None:
    with pytest.raises(PlatformError, match="GPUArchitecture is required"):
        build_workflow_spec(
            get_entry("communication", "nccl-all-reduce"), _cfg(gpu_architecture="")
        )


def test_parallelism_errors_name_the_minimum_and_the_divisor() -> None:
    training = get_entry("training", "nemotron5-8b")
    with pytest.raises(PlatformError, match=r"requires at least 4 GPUs .* nodesPerJob to 2"):
        build_workflow_spec(training, _cfg(gpus_per_node=2))
    with pytest.raises(PlatformError, match=r"must be divisible by TP×PP=8"):
        build_workflow_spec(
            training, _cfg(gpu_architecture="a100", gpus_per_node=4, nodes_per_job=1)
        )


def test_max_valid_nodes_picks_the_largest_valid_count() -> None:
    training = get_entry("training", "nemotron5-8b")
    assert max_valid_nodes(training, 5, 4, "a100") == 4  # 16 GPUs divisible by TP 8; 20 not
    assert max_valid_nodes(training, 1, 2, "h100") == 0


def test_intra_node_forces_one_node_per_job() -> None:
    options = CategoryOptions(test_scale=TestScale.INTRA_NODE, nodes_per_job=4)
    objects = render_entry("communication", "nccl-all-reduce", "onprem", "h100")
    assert objects[-1]["spec"]["trainer"]["numNodes"] == 1
    from glimmer.certify.catalog.render import build_config, context

    entry = get_entry("communication", "nccl-all-reduce")
    assert build_config(entry, context("", "h100", None), options, None).nodes_per_job == 1


def test_diagnose_defaults_five_iterations_one_cycle_and_fifteen_minutes() -> None:
    options = CategoryOptions(test_scale=TestScale.DIAGNOSE)
    spec, _ = build_workflow_spec(
        get_entry("communication", "nccl-all-reduce"), _cfg(options=options)
    )
    args = _trainer(spec)["args"]
    assert args[args.index("-n") + 1] == "5" and args[len(args) - 1] == "1"
    assert spec["orchestration"]["execution"]["timeoutPerJob"] == "15m"
    assert spec["orchestration"]["diagnose"] == {
        "minGroupSize": 2,
        "topologyKey": "nvidia.com/gpu.clique",
    }


def test_intra_rack_packs_within_one_clique() -> None:
    options = CategoryOptions(test_scale=TestScale.INTRA_RACK)
    spec, _ = build_workflow_spec(
        get_entry("communication", "nccl-all-reduce"), _cfg(options=options)
    )
    assert spec["orchestration"]["topology"] == {
        "topologyKey": "nvidia.com/gpu.clique",
        "strictDomain": True,
    }


@pytest.mark.parametrize(
    ("arch", "platform", "gpus", "mlnx"),
    [
        ("h100", "", 8, 8),
        ("l40", "", 8, 4),
        ("gb200", "", 4, 8),
        ("rtxpro6000", "", 8, 0),
        ("l40s", "oci", 4, 2),
        ("gb200", "oci", 4, 0),
        ("gb300", "oci", 4, 4),
        ("z900", "", 4, 0),
    ],
)
def test_gpu_defaults_by_architecture_and_platform(
    arch: str, platform: str, gpus: int, mlnx: int
) -> None:
    d = node_defaults(arch, platform)
    assert (d.gpus_per_node, d.mlnx_per_node) == (gpus, mlnx)


def test_training_resources_default_and_override_per_field() -> None:
    training = get_entry("training", "nemotron5-8b")
    spec, _ = build_workflow_spec(training, _cfg())
    assert _node_container(spec)["resources"] == {
        "limits": {"cpu": "128", "memory": "800Gi", "nvidia.com/gpu": "8"},
        "requests": {"cpu": "64", "memory": "500Gi", "nvidia.com/gpu": "8"},
    }
    options = CategoryOptions(resources=TrainingResources(limits={"memory": "200Gi"}))
    spec, _ = build_workflow_spec(training, _cfg(options=options))
    assert _node_container(spec)["resources"]["limits"]["memory"] == "200Gi"
    assert _node_container(spec)["resources"]["requests"]["memory"] == "500Gi"


def test_training_source_repo_has_a_default_and_an_override() -> None:
    training = get_entry("training", "nemotron5-8b")

    def clone(spec: Obj) -> str:
        rt = spec["dependencies"][0]
        node = rt["spec"]["template"]["spec"]["replicatedJobs"][0]
        script: str = node["template"]["spec"]["template"]["spec"]["initContainers"][0]["args"][0]
        return script

    spec, _ = build_workflow_spec(training, _cfg())
    assert "https://github.com/NVIDIA/Megatron-LM.git" in clone(spec)
    options = CategoryOptions(source_repo="https://mirror.example.com/megatron.git")
    spec, _ = build_workflow_spec(training, _cfg(options=options))
    assert "https://mirror.example.com/megatron.git" in clone(spec)


def test_checkpointing_swaps_memory_for_a_claim_and_records_the_pvc() -> None:
    options = CategoryOptions(enable_checkpoint=True, max_restarts=5)
    spec, _ = build_workflow_spec(get_entry("training", "nemotron5-8b"), _cfg(options=options))
    assert spec["jobTemplate"]["spec"]["checkpoint"] == {
        "pvcName": "nemotron5-8b-pvc",
        "maxRestarts": 5,
    }
    kinds = [d["kind"] for d in spec["dependencies"]]
    assert "PersistentVolumeClaim" in kinds


@pytest.mark.parametrize(
    ("product", "arch"),
    [
        ("NVIDIA-H100-80GB-HBM3", "h100"),
        ("NVIDIA-H100-NVL", "h100"),
        ("NVIDIA-A100-SXM4-80GB", "a100"),
        ("NVIDIA-GB200", "gb200"),
        ("NVIDIA-GB200-NVL72", "gb200"),
        ("NVIDIA-GB300-NVL72", "gb300"),
        ("NVIDIA-L40", "l40"),
        ("NVIDIA-L40S", "l40s"),
        ("", ""),
        ("NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "rtxpro6000"),
    ],
)
def test_gpu_product_parsing(product: str, arch: str) -> None:
    assert parse_product(product) == arch


def test_every_platform_override_file_is_guarded_by_its_platform() -> None:
    for platform in names():
        for item in platform_overrides(platform):
            guard = item["when"].get("platform")
            assert guard in (None, {"equals": platform})


@pytest.mark.parametrize("platform", names())
def test_worker_sshd_invariants_hold_for_catalog_and_override_outputs(platform: str) -> None:
    for arch in architectures():
        for obj in render_entry("communication", "nccl-all-reduce", platform, arch):
            if obj["kind"] != "TrainingRuntime":
                continue
            worker = obj["spec"]["template"]["spec"]["replicatedJobs"][0]
            container = worker["template"]["spec"]["template"]["spec"]["containers"][0]
            assert container["args"] == [WORKER_SSHD_SCRIPT]


def test_truncate_keeps_short_names_and_hashes_long_ones() -> None:
    assert truncate("short", 31) == "short"
    long = "acceptance-communication-nccl-all-reduce"
    cut = truncate(long, 31)
    # The first 25 characters, the trailing dash stripped, then "-" and the hash of the whole.
    assert cut == f"acceptance-communication-{short_hash(long)}"
    assert extract_hash(cut) == cut[-5:]


def test_names_fit_their_limits() -> None:
    wf = workflow_name("a-very-long-certification-name", "communication", "nccl-all-reduce", None)
    assert len(wf) <= 31 and len(job_name(wf)) <= 35 and len(workload_name(job_name(wf))) <= 44


def test_workflow_name_carries_the_option_tokens_in_order() -> None:
    options = CategoryOptions(nodes_per_job=2, enable_mnnvl=False, test_scale=TestScale.DIAGNOSE)
    assert workflow_name("c", "d", "v", options) == "c-d-v-n2-nomnnvl-diagnose"


def test_the_hash_is_fnv_1a_32() -> None:
    assert fnv32a("") == 0x811C9DC5
    assert fnv32a("a") == 0xE40C292C


def test_a_catalog_entry_with_unknown_keys_or_framework_is_refused(tmp_path: Any) -> None:
    from glimmer.certify.catalog.entries import _load

    bad = tmp_path / "x.yaml"
    bad.write_text("framework: mpi\nimage: i\ncolour: red\n")
    with pytest.raises(PlatformError, match=r"unknown keys \['colour'\]"):
        _load("d", "x", bad)
    bad.write_text("framework: slurm\nimage: i\n")
    with pytest.raises(PlatformError, match="framework must be one of torch, mpi, exec"):
        _load("d", "x", bad)
