"""thermal-soak run for real: its FP32 GEMM soak and bitwise compare loop on torch's cpu in test
mode, NVML from replayed traces, its output through contract.parse; each exit rule of §9.3 in
order, injected miscompares found, the metrics re-printed while it runs, every device loaded at
once, and the declared Skip on this GPU-less host without test mode."""

from __future__ import annotations

import io
import signal
import subprocess
from pathlib import Path

from real_runner import FIXTURES, Ran, argv_of, assert_contract, finish, run_runner, runner_env

from glimmer.contract.vocab import RunnerVerdict
from glimmer.runners import thermal_soak
from glimmer.runners.program import run
from glimmer.runners.settings import Settings
from glimmer.runners.thermal_soak_config import read_config
from glimmer.runners.thermal_soak_engine import Figures, ieee_fp32

TRACES = FIXTURES / "nvml"
XID_LINE = "6,1300,6000000,-;NVRM: Xid (PCI:0000:19:00): 48, pid=1, DBE (double bit error)\n"
QUICK = {
    "BURNIN_TEST_DEVICE": "cpu",
    "BURNIN_DURATION_SECONDS": "15",
    "BURNIN_TEST_TIME_SCALE": "0.05",  # the 15 s floor run in 0.75 s of the real loop
    "BURNIN_SOAK_MATRIX_N": "512",
    "BURNIN_KMSG_PATH": str(FIXTURES / "nvml" / "kmsg_old_xid.txt"),
}


def env_for(trace: str, **extra: str) -> dict[str, str]:
    return {**QUICK, "BURNIN_TEST_NVML_TRACE": str(TRACES / f"{trace}.json"), **extra}


def in_process(env: dict[str, str], out: io.StringIO | None = None) -> Ran:
    out = out or io.StringIO()
    code = run(thermal_soak.KIND, thermal_soak.soak, environ=env, out=out)
    ran = finish(thermal_soak.KIND, out.getvalue(), "", code)
    assert_contract(ran)
    return ran


def test_a_healthy_soak_passes_and_reprints_its_figures_through_the_real_program() -> None:
    ran = run_runner("thermal-soak", env_for("healthy"))
    assert_contract(ran)
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    m = ran.parsed.metrics
    assert m["miscompares"] == "0" and m["nonfiniteCount"] == "0" and m["faultsInjected"] == "0"
    assert int(m["iterationsCompleted"]) > 1 and float(m["sustainedThroughputTflops"]) > 0
    assert m["throttleEvents"] == "0" and float(m["sustainedClockPct"]) > 99
    assert m["eccErrors"] == "0" and m["eccMode"] == "enabled"
    assert m["deviceConcurrency"] == "all" and m["matrixN"] == "512"
    assert ran.stdout.count("\niterationsCompleted=") >= 2  # a truncated log is a snapshot
    assert m["xidSource"] == "kmsg" and m["xidEvents"] == "0"  # the old Xid is not counted


def test_injected_miscompares_are_found_and_fail_the_soak() -> None:
    ran = in_process(env_for("healthy", BURNIN_SOAK_INJECT_MISCOMPARES="3"))
    assert ran.exit_code == 1
    m = ran.parsed.metrics
    assert m["faultsInjected"] == "3" and m["miscompares"] == "3" and m["sdcDetections"] == "3"
    assert ran.marker == "THERMAL_SOAK_FAIL: miscompares=3: results differ from the reference"


def test_a_latched_thermal_slowdown_is_a_throttle_event_and_fails() -> None:
    ran = in_process(env_for("thermal_latch"))
    assert ran.exit_code == 1 and "throttleEvents=1" in ran.marker
    assert "hwThermalSlowdown" in ran.parsed.metrics["throttleReasons"]


def test_miscompares_are_judged_before_throttling() -> None:
    ran = in_process(env_for("thermal_latch", BURNIN_SOAK_INJECT_MISCOMPARES="1"))
    assert ran.exit_code == 1 and "miscompares=1" in ran.marker


def test_a_power_cap_is_no_throttle_event_and_passes_above_the_floor() -> None:
    ran = in_process(env_for("power_cap"))
    m = ran.parsed.metrics
    assert ran.exit_code == 0, ran.stdout
    assert m["throttleEvents"] == "0" and m["powerCapEvents"] == "1"
    assert int(m["throttledSamples"]) > 0


def test_a_pstate_pinned_low_fails_the_clock_floor() -> None:
    ran = in_process(env_for("pstate_low"))
    assert ran.exit_code == 1 and "sustainedClockPct" in ran.marker and "floor 60" in ran.marker


def test_a_peak_temperature_over_a_set_ceiling_fails() -> None:
    ran = in_process(env_for("healthy", THERMAL_SOAK_MAX_TEMP_C="64"))
    assert ran.exit_code == 1 and "ceiling 64" in ran.marker
    assert ran.parsed.metrics["tempCeilingC"] == "64"


def test_mig_enabled_skips_with_the_declared_marker_and_claims_no_counts() -> None:
    ran = in_process(env_for("mig_on"))
    assert ran.exit_code == 2 and ran.marker.startswith("THERMAL_SOAK_SKIP: MIG")
    assert "miscompares" not in ran.parsed.metrics
    assert ran.parsed.verdict is RunnerVerdict.SKIP


def test_an_idle_gpu_under_the_load_is_an_error() -> None:
    ran = in_process(env_for("idle"))
    assert ran.exit_code == 3 and "utilisation" in ran.marker


def test_without_a_rated_clock_the_clock_share_is_unmeasurable_and_not_judged() -> None:
    ran = in_process(env_for("no_rated_clock"))
    assert ran.exit_code == 0
    assert "sustainedClockPct" in ran.parsed.unmeasurable


def test_ecc_a_part_without_it_is_na_and_a_counter_going_backwards_is_na_too() -> None:
    without = in_process(env_for("ecc_unsupported"))
    assert "eccErrors" in without.parsed.unmeasurable and without.exit_code == 0
    assert without.parsed.metrics["eccMode"] == "unsupported"
    backwards = in_process(env_for("counter_backwards"))
    assert "eccErrors" in backwards.parsed.unmeasurable
    assert "went backwards" in backwards.parsed.metrics["configWarnings"]


def test_nvml_missing_while_a_device_is_visible_is_an_error() -> None:
    ran = in_process(dict(QUICK))
    assert ran.exit_code == 3 and "NVML is absent" in ran.marker


def test_a_malformed_floor_is_an_error_naming_the_variable() -> None:
    ran = in_process(env_for("healthy", THERMAL_SOAK_MIN_CLOCK_PCT="sixty"))
    assert ran.exit_code == 3 and "THERMAL_SOAK_MIN_CLOCK_PCT" in ran.marker


def test_every_device_soaks_at_once_and_their_counts_are_summed() -> None:
    env = env_for("two_devices", BURNIN_TEST_DEVICE_COUNT="2", BURNIN_SOAK_INJECT_MISCOMPARES="2")
    ran = in_process(env)
    m = ran.parsed.metrics
    assert ran.exit_code == 1 and m["deviceCount"] == "2" and m["deviceConcurrency"] == "all"
    assert m["miscompares"] == "4" and m["faultsInjected"] == "2"
    assert "device 0" in ran.marker and "device 1" in ran.marker


def test_two_devices_fold_to_the_slower_clock_and_report_the_spread() -> None:
    ran = in_process(env_for("two_devices", BURNIN_TEST_DEVICE_COUNT="2"))
    m = ran.parsed.metrics
    assert ran.exit_code == 0, ran.stdout
    assert 75 <= float(m["sustainedClockPct"]) <= 76.5 and m["worstDeviceIndex"] == "1"
    assert float(m["sustainedClockSpreadPct"]) > 20


class _XidOnFirstProgress(io.StringIO):
    """Writes an Xid into the fixture kernel log the first time the soak re-prints its
    figures: mid-run, so the watch's second drain must count it."""

    def __init__(self, log: Path) -> None:
        super().__init__()
        self.log = log
        self.done = False

    def write(self, text: str) -> int:
        if not self.done and text.startswith("iterationsCompleted="):
            self.done = True
            with self.log.open("a") as f:
                f.write(XID_LINE)
        return super().write(text)


def test_an_xid_logged_during_the_soak_is_counted_but_never_fails_it(tmp_path: Path) -> None:
    log = tmp_path / "kmsg"
    log.write_text((FIXTURES / "nvml" / "kmsg_old_xid.txt").read_text())
    env = {**env_for("healthy"), "BURNIN_KMSG_PATH": str(log), "BURNIN_DURATION_SECONDS": "30"}
    ran = in_process(env, _XidOnFirstProgress(log))
    m = ran.parsed.metrics
    assert ran.exit_code == 0
    assert m["xidEvents"] == "1" and m["lastXidCode"] == "48" and m["xidWindowsWatched"] == "1"


def test_without_a_kernel_log_the_xid_source_says_why(tmp_path: Path) -> None:
    ran = in_process({**env_for("healthy"), "BURNIN_KMSG_PATH": str(tmp_path / "none")})
    m = ran.parsed.metrics
    assert m["xidSource"] == "none" and "xidEvents" not in m
    assert "No such file" in m["xidSourceDetail"]


def test_the_ordered_rules_on_figures() -> None:
    def figures(**kw: object) -> Figures:
        base: dict[str, object] = dict(
            iterations=10, miscompares=0, nonfinite=0, samples=5, utilization_pct=99.0,
            throttle_events=0, sustained_clock_pct=90.0, peak_temp_c=70.0, ecc_delta=0,
        )  # fmt: skip
        base.update(kw)
        return Figures(**base)  # type: ignore[arg-type]

    judge = thermal_soak.judge_with(floor=60, ceiling=80)
    assert judge(figures(iterations=0, miscompares=5)).reason.startswith("zero")
    assert "miscompares" in judge(figures(miscompares=1, nonfinite=1, throttle_events=2)).reason
    assert "nonfinite" in judge(figures(nonfinite=1, throttle_events=2)).reason
    assert "utilisation" in judge(figures(utilization_pct=10.0, throttle_events=2)).reason
    assert "no NVML sample" in judge(figures(samples=0)).reason
    assert "throttleEvents" in judge(figures(throttle_events=1, sustained_clock_pct=1.0)).reason
    assert "sustainedClockPct" in judge(figures(sustained_clock_pct=50.0, peak_temp_c=99)).reason
    assert "ceiling" in judge(figures(peak_temp_c=81.0)).reason
    assert judge(figures()).verdict is RunnerVerdict.PASS
    assert thermal_soak.judge_with(60, 0)(figures(peak_temp_c=120.0)).verdict is RunnerVerdict.PASS


def test_config_floors_and_clamps() -> None:
    cfg = read_config(
        Settings({"BURNIN_DURATION_SECONDS": "5", "BURNIN_SOAK_SAMPLE_INTERVAL_MS": "2",
                  "BURNIN_SOAK_MATRIX_N": "100"})
    )  # fmt: skip
    assert (cfg.duration_s, cfg.requested_s, cfg.sample_interval_ms, cfg.matrix_n) == (
        15, 5, 10, 512,
    )  # fmt: skip
    assert cfg.warmup_s == 5.0 and len(cfg.warnings) == 3
    assert read_config(Settings({"BURNIN_DURATION_SECONDS": "900"})).warmup_s == 30.0


def test_on_this_host_without_a_gpu_or_test_mode_it_skips_never_passes() -> None:
    ran = in_process({})  # the bare venv runs it as a process: test_runners_standalone
    assert ran.exit_code == 2 and ran.marker.startswith("THERMAL_SOAK_SKIP: no accelerator")


def test_sigterm_mid_soak_stops_every_device_and_ends_in_error_with_a_marker() -> None:
    env = env_for("two_devices", BURNIN_TEST_DEVICE_COUNT="2", BURNIN_DURATION_SECONDS="3600")
    proc = subprocess.Popen(
        argv_of("thermal-soak"), env=runner_env(env), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:  # the first re-print: both devices are soaking
        seen.append(line)
        if line.startswith("iterationsCompleted="):
            break
    proc.send_signal(signal.SIGTERM)
    rest, err = proc.communicate(timeout=60)  # a soak that kept going would hang here
    ran = finish("thermal-soak", "".join(seen) + rest, err, proc.returncode)
    assert proc.returncode == 3, (proc.returncode, err[-2000:])
    assert "terminated by signal SIGTERM" in ran.marker
    assert_contract(ran)


def test_the_soak_asks_torch_for_ieee_fp32_matmuls_never_tf32() -> None:
    import torch

    ieee_fp32(torch)  # what a CUDA device gets before its first GEMM (the default, made sure)
    assert torch.backends.cuda.matmul.allow_tf32 is False
