"""gemm-sweep run for real: the program on torch's cpu in its test mode (every precision's
kernel, the compare loop, the fold), its §9.5 exit rules in order, the Skip on this host with
no GPU, injected miscompares found, and the conformance outputs read as the verdicts they show."""

from __future__ import annotations

import io
import os
import signal
import threading
from pathlib import Path

import pytest
import torch  # the test install has a CPU torch (Makefile); a missing one fails, never skips
from real_runner import Ran, assert_contract, finish, run_runner, runner_env

from glimmer.contract.parse import parse
from glimmer.contract.vocab import RunnerVerdict
from glimmer.runners import gemm_sweep, gemm_sweep_ops, program

CONFORMANCE = Path("/work/shared/conformance/gemm-sweep")
TEST_MODE = {
    "BURNIN_TEST_DEVICE": "cpu",
    "BURNIN_TEST_COMPUTE_CAP": "12.0",
    "GEMM_SWEEP_SHAPE": "64",
    "BURNIN_DURATION_SECONDS": "1",
}


def sweep(precision: str | None, **env: str) -> Ran:
    """The program's body in this process (torch is imported once for the file), its stdout
    read by the same parser; the subprocess tests below run the module as a user would."""
    full = {**TEST_MODE, **env}
    if precision is not None:
        full["BURNIN_VARIANT_PRECISION"] = precision
    out = io.StringIO()
    code = program.run("gemm-sweep", gemm_sweep.measure, runner_env(full), out)
    ran = finish("gemm-sweep", out.getvalue(), "", code)
    assert_contract(ran)
    return ran


def test_the_program_run_as_a_module_passes_on_the_test_device() -> None:
    ran = run_runner("gemm-sweep", {**TEST_MODE, "BURNIN_VARIANT_PRECISION": "bf16"})
    assert_contract(ran)
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    assert ran.stderr == ""


@pytest.mark.parametrize("precision", gemm_sweep_ops.PRECISIONS)
def test_each_precision_runs_its_kernel_and_every_result_matches(precision: str) -> None:
    ran = sweep(precision)
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    m = ran.parsed.metrics
    assert m["gemmPrecision"] == precision
    assert m["gemmShape"] == "64x64x64"
    assert int(m["iterationsCompleted"]) >= gemm_sweep.BATCH
    assert float(m["maxRelativeError"]) == 0.0
    assert m["nonfiniteCount"] == "0"
    assert float(m["totalKernelMs"]) > 0
    assert "achievedTflops" in m
    assert m["deviceCount"] == "1"
    assert "gemmThroughputSpreadPct" in ran.parsed.unmeasurable
    assert ran.marker == "GEMM_SWEEP_PASS"
    # Everything the reference output of this precision says, this runner says too.
    reference = parse("gemm-sweep", (CONFORMANCE / f"{precision}.stdout").read_text(), 0)
    assert set(reference.metrics) - {"builtCudaArch"} <= set(m)


def test_injected_miscompares_are_found_and_fail() -> None:
    ran = sweep("bf16", GEMM_SWEEP_INJECT_MISCOMPARES="3")
    assert ran.exit_code == 1, ran.stdout
    assert float(ran.parsed.metrics["maxRelativeError"]) > gemm_sweep_ops.EXACT_TOLERANCE
    assert ran.marker.startswith("GEMM_SWEEP_FAIL: bf16 result differs from the reference")


def test_without_a_gpu_and_without_test_mode_it_skips() -> None:
    ran = run_runner("gemm-sweep", {"BURNIN_VARIANT_PRECISION": "bf16"})
    assert_contract(ran)
    assert ran.exit_code == 2
    assert ran.marker.startswith("GEMM_SWEEP_SKIP: no accelerator")
    assert ran.parsed.verdict is RunnerVerdict.SKIP


@pytest.mark.parametrize(
    ("precision", "cc"), [("fp4", "9.0"), ("fp8", "8.0"), ("bf16", "7.5"), ("tf32", "7.0")]
)
def test_a_part_without_the_precision_skips(precision: str, cc: str) -> None:
    ran = sweep(precision, BURNIN_TEST_COMPUTE_CAP=cc)
    assert ran.exit_code == 2, ran.stdout
    assert ran.marker == f"GEMM_SWEEP_SKIP: test cpu (CC {cc}) has no {precision} GEMM path"


def test_fp4_runs_on_blackwell_data_center_parts_too() -> None:
    assert sweep("fp4", BURNIN_TEST_COMPUTE_CAP="10.0").exit_code == 0


@pytest.mark.parametrize(
    ("env", "why"),
    [
        ({}, "BURNIN_VARIANT_PRECISION: unset"),
        ({"BURNIN_VARIANT_PRECISION": "int8"}, "BURNIN_VARIANT_PRECISION: unrecognised 'int8'"),
        ({"BURNIN_VARIANT_PRECISION": "bf16", "GEMM_SWEEP_SHAPE": "10x"}, "GEMM_SWEEP_SHAPE"),
        ({"BURNIN_VARIANT_PRECISION": "bf16", "BURNIN_DURATION_SECONDS": "1m"}, "DURATION"),
        ({"BURNIN_VARIANT_PRECISION": "bf16", "BURNIN_TEST_COMPUTE_CAP": "n/a"}, "unreadable"),
        (
            {"BURNIN_VARIANT_PRECISION": "bf16", "BURNIN_CUDA_ARCH": "sm_121a"},
            "image built for sm_121a cannot run on CC 12.0",
        ),
        (
            {"BURNIN_VARIANT_PRECISION": "bf16", "BURNIN_RESOURCE_LIMITS": "nvidia.com/gpu=2"},
            "budget 2 differs from the 1 devices visible",
        ),
    ],
)
def test_what_cannot_be_measured_is_an_error(env: dict[str, str], why: str) -> None:
    ran = sweep(None, **env)
    assert ran.exit_code == 3, ran.stdout
    assert ran.marker.startswith("GEMM_SWEEP_ERROR: ") and why in ran.marker, ran.marker


def test_every_allocated_device_is_measured_and_folded() -> None:
    ran = sweep(
        "fp8",
        BURNIN_TEST_DEVICE_COUNT="2",
        BURNIN_RESOURCE_LIMITS="cpu=2,nvidia.com/gpu=2",
    )
    assert ran.exit_code == 0, ran.stdout
    m = ran.parsed.metrics
    assert m["deviceCount"] == "2" and m["devicesVisible"] == "2"
    assert m["deviceWindowS"] == "0.5"  # sequential: the window divided
    assert "gemmThroughputSpreadPct" in m
    assert [a.name for a in ran.parsed.artifacts] == ["per-device.json"]


def test_a_corrupted_device_fails_the_node_and_is_named_worst() -> None:
    ran = sweep("fp64", BURNIN_TEST_DEVICE_COUNT="2", GEMM_SWEEP_INJECT_MISCOMPARES="1")
    assert ran.exit_code == 1
    assert ran.marker.startswith("GEMM_SWEEP_FAIL: device 0: fp64 result differs")


def test_the_compare_loop_counts_nonfinite_and_all_zero_results() -> None:
    gemm = gemm_sweep_ops.Gemm(torch, "cpu", "bf16", 32, 32, 64)
    gemm.launch()
    gemm.out[0, 0] = float("nan")
    gemm.out[1, 1] = float("inf")
    gemm.check()
    gemm.launch()
    gemm.out.zero_()
    gemm.check()
    gemm.launch()
    gemm.check()
    checked = gemm.checked()
    assert (checked.nonfinite, checked.all_zero_results, checked.iterations) == (2, 1, 3)
    cfg = gemm_sweep.read_config(gemm_sweep.Settings({"BURNIN_VARIANT_PRECISION": "bf16"}))
    verdict = gemm_sweep.judge(cfg, checked, 1.0)
    assert verdict.verdict is RunnerVerdict.FAIL and "non-finite" in verdict.reason


def test_an_all_zero_result_fails_before_the_tolerance_is_looked_at() -> None:
    cfg = gemm_sweep.read_config(gemm_sweep.Settings({"BURNIN_VARIANT_PRECISION": "fp4"}))
    checked = gemm_sweep_ops.Checked(256.0, 256.0, 0, 1, 10)
    assert gemm_sweep.judge(cfg, checked, 1.0).reason == "1 fp4 results were all zeros"


@pytest.mark.parametrize("path", sorted(CONFORMANCE.glob("*.stdout")), ids=lambda p: p.stem)
def test_the_conformance_outputs_read_as_the_verdicts_they_show(path: Path) -> None:
    text = path.read_text()
    parsed = parse("gemm-sweep", text, 0)
    assert text.rstrip().endswith("GEMM_SWEEP_PASS")
    assert parsed.verdict is RunnerVerdict.PASS
    assert parsed.invalid_names == ()
    m = parsed.metrics
    assert m["gemmPrecision"] == path.stem
    assert float(m["achievedTflops"]) > 0 and m["nonfiniteCount"] == "0"
    tolerance = gemm_sweep_ops.FP4_TOLERANCE if path.stem == "fp4" else 1e-6
    assert float(m["maxRelativeError"]) <= tolerance


def test_concurrent_devices_each_get_the_whole_window() -> None:
    ran = sweep("bf16", BURNIN_TEST_DEVICE_COUNT="2", BURNIN_DEVICE_CONCURRENCY="all")
    assert ran.exit_code == 0, ran.stdout
    m = ran.parsed.metrics
    assert m["deviceConcurrency"] == "all" and m["deviceWindowS"] == "1.0"
    assert m["deviceCount"] == "2"


def test_the_spread_is_unmeasurable_under_mig() -> None:
    ran = sweep(
        "tf32", BURNIN_TEST_DEVICE_COUNT="2", BURNIN_TEST_GPU_NAME="NVIDIA A100 MIG 3g.20gb"
    )
    assert ran.exit_code == 0, ran.stdout
    assert "gemmThroughputSpreadPct" in ran.parsed.unmeasurable


def test_sigterm_while_devices_load_concurrently_ends_every_devices_loop() -> None:
    before = set(threading.enumerate())
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGTERM))
    timer.start()
    ran = sweep("bf16", BURNIN_TEST_DEVICE_COUNT="2", BURNIN_DEVICE_CONCURRENCY="all",
                BURNIN_DURATION_SECONDS="600")  # fmt: skip
    timer.join()
    assert ran.exit_code == 3
    assert ran.marker == "GEMM_SWEEP_ERROR: terminated by signal SIGTERM before a verdict"
    loading = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    assert loading == []  # no device still loads past the marker
