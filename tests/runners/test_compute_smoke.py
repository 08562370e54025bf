"""compute-smoke run for real: the NVFP4 GEMM on torch's cpu in test mode (packing, the
product of the e2m1 codes, the float64 reference and the comparison), §9.1's exit rules in
order, the Skip on this host with no GPU, and an injected miscompare found."""

from __future__ import annotations

import io

import pytest
from real_runner import Ran, assert_contract, finish, run_runner, runner_env

from glimmer.runners import compute_smoke, gemm_sweep_ops, program

TEST_MODE = {
    "BURNIN_TEST_DEVICE": "cpu",
    "BURNIN_TEST_COMPUTE_CAP": "12.1",
    "BURNIN_TEST_GPU_NAME": "NVIDIA GB10",
    "COMPUTE_SMOKE_SHAPE": "128",
}


def smoke(**env: str) -> Ran:
    out = io.StringIO()
    code = program.run(
        "compute-smoke", compute_smoke.measure, runner_env({**TEST_MODE, **env}), out
    )
    ran = finish("compute-smoke", out.getvalue(), "", code)
    assert_contract(ran)
    return ran


def test_the_program_passes_on_the_test_device_with_the_real_error_floor() -> None:
    ran = run_runner("compute-smoke", TEST_MODE)
    assert_contract(ran)
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    m = ran.parsed.metrics
    assert (m["gpuName"], m["computeCap"]) == ("NVIDIA GB10", "12.1")
    assert (m["m"], m["n"], m["k"]) == ("128", "128", "128")
    # The bf16 output rounds: a real, small, non-zero error under the tolerance.
    assert 0 < float(m["maxRelError"]) <= compute_smoke.TOLERANCE
    assert float(m["maxAbsRef"]) > 0
    assert m["nonfiniteCount"] == "0"
    assert float(m["elapsedMs"]) > 0 and "throughputTflops" in m
    assert m["deviceCount"] == "1"
    assert ran.marker == "FP4_GEMM_PASS"


def test_an_injected_miscompare_is_found_and_fails() -> None:
    ran = smoke(COMPUTE_SMOKE_INJECT_MISCOMPARES="1")
    assert ran.exit_code == 1, ran.stdout
    assert ran.marker.startswith("FP4_GEMM_FAIL: max_rel_error ")
    assert float(ran.parsed.metrics["maxRelError"]) > compute_smoke.TOLERANCE


def test_without_a_gpu_and_without_test_mode_it_skips() -> None:
    ran = run_runner("compute-smoke", {})
    assert_contract(ran)
    assert ran.exit_code == 2
    assert ran.marker.startswith("FP4_GEMM_SKIP: no accelerator")


@pytest.mark.parametrize("cc", ["9.0", "8.0", "8.9"])
def test_a_part_without_block_scaled_fp4_skips(cc: str) -> None:
    ran = smoke(BURNIN_TEST_COMPUTE_CAP=cc)
    assert ran.exit_code == 2
    assert ran.marker == f"FP4_GEMM_SKIP: NVIDIA GB10 (CC {cc}) has no block-scaled FP4 path"


def test_blackwell_data_center_parts_are_measured() -> None:
    assert smoke(BURNIN_TEST_COMPUTE_CAP="10.0").exit_code == 0


@pytest.mark.parametrize(
    ("env", "why"),
    [
        ({"BURNIN_CUDA_ARCH": "sm_121a", "BURNIN_TEST_COMPUTE_CAP": "12.0"}, "sm_121a"),
        ({"BURNIN_CUDA_ARCH": "sm_120a", "BURNIN_TEST_COMPUTE_CAP": "12.1"}, "sm_120a"),
        ({"BURNIN_TEST_COMPUTE_CAP": "twelve"}, "unreadable"),
        ({"COMPUTE_SMOKE_SHAPE": "100"}, "COMPUTE_SMOKE_SHAPE"),
        ({"BURNIN_RESOURCE_LIMITS": "nvidia.com/gpu=4"}, "BURNIN_RESOURCE_LIMITS"),
    ],
)
def test_what_cannot_be_measured_is_an_error(env: dict[str, str], why: str) -> None:
    ran = smoke(**env)
    assert ran.exit_code == 3, ran.stdout
    assert ran.marker.startswith("FP4_GEMM_ERROR: ") and why in ran.marker


@pytest.mark.parametrize("arch", ["sm_120f", "sm_120", "sm_121a", "sm_999x"])
def test_an_image_arch_that_covers_the_part_or_claims_nothing_runs(arch: str) -> None:
    assert smoke(BURNIN_CUDA_ARCH=arch).exit_code == 0


def test_a_clean_device_does_not_hide_a_failing_one() -> None:
    ran = smoke(BURNIN_TEST_DEVICE_COUNT="2", COMPUTE_SMOKE_INJECT_MISCOMPARES="1")
    assert ran.exit_code == 1
    assert ran.parsed.metrics["deviceCount"] == "2"
    assert ran.marker.startswith("FP4_GEMM_FAIL: device 0: max_rel_error")


def test_the_exit_rules_come_in_order() -> None:
    clean = gemm_sweep_ops.Checked(1.0, 500.0, 0, 0, 1)
    assert compute_smoke.judge(clean).exit_code == 0
    no_ref = gemm_sweep_ops.Checked(0.0, 0.0, 3, 1, 1)
    assert compute_smoke.judge(no_ref).exit_code == 3  # before the NaN it also has
    nan_and_zero = gemm_sweep_ops.Checked(0.0, 500.0, 3, 1, 1)
    assert "NaN/Inf" in compute_smoke.judge(nan_and_zero).reason
    zero = gemm_sweep_ops.Checked(500.0, 500.0, 0, 1, 1)
    assert compute_smoke.judge(zero).reason == "the NVFP4 output is all zeros"
