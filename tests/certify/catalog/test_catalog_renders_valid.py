"""Every category × platform × GPU architecture renders a TrainingRuntime and a TrainJob, and
every rendered Trainer object validates against the Kubeflow Trainer CRD schemas."""

from __future__ import annotations

import re

import pytest
from trainer_schemas import FILES, problems

import glimmer.api.certify.kinds  # noqa: F401  (registers the kinds)
from glimmer.api.certify.workloadrun import WorkloadRun
from glimmer.api.load import load_text
from glimmer.certify.catalog.entries import list_entries
from glimmer.certify.catalog.gpu import architectures
from glimmer.certify.catalog.render import render_entry
from glimmer.certify.catalog.workloadrun import render_workload_run
from glimmer.certify.platform import names

ENTRIES = [e.ref for e in list_entries()]


@pytest.mark.parametrize("platform", names())
@pytest.mark.parametrize("ref", ENTRIES)
def test_every_category_renders_valid_trainer_objects_on_every_platform_and_gpu(
    ref: str, platform: str
) -> None:
    domain, variant = ref.split("/")
    for arch in architectures():
        objects = render_entry(domain, variant, platform, arch)
        kinds = [o["kind"] for o in objects]
        assert kinds.count("TrainingRuntime") == 1 and kinds[-1] == "TrainJob", (arch, kinds)
        for obj in objects:
            if obj["kind"] in FILES:
                assert problems(obj) == [], (arch, obj["kind"])


def test_the_catalog_has_every_required_category() -> None:
    assert set(ENTRIES) >= {
        "communication/nccl-all-reduce",
        "communication/nccl-all-gather",
        "communication/nccl-reduce-scatter",
        "communication/nccl-alltoall",
        "communication/nccl-sendrecv",
        "diagnostics/dcgm-level1",
        "diagnostics/dcgm-level2",
        "diagnostics/dcgm-level3",
        "diagnostics/dcgm-level4",
        "training/nemotron5-8b",
    }
    assert sorted(ENTRIES) == ENTRIES


_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

WORKLOAD_RUNS = {
    "torch": "{torch: {script: /config/train.py, args: [--steps, '10']}}",
    "mpi": "{mpi: {binary: /usr/local/bin/all_reduce_perf_mpi, mpirunPath: /usr/bin/mpirun}}",
    "exec": "{exec: {command: [nvidia-smi]}}",
}


def _workload_run(framework: str) -> WorkloadRun:
    text = (
        "apiVersion: certify.glimmer.ai/v1alpha1\nkind: WorkloadRun\n"
        "metadata: {name: probe, namespace: ns}\n"
        "spec:\n  image: nvcr.io/nvidia/pytorch:26.01-py3\n  numNodes: 2\n"
        f"  framework: {WORKLOAD_RUNS[framework]}\n"
        "  env: [{name: NCCL_IB_HCA, value: mlx5_1}]\n"
        "  config: {inline: {train.py: 'print(1)'}}\n"
        "  checkpoint: {storageSize: 1Ti}\n"
        "  gangScheduler: {schedulerName: kai-scheduler}\n"
    )
    (item,) = load_text(text)
    assert isinstance(item.obj, WorkloadRun)
    return item.obj


@pytest.mark.parametrize("platform", names())
@pytest.mark.parametrize("framework", sorted(WORKLOAD_RUNS))
def test_every_workload_run_framework_renders_valid_trainer_objects(
    framework: str, platform: str
) -> None:
    run = _workload_run(framework)
    for arch in ("h100", "gb200", "gb300", "a100"):
        objects = render_workload_run(run, platform, arch)
        assert objects[-1]["kind"] == "TrainJob"
        for obj in objects:
            if obj["kind"] in FILES:
                assert problems(obj) == [], (arch, obj["kind"])


@pytest.mark.parametrize("ref", ENTRIES)
def test_every_rendered_name_is_a_dns_label_of_at_most_63_characters(ref: str) -> None:
    domain, variant = ref.split("/")
    for obj in render_entry(domain, variant, "gcp", "gb200", name="a-long-certification-name"):
        name = obj["metadata"]["name"]
        assert len(name) <= 63 and _DNS_LABEL.match(name), name
