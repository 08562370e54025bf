"""gpu-burn run for real: the shared soak on torch's cpu in test mode, NVML from replayed traces,
output through contract.parse; judged on correctness alone (§9.4): injected miscompares found,
an ECC delta fails, a counter going backwards is no delta, throttling is reported not judged,
and the declared Skip on this GPU-less host without test mode."""

from __future__ import annotations

import io

from real_runner import FIXTURES, Ran, assert_contract, finish, run_runner

from glimmer.contract.vocab import RunnerVerdict
from glimmer.runners import gpu_burn
from glimmer.runners.program import run
from glimmer.runners.thermal_soak_engine import Figures

TRACES = FIXTURES / "nvml"
QUICK = {
    "BURNIN_TEST_DEVICE": "cpu",
    "BURNIN_DURATION_SECONDS": "15",
    "BURNIN_TEST_TIME_SCALE": "0.05",
    "BURNIN_SOAK_MATRIX_N": "512",
    "BURNIN_KMSG_PATH": str(FIXTURES / "nvml" / "kmsg_old_xid.txt"),
}


def env_for(trace: str, **extra: str) -> dict[str, str]:
    return {**QUICK, "BURNIN_TEST_NVML_TRACE": str(TRACES / f"{trace}.json"), **extra}


def in_process(env: dict[str, str]) -> Ran:
    out = io.StringIO()
    code = run(gpu_burn.KIND, gpu_burn.burn, environ=env, out=out)
    ran = finish(gpu_burn.KIND, out.getvalue(), "", code)
    assert_contract(ran)
    return ran


def test_a_clean_burn_passes_through_the_real_program() -> None:
    ran = run_runner("gpu-burn", env_for("healthy"))
    assert_contract(ran)
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    m = ran.parsed.metrics
    assert m["miscompares"] == "0" and m["eccErrors"] == "0" and int(m["iterationsCompleted"]) > 1
    assert "clockFloorPct" not in m  # gpu-burn judges no clock
    assert ran.marker == "GPU_BURN_PASS"


def test_injected_miscompares_are_found_and_fail_the_burn() -> None:
    ran = in_process(env_for("healthy", BURNIN_SOAK_INJECT_MISCOMPARES="2"))
    assert ran.exit_code == 1
    assert ran.parsed.metrics["miscompares"] == "2" and ran.parsed.metrics["faultsInjected"] == "2"
    assert ran.marker.startswith("GPU_BURN_FAIL: miscompares=2")


def test_uncorrected_ecc_errors_during_the_burn_fail_it() -> None:
    ran = in_process(env_for("ecc_delta"))
    assert ran.exit_code == 1 and ran.marker.startswith("GPU_BURN_FAIL: eccErrors=2")
    assert ran.parsed.metrics["eccErrors"] == "2"


def test_miscompares_are_judged_before_ecc() -> None:
    ran = in_process(env_for("ecc_delta", BURNIN_SOAK_INJECT_MISCOMPARES="1"))
    assert ran.exit_code == 1 and "miscompares=1" in ran.marker


def test_a_counter_going_backwards_is_no_delta_and_does_not_fail() -> None:
    ran = in_process(env_for("counter_backwards"))
    assert ran.exit_code == 0
    assert "eccErrors" in ran.parsed.unmeasurable and "eccErrors" not in ran.parsed.metrics


def test_throttling_and_a_low_clock_are_reported_never_judged() -> None:
    hot = in_process(env_for("thermal_latch"))
    assert hot.exit_code == 0 and hot.parsed.metrics["throttleEvents"] == "1"
    low = in_process(env_for("pstate_low"))
    assert low.exit_code == 0 and float(low.parsed.metrics["sustainedClockPct"]) < 20


def test_mig_enabled_skips_with_the_declared_marker() -> None:
    ran = in_process(env_for("mig_on"))
    assert ran.exit_code == 2 and ran.marker.startswith("GPU_BURN_SKIP: MIG")


def test_nvml_that_fails_to_start_is_an_error() -> None:
    ran = in_process(env_for("init_error"))
    assert ran.exit_code == 3 and "version mismatch" in ran.marker


def test_a_malformed_injection_count_is_an_error_naming_the_variable() -> None:
    ran = in_process(env_for("healthy", BURNIN_SOAK_INJECT_MISCOMPARES="-1"))
    assert ran.exit_code == 3 and "BURNIN_SOAK_INJECT_MISCOMPARES" in ran.marker


def test_the_ordered_rules_on_figures() -> None:
    def figures(**kw: object) -> Figures:
        base: dict[str, object] = dict(
            iterations=10, miscompares=0, nonfinite=0, samples=5, utilization_pct=99.0,
            throttle_events=3, sustained_clock_pct=10.0, peak_temp_c=99.0, ecc_delta=0,
        )  # fmt: skip
        base.update(kw)
        return Figures(**base)  # type: ignore[arg-type]

    assert gpu_burn.judge(figures(iterations=0)).verdict is RunnerVerdict.ERROR
    assert "miscompares" in gpu_burn.judge(figures(miscompares=2, nonfinite=1)).reason
    assert "nonfinite" in gpu_burn.judge(figures(nonfinite=1, ecc_delta=1)).reason
    assert "eccErrors" in gpu_burn.judge(figures(ecc_delta=1, utilization_pct=1.0)).reason
    assert "utilisation" in gpu_burn.judge(figures(utilization_pct=1.0)).reason
    assert gpu_burn.judge(figures(ecc_delta=None)).verdict is RunnerVerdict.PASS
    assert gpu_burn.judge(figures()).verdict is RunnerVerdict.PASS  # heat and clock: no verdict


def test_on_this_host_without_a_gpu_or_test_mode_it_skips_never_passes() -> None:
    ran = in_process({})  # the bare venv runs it as a process: test_runners_standalone
    assert ran.exit_code == 2 and ran.marker.startswith("GPU_BURN_SKIP: no accelerator")
