"""Rendering a WorkloadRun (specs/certify.md §3.5): the runtime, trainer and Workflow parts."""

from __future__ import annotations

from typing import Any

import pytest

import glimmer.api.certify.kinds  # noqa: F401  (registers the kinds)
from glimmer.api.certify.workloadrun import WorkloadRun
from glimmer.api.load import load_text
from glimmer.certify.catalog.render import Context
from glimmer.certify.catalog.workloadrun import build_workload_run_spec
from glimmer.certify.platform import PlatformError

Obj = dict[str, Any]


def _run(extra: str, framework: str = "{exec: {command: [nvidia-smi], args: [-q]}}") -> WorkloadRun:
    text = (
        "apiVersion: certify.glimmer.ai/v1alpha1\nkind: WorkloadRun\nmetadata: {name: wr}\n"
        f"spec:\n  image: img:1\n  numNodes: 3\n  framework: {framework}\n{extra}"
    )
    (item,) = load_text(text)
    assert isinstance(item.obj, WorkloadRun)
    return item.obj


def _build(run: WorkloadRun, platform: str = "onprem", arch: str = "h100") -> Obj:
    spec, _ = build_workload_run_spec(run, Context(platform, arch))
    return spec


def _trainer(spec: Obj) -> Obj:
    trainer: Obj = spec["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]
    return trainer


def _worker(spec: Obj) -> Obj:
    jobs = spec["dependencies"][0]["spec"]["template"]["spec"]["replicatedJobs"]
    pod: Obj = jobs[0]["template"]["spec"]["template"]["spec"]
    return pod


def test_exec_runs_its_command_verbatim_on_num_nodes_with_the_gpu_default() -> None:
    trainer = _trainer(_build(_run("")))
    assert (trainer["command"], trainer["args"]) == (["nvidia-smi"], ["-q"])
    assert (trainer["numNodes"], trainer["numProcPerNode"]) == (3, 8)


def test_torch_runs_torchrun_of_a_module_with_its_args() -> None:
    trainer = _trainer(_build(_run("", "{torch: {module: train.main, args: [--lr, '1']}}")))
    assert trainer["command"] == ["torchrun"]
    assert trainer["args"] == ["-m", "train.main", "--lr", "1"]


def test_env_is_the_nccl_base_merged_with_the_users_and_user_wins() -> None:
    spec = _build(_run("  env: [{name: NCCL_DEBUG, value: WARN}, {name: MINE, value: '1'}]\n"))
    env = _worker(spec)["containers"][0]["env"]
    names = [v["name"] for v in env]
    assert names[-2:] == ["NCCL_DEBUG", "MINE"] and names.count("NCCL_DEBUG") == 1
    assert {"name": "NCCL_MNNVL_ENABLE", "value": "0"} in env


def test_gb200_defaults_mnnvl_on() -> None:
    env = _worker(_build(_run(""), arch="gb200"))["containers"][0]["env"]
    assert {"name": "NCCL_MNNVL_ENABLE", "value": "1"} in env


def test_intra_node_runs_one_node_per_job_and_intra_rack_packs_strictly() -> None:
    one = _build(_run("  orchestration: {testScale: intra-node}\n"))
    assert _trainer(one)["numNodes"] == 1
    rack = _build(_run("  orchestration: {testScale: intra-rack}\n"))
    assert rack["orchestration"]["topology"]["strictDomain"] is True


def test_the_job_timeout_is_always_bounded_24h_by_default() -> None:
    assert _build(_run(""))["orchestration"]["execution"] == {"timeoutPerJob": "24h"}


def test_inline_config_becomes_a_config_map_mounted_at_config() -> None:
    spec = _build(_run("  config: {inline: {a.sh: 'echo'}}\n"))
    cm = next(d for d in spec["dependencies"] if d["kind"] == "ConfigMap")
    assert cm["metadata"]["name"] == "wr-config" and cm["data"] == {"a.sh": "echo"}
    mounts = _worker(spec)["containers"][0]["volumeMounts"]
    assert {"name": "config-volume", "mountPath": "/config"} in mounts


def test_checkpoint_adds_a_read_write_many_claim_and_the_job_checkpoint() -> None:
    spec = _build(_run("  checkpoint: {storageSize: 2Ti, maxRestarts: 2}\n"))
    pvc = next(d for d in spec["dependencies"] if d["kind"] == "PersistentVolumeClaim")
    assert pvc["metadata"]["name"] == "wr-checkpoint-pvc"
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]
    assert spec["jobTemplate"]["spec"]["checkpoint"] == {
        "pvcName": "wr-checkpoint-pvc",
        "maxRestarts": 2,
    }


def test_user_overrides_apply_after_the_platform_ones() -> None:
    extra = (
        "  overrides:\n    - when: {platform: {equals: gcp}}\n"
        "      orchestration: {topology: {topologyKey: my/key}}\n"
    )
    spec = _build(_run(extra), platform="gcp")
    assert spec["orchestration"]["topology"] == {"topologyKey": "my/key"}


def test_a_reserved_init_container_name_is_refused_before_anything_is_built() -> None:
    with pytest.raises(PlatformError, match=r'spec.initContainers\[0\].name: "node"'):
        _build(_run("  initContainers: [{name: node, image: busybox}]\n"))


def test_thresholds_enable_validation() -> None:
    spec = _build(
        _run(
            "  thresholds: {goodputRatio: 'value > 0.9'}\n"
            "  goodputMeasurement: {logProfileRef: megatron-training}\n"
        )
    )
    assert spec["validation"]["performance"]["enabled"] is True
