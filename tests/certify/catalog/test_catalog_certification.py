"""Rendering whole Certifications (specs/certify.md §9.2 scenarios 34–35): options reach the
objects, post-resolve transforms win over catalog and platform values, names stay apart."""

from __future__ import annotations

from typing import Any

import pytest

import glimmer.api.certify.kinds  # noqa: F401  (registers the kinds)
from glimmer.api.certify.certification import Certification
from glimmer.api.load import load_text
from glimmer.certify.catalog.render import render_certification
from glimmer.certify.platform import PlatformError
from glimmer.errors import InputErrors

Obj = dict[str, Any]


def _cert(
    categories: str, extra: str = "", product: str = "NVIDIA-H100-80GB-HBM3"
) -> Certification:
    text = f"""apiVersion: certify.glimmer.ai/v1alpha1
kind: Certification
metadata: {{name: c, namespace: ns}}
spec:
  target: {{nodeSelector: {{nvidia.com/gpu.product: {product}}}}}
  categories:
{categories}
{extra}"""
    (item,) = load_text(text)
    assert isinstance(item.obj, Certification)
    return item.obj


def _pods(runtime: Obj) -> dict[str, Obj]:
    jobs = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    return {j["name"]: j["template"]["spec"]["template"]["spec"] for j in jobs}


def test_image_override_reaches_trainer_primaries_and_following_inits_not_tcpxo() -> None:
    cert = _cert(
        "    - {domain: communication, variant: nccl-all-reduce}\n"
        "    - {domain: training, variant: nemotron5-8b}",
        "  image: registry.example.com/mine:1",
    )
    objects = render_certification(cert, "gcp")
    runtimes = [o for o in objects if o["kind"] == "TrainingRuntime"]
    nccl, training = _pods(runtimes[0]), _pods(runtimes[1])
    assert nccl["node"]["containers"][0]["image"] == "registry.example.com/mine:1"
    assert nccl["launcher"]["initContainers"][0]["image"] == "registry.example.com/mine:1"
    tcpxo = next(c for c in nccl["node"]["initContainers"] if c["name"] == "tcpxo-daemon")
    assert tcpxo["image"].startswith("us-docker.pkg.dev/gce-ai-infra/")
    clone = training["node"]["initContainers"][0]
    assert (clone["name"], clone["image"]) == ("megatron-clone", "registry.example.com/mine:1")
    for job in (o for o in objects if o["kind"] == "TrainJob"):
        assert job["spec"]["trainer"]["image"] == "registry.example.com/mine:1"


def test_mlnx_option_overrides_the_gpu_default_in_the_nic_request() -> None:
    cert = _cert(
        "    - {domain: communication, variant: nccl-all-reduce, options: {mlnxPerNode: 2}}"
    )
    runtime = next(o for o in render_certification(cert, "azure") if o["kind"] == "TrainingRuntime")
    limits = _pods(runtime)["node"]["containers"][0]["resources"]["limits"]
    assert limits["nvidia.com/mlnxnics"] == "2"


def test_mlnx_zero_opts_out_of_the_nic_request() -> None:
    cert = _cert(
        "    - {domain: communication, variant: nccl-all-reduce, options: {mlnxPerNode: 0}}"
    )
    runtime = next(o for o in render_certification(cert, "azure") if o["kind"] == "TrainingRuntime")
    assert "nvidia.com/mlnxnics" not in str(runtime)


def test_the_same_category_twice_with_other_options_renders_apart() -> None:
    cert = _cert(
        "    - {domain: communication, variant: nccl-all-reduce, options: {nodesPerJob: 1}}\n"
        "    - {domain: communication, variant: nccl-all-reduce, options: {nodesPerJob: 2}}"
    )
    objects = render_certification(cert)
    names = [o["metadata"]["name"] for o in objects]
    assert len(names) == len(set(names)) == 4
    jobs = [o for o in objects if o["kind"] == "TrainJob"]
    assert [j["spec"]["runtimeRef"]["name"] for j in jobs] == [
        o["metadata"]["name"] for o in objects if o["kind"] == "TrainingRuntime"
    ]


def test_gang_queue_named_like_the_runtime_survives_renaming() -> None:
    cert = _cert(
        "    - {domain: communication, variant: nccl-all-reduce}",
        "  gangScheduler: {schedulerName: kai-scheduler, queue: nccl-all-reduce-runtime}",
    )
    runtime = next(o for o in render_certification(cert) if o["kind"] == "TrainingRuntime")
    assert runtime["metadata"]["name"] != "nccl-all-reduce-runtime"
    for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        assert (
            job["template"]["metadata"]["labels"]["kai.scheduler/queue"]
            == "nccl-all-reduce-runtime"
        )


def test_every_object_carries_the_owner_and_tracking_labels_and_namespace() -> None:
    cert = _cert("    - {domain: diagnostics, variant: dcgm-level1}")
    for obj in render_certification(cert):
        labels = obj["metadata"]["labels"]
        assert labels["app.kubernetes.io/managed-by"] == "glimmer"
        assert obj["metadata"]["namespace"] == "ns"
        if obj["kind"] != "TrainJob":
            assert labels["certify.glimmer.ai/certification"] == "c"
            assert labels["certify.glimmer.ai/category-variant"] == "dcgm-level1"


def test_a_conflicting_workload_queue_label_fails_with_the_label_named() -> None:
    cert = _cert(
        "    - {domain: communication, variant: nccl-all-reduce}",
        "  gangScheduler: {schedulerName: kai-scheduler, queue: a}\n"
        "  workloadMetadata: {labels: {kai.scheduler/queue: b}}",
    )
    with pytest.raises(PlatformError) as e:
        render_certification(cert)
    # The label the spec sets is to blame: the error names it (the CLI adds its line).
    assert e.value.location.field == 'spec.workloadMetadata.labels["kai.scheduler/queue"]'
    assert 'conflicting label value "b", expected "a"' in e.value.message


def test_thresholds_become_the_validation_block_and_repeat_count_the_iterations() -> None:
    from glimmer.certify.catalog.build import BuildConfig, build_workflow_spec
    from glimmer.certify.catalog.entries import get_entry

    cert = _cert(
        "    - {domain: communication, variant: nccl-all-reduce}",
        "  thresholds: {busBandwidthGBps: 'value >= 400'}\n"
        "  repeatCount: 3\n  measurementTimeout: 10m",
    )
    cfg = BuildConfig("onprem", "h100", 1, 8, 8, False, cert.spec.options_for(0))
    spec, _ = build_workflow_spec(get_entry("communication", "nccl-all-reduce"), cfg)
    assert spec["validation"] == {
        "performance": {
            "enabled": True,
            "thresholds": {"thresholds": {"busBandwidthGBps": "value >= 400"}},
            "measurementTimeout": "10m",
        }
    }
    assert spec["orchestration"]["iterations"] == 3


def test_on_prem_gb200_requests_the_named_nic_resource_only_when_named() -> None:
    named = _cert(
        "    - domain: communication\n      variant: nccl-all-reduce\n"
        "      options: {nicResourceName: rdma/ib}",
        product="NVIDIA-GB200",
    )
    runtime = next(o for o in render_certification(named) if o["kind"] == "TrainingRuntime")
    limits = _pods(runtime)["node"]["containers"][0]["resources"]["limits"]
    assert limits["rdma/ib"] == "8"
    unnamed = _cert(
        "    - {domain: communication, variant: nccl-all-reduce}", product="NVIDIA-GB200"
    )
    runtime = next(o for o in render_certification(unnamed) if o["kind"] == "TrainingRuntime")
    assert "rdma/ib" not in str(runtime)


def _load_errors(categories: str, extra: str = "") -> list[tuple[str | None, int | None, str]]:
    text = (
        "apiVersion: certify.glimmer.ai/v1alpha1\nkind: Certification\nmetadata: {name: c}\n"
        "spec:\n  target: {nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}\n"
        f"{extra}  categories:\n{categories}"
    )
    with pytest.raises(InputErrors) as e:
        load_text(text, "cert.yaml")
    return [(x.location.field, x.location.line, x.message) for x in e.value.errors]


def test_a_category_not_in_the_catalog_is_refused_when_the_file_loads() -> None:
    (err,) = _load_errors("    - domain: communication\n      variant: nccl-allreduce\n")
    field, line, message = err
    assert (field, line) == ("spec.categories[0].variant", 8)
    assert "communication/nccl-allreduce is not in the catalog" in message
    assert "communication/nccl-all-reduce" in message  # the known ones are listed


def test_a_threshold_its_category_never_measures_is_refused_at_load() -> None:
    (err,) = _load_errors(
        "    - domain: diagnostics\n      variant: dcgm-level2\n"
        "      options: {thresholds: {busBandwidthGBps: 'value >= 400'}}\n"
    )
    assert err[0] == "spec.categories[0].options.thresholds.busBandwidthGBps"
    assert "diagnostics/dcgm-level2 never measures busBandwidthGBps" in err[2]


def test_a_spec_level_threshold_a_category_never_measures_is_refused_at_its_own_line() -> None:
    (err,) = _load_errors(
        "    - {domain: training, variant: nemotron5-8b}\n"
        "    - {domain: communication, variant: nccl-all-reduce}\n",
        extra="  thresholds:\n    goodputRatio: 'value >= 0.9'\n",
    )
    assert err[:2] == ("spec.thresholds.goodputRatio", 7)
    assert "communication/nccl-all-reduce never measures goodputRatio" in err[2]


def test_thresholds_each_category_measures_load() -> None:
    cert = _cert(
        "    - domain: training\n      variant: nemotron5-8b\n"
        "      options: {thresholds: {goodputRatio: 'value >= 0.9'}}\n"
        "    - domain: communication\n      variant: nccl-all-reduce\n"
        "      options: {thresholds: {busBandwidthGBps: 'value >= 400 && value < 1e4'}}\n"
    )
    assert cert.spec.options_for(1).thresholds == {
        "busBandwidthGBps": "value >= 400 && value < 1e4"
    }
