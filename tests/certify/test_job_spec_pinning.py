"""The Job spec of one core job (specs/certify.md §2.4, §3.2 createJobForGroup; issue 17):
copied from the Workflow's template, pinned to its group, sized to it, tolerating what the
target selects, with the §7.4 MNNVL override and its own dependency copies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.api.certify.options import CategoryOptions
from glimmer.certify.catalog.build import build_workflow_spec
from glimmer.certify.catalog.entries import get_entry, list_entries
from glimmer.certify.catalog.naming import short_hash, truncate
from glimmer.certify.catalog.render import build_config, context
from glimmer.certify.job_spec import (
    DEFAULT_HEALTH,
    HOSTNAME_LABEL,
    job_parts,
    job_scoped_suffix,
    tolerations,
)
from glimmer.certify.jobs import DcgmJob, Job, NcclJob, TrainingJob
from glimmer.certify.platform.transforms import (
    ResolvedWorkflowTransforms,
    apply_resolved_workflow_transforms,
)
from glimmer.certify.platform.vocab import CONTROLLER_PATCH_MANAGER, JOB_LABEL
from glimmer.certify.replay import group_of, job_key, nodes_of
from tests.certify.catalog.trainer_schemas import problems
from tools.k8s_standin.schema_check import check

WF = "t-communication-nccl-all-reduce"  # 31 characters, as workflow_name cuts them
NODES = ("nvl-node-0001", "nvl-node-0002", "nvl-node-0003")


def _workflow(
    domain: str, variant: str, target: dict[str, Any] | None = None, **options: Any
) -> dict[str, Any]:
    entry = get_entry(domain, variant)
    cfg = build_config(entry, context("onprem", "gb200", None), CategoryOptions(**options), target)
    built, _ = build_workflow_spec(entry, cfg)
    spec: dict[str, Any] = apply_resolved_workflow_transforms(built, ResolvedWorkflowTransforms())
    return spec


def _pinning(spec: dict[str, Any]) -> dict[str, Any]:
    (patch,) = [
        p
        for p in spec["workload"]["trainJob"]["runtimePatches"]
        if p["manager"] == CONTROLLER_PATCH_MANAGER
    ]
    jobs = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    return {rj["name"]: rj["template"]["spec"]["template"] for rj in jobs}


def _valid_train_job(key: str, spec: dict[str, Any]) -> None:
    obj = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": f"{key}-workload"},
        "spec": spec["workload"]["trainJob"],
    }
    assert problems(obj) == []


def test_a_collective_is_pinned_on_worker_and_launcher_and_sized_to_its_group() -> None:
    wf = _workflow(
        "communication",
        "nccl-all-reduce",
        thresholds={"busBandwidthGBps": "value >= 100"},
        measurement_timeout="7m",
    )
    key = job_key(WF, "group-0", 1)
    parts = job_parts(WF, wf, key, NcclJob("group-0", "all_reduce", NODES), NODES)
    spec = parts.spec
    pods = _pinning(spec)
    assert list(pods) == ["node", "launcher"]
    for pod in pods.values():
        terms = pod["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]["nodeSelectorTerms"]
        assert terms == [
            {"matchExpressions": [{"key": HOSTNAME_LABEL, "operator": "In", "values": [*NODES]}]}
        ]
        assert pod["metadata"]["labels"] == {JOB_LABEL: key}
        # MPI: the launcher must reach any node, whatever it carries (ADR-063).
        assert pod["spec"]["tolerations"] == [{"operator": "Exists"}]
    assert spec["workload"]["trainJob"]["trainer"]["numNodes"] == 3
    assert spec["thresholds"] == {"busBandwidthGBps": "value >= 100"}
    assert spec["measurementTimeout"] == "7m"
    assert spec["nodeHealthMonitor"] == {"cel": {"expression": DEFAULT_HEALTH}}
    # The template's own fields are carried unchanged.
    assert spec["bandwidthMeasurement"]["logProfileRef"] == "nccl-bandwidth"
    assert "NCCL_MNNVL_ENABLE=1" in spec["workload"]["trainJob"]["trainer"]["args"]
    _valid_train_job(key, spec)


def test_the_workflow_spec_is_left_as_it_was() -> None:
    wf = _workflow("communication", "nccl-all-reduce")
    before = json.dumps(wf, sort_keys=True)
    job_parts(WF, wf, "k", NcclJob("g", "all_reduce", NODES, nvlink=False), NODES)
    assert json.dumps(wf, sort_keys=True) == before


def test_a_job_with_nvlink_off_replaces_the_mnnvl_argument() -> None:
    wf = _workflow("communication", "nccl-all-reduce", test_scale="diagnose")
    job = NcclJob("screen-no-nvl-r1", "all_reduce", NODES, nvlink=False)
    spec = job_parts(WF, wf, job_key(WF, job.name, 1), job, NODES).spec
    args = spec["workload"]["trainJob"]["trainer"]["args"]
    assert "NCCL_MNNVL_ENABLE=0" in args and "NCCL_MNNVL_ENABLE=1" not in args
    assert not any(
        v.get("name") == "NCCL_MNNVL_ENABLE"
        for v in spec["workload"]["trainJob"]["trainer"].get("env", [])
    )


def test_a_training_job_with_nvlink_off_sets_the_env_and_copies_its_dependencies() -> None:
    wf = _workflow("training", "nemotron5-8b", nodes_per_job=2, enable_checkpoint=True)
    wf_name = "t-training-nemotron5-8b-n2-ckpt"
    job = TrainingJob("bisect-1-0a", NODES[:2], checkpoint=True, max_restarts=3, nvlink=False)
    key = job_key(wf_name, job.name, 1)
    parts = job_parts(wf_name, wf, key, job, job.nodes)
    trainer = parts.spec["workload"]["trainJob"]["trainer"]
    assert {"name": "NCCL_MNNVL_ENABLE", "value": "0"} in trainer["env"]
    assert trainer["numNodes"] == 2
    # The runtime, what it mounts and the ComputeDomain whose channel it claims are this Job's
    # own copies, named per §1.3, the channel with them.
    suffix = job_scoped_suffix(wf_name, key)
    assert suffix == f"-{short_hash(wf_name)}-{key[-5:]}"  # the key was cut to 35
    names = [d["metadata"]["name"] for d in parts.dependencies]
    assert names == [
        truncate(f"{n}{suffix}", 63)
        for n in (
            "nemotron5-8b-runtime",
            "nemotron5-8b-config",
            "nemotron5-8b-pvc",
            "nemotron5-8b-compute-domain",
        )
    ]
    channel = truncate(f"nemotron5-8b-compute-domain-channel{suffix}", 63)
    domain = parts.dependencies[3]["spec"]["channel"]["resourceClaimTemplate"]["name"]
    assert domain == channel and channel in json.dumps(parts.dependencies[0])
    assert parts.spec["workload"]["trainJob"]["runtimeRef"]["name"] == names[0]
    assert parts.spec["checkpoint"]["maxRestarts"] == 3  # the core's job allows 3
    # A torch job has no launcher: no blanket toleration without taint selectors.
    assert list(_pinning(parts.spec)) == ["node"]
    assert "tolerations" not in _pinning(parts.spec)["node"]["spec"]
    _valid_train_job(key, parts.spec)


def test_a_dcgm_job_runs_on_its_one_node() -> None:
    wf = _workflow("diagnostics", "dcgm-level2")
    key = job_key("t-diagnostics-dcgm-level2", "nvl-node-0004", 1)
    spec = job_parts(
        "t-diagnostics-dcgm-level2", wf, key, DcgmJob("nvl-node-0004", 2), ("nvl-node-0004",)
    ).spec
    pods = _pinning(spec)
    assert list(pods) == ["node"]
    values = pods["node"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"]
    assert values == ["nvl-node-0004"]
    assert spec["workload"]["trainJob"]["trainer"]["numNodes"] == 1
    _valid_train_job(key, spec)


def test_taint_selectors_become_tolerations_for_every_workload_type() -> None:
    target = {
        "taintSelectors": [
            {"key": "gpu-burnin", "value": "yes", "effect": "NoSchedule"},
            {"key": "dedicated"},
        ]
    }
    expected = [
        {"key": "gpu-burnin", "operator": "Equal", "value": "yes", "effect": "NoSchedule"},
        {"key": "dedicated", "operator": "Exists"},
    ]
    for domain, variant in (("communication", "nccl-all-reduce"), ("diagnostics", "dcgm-level1")):
        wf = _workflow(domain, variant, target)
        spec = job_parts("w", wf, "w-x-iter-1", DcgmJob("n1", 1), ("n1",)).spec
        assert all(p["spec"]["tolerations"] == expected for p in _pinning(spec).values())


def test_a_target_of_cordoned_nodes_tolerates_the_cordon_and_drops_the_default_monitor() -> None:
    wf = _workflow("diagnostics", "dcgm-level1", {"includeUnschedulable": True})
    spec = job_parts("w", wf, "w-n1-iter-1", DcgmJob("n1", 1), ("n1",)).spec
    assert "nodeHealthMonitor" not in spec
    assert _pinning(spec)["node"]["spec"]["tolerations"] == [
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
    ]
    # The blanket toleration of MPI already tolerates it: nothing is added.
    assert tolerations({"includeUnschedulable": True}, ["node", "launcher"]) == [
        {"operator": "Exists"}
    ]


def test_the_copies_suffix_follows_the_job_name() -> None:
    assert job_scoped_suffix("wf", "wf-screen-0-iter-2") == f"-{short_hash('wf')}-screen-0-iter-2"
    cut = job_key("t-communication-nccl-all-reduce", "bisect-3-1b", 1)
    assert len(cut) == 35
    assert job_scoped_suffix("t-communication-nccl-all-reduce", cut) == (
        f"-{short_hash('t-communication-nccl-all-reduce')}-{cut[-5:]}"
    )


JOB_CRD = (
    Path(__file__).resolve().parents[2] / "deploy" / "crds-certify" / "certify.glimmer.ai_jobs.yaml"
)


def _job_spec_schema() -> dict[str, Any]:
    crd = yaml.safe_load(JOB_CRD.read_text(encoding="utf-8"))
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema["properties"]["spec"]


@pytest.mark.parametrize("ref", [e.ref for e in list_entries()])
def test_every_catalog_entrys_job_is_a_valid_job_and_train_job(ref: str) -> None:
    domain, variant = ref.split("/")
    wf = _workflow(domain, variant, thresholds={"busBandwidthGBps": "value >= 1"})
    job: Job = (
        DcgmJob("nvl-node-0001", 1)
        if domain == "diagnostics"
        else TrainingJob("group-0", NODES[:2], nvlink=False)
        if domain == "training"
        else NcclJob("bisect-1-0a", "all_reduce", NODES[:2], nvlink=False)
    )
    nodes = nodes_of(job)
    key = job_key(f"t-{domain}-{variant}"[:31], group_of(job), 1)
    spec = job_parts(f"t-{domain}-{variant}"[:31], wf, key, job, nodes).spec
    assert check(spec, _job_spec_schema(), "spec") == []
    _valid_train_job(key, spec)
