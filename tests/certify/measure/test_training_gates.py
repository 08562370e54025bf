"""The gates a training job is held to: the certification's own thresholds per key, and the
glimmer defaults (goodput, throughput per GPU by product) for every key it leaves out."""

from __future__ import annotations

import pytest

from glimmer.certify.measure.expect import TRAINING_PEAK_FRACTION, training_tflops_floor
from glimmer.certify.training_gates import GOODPUT, STEP_TIME, TFLOPS, judge, training_gates
from glimmer.fleet.skus import lookup

GB200 = "NVIDIA-GB200"
HEALTHY = {GOODPUT: 1.0, TFLOPS: 911.0, STEP_TIME: 0.38}


@pytest.mark.parametrize(
    ("product", "sku"),
    [
        ("NVIDIA-GB200", "gb200_186gb"),
        ("NVIDIA-H100-80GB-HBM3", "h100_sxm_80gb"),
        ("NVIDIA-H100-PCIe", "h100_pcie_80gb"),
        ("NVIDIA-H200", "h200_sxm_141gb"),
        ("NVIDIA-B200", "b200_180gb"),
        ("NVIDIA-L40S", "l40s_48gb"),
    ],
)
def test_the_throughput_floor_of_a_product_is_a_share_of_its_dense_bf16_peak_in_the_sku_table(
    product: str, sku: str
) -> None:
    row = lookup(sku)
    assert row is not None and row.bf16_tflops is not None
    floor = training_tflops_floor(product)
    assert floor is not None
    assert floor.value == round(row.bf16_tflops * TRAINING_PEAK_FRACTION.value, 1)
    assert "skus.csv" in floor.source and "NeMo" in floor.source


@pytest.mark.parametrize("product", ["NVIDIA-GB10", "NVIDIA-RTX-PRO-6000-Blackwell", ""])
def test_a_product_without_a_sourced_figure_gets_no_default_throughput_gate(product: str) -> None:
    assert training_tflops_floor(product) is None
    assert [g.key for g in training_gates({}, [product])] == [GOODPUT]


def test_a_slow_gpu_fails_the_default_throughput_gate_of_its_product() -> None:
    gates = training_gates({}, [GB200, GB200])
    assert [g.key for g in gates] == [TFLOPS, GOODPUT]
    assert judge(gates, HEALTHY).passed
    slow = judge(gates, {**HEALTHY, TFLOPS: 182.2})
    assert not slow.passed and slow.gate is not None
    assert (slow.gate.key, slow.measured, slow.gate.floor) == (TFLOPS, 182.2, 625.0)
    assert 'Threshold "avgTFLOPsPerGPU" violated: measured 182.2000' in slow.reason


def test_a_certifications_own_threshold_replaces_only_the_default_of_its_key() -> None:
    gates = {g.key: g for g in training_gates({STEP_TIME: "value < 2.0"}, [GB200])}
    assert set(gates) == {GOODPUT, STEP_TIME, TFLOPS}
    assert gates[STEP_TIME].floor is None and gates[TFLOPS].floor == 625.0
    own = {g.key: g for g in training_gates({TFLOPS: "value >= 800"}, [GB200])}
    assert own[TFLOPS].expression == "value >= 800" and own[TFLOPS].floor is None


def test_a_mixed_group_with_an_unknown_product_gets_no_default_throughput_gate() -> None:
    assert TFLOPS not in {g.key for g in training_gates({}, [GB200, "NVIDIA-GB10"])}


def test_a_passing_verdict_shows_goodput_and_a_failing_one_the_gate_that_failed() -> None:
    gates = training_gates({TFLOPS: "value >= 950"}, [GB200])
    failed = judge(gates, HEALTHY)
    assert not failed.passed and failed.gate is not None
    assert (failed.gate.key, failed.measured, failed.gate.floor) == (TFLOPS, 911.0, None)
    ok = judge(training_gates({}, [GB200]), HEALTHY)
    assert ok.passed and ok.gate is not None and (ok.gate.key, ok.measured) == (GOODPUT, 1.0)


def test_a_gate_on_a_figure_never_measured_fails_closed() -> None:
    v = judge(training_gates({}, [GB200]), {GOODPUT: 1.0})
    assert not v.passed and "no measured value" in v.reason


def test_an_expression_that_cannot_be_evaluated_fails_the_job() -> None:
    v = judge(training_gates({GOODPUT: "value >="}, [GB200]), HEALTHY)
    assert not v.passed and "is invalid" in v.reason
