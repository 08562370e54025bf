"""clockprobe run for real: its FMA chain on torch's cpu in test mode (BURNIN_TEST_DEVICE=cpu),
NVML from replayed traces (a healthy H200, a P-state pinned low, thermal slowdown latching, a
power cap, MIG on, no rated clock), its output read by contract.parse, each exit rule in
§9.2's order; and, with no test mode on this GPU-less host, the declared Skip."""

from __future__ import annotations

import io
import signal
import subprocess

from real_runner import FIXTURES, Ran, argv_of, assert_contract, finish, run_runner, runner_env

from glimmer.contract.vocab import RunnerVerdict
from glimmer.runners import clockprobe
from glimmer.runners.program import run

TRACES = FIXTURES / "nvml"
QUICK = {
    "BURNIN_TEST_DEVICE": "cpu",
    "BURNIN_DURATION_SECONDS": "10",
    "BURNIN_TEST_TIME_SCALE": "0.05",  # the 10 s floor run in 0.5 s of the real loop
}


def env_for(trace: str, **extra: str) -> dict[str, str]:
    return {**QUICK, "BURNIN_TEST_NVML_TRACE": str(TRACES / f"{trace}.json"), **extra}


def in_process(env: dict[str, str]) -> Ran:
    """The program's body through the frame, in this process (torch is imported once)."""
    out = io.StringIO()
    code = run(clockprobe.KIND, clockprobe.probe, environ=env, out=out)
    ran = finish(clockprobe.KIND, out.getvalue(), "", code)
    assert_contract(ran)
    return ran


def test_a_healthy_part_passes_at_its_rated_clock_through_the_real_program() -> None:
    ran = run_runner("clockprobe", env_for("healthy"))
    assert_contract(ran)
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    m = ran.parsed.metrics
    assert 99.0 <= float(m["sustainedClockPct"]) <= 100.0
    assert m["ratedBoostClockMHz"] == "1980"
    assert m["throttleClassification"] == "none" and m["pdWedgeSuspected"] == "false"
    assert int(m["samplesTaken"]) > 0 and int(m["loadLaunches"]) > 0
    assert float(m["sustainedFmaThroughputTflops"]) > 0
    assert m["deviceCount"] == "1" and "sustainedClockSpreadPct" in ran.parsed.unmeasurable
    assert [a.name for a in ran.parsed.artifacts] == ["per-device.json"]


def test_a_pstate_pinned_low_fails_as_a_suspected_wedge() -> None:
    ran = in_process(env_for("pstate_low"))
    assert ran.exit_code == 1
    m = ran.parsed.metrics
    assert float(m["sustainedClockPct"]) < 20
    assert m["pdWedgeSuspected"] == "true" and m["throttleClassification"] == "none"
    assert m["clockFloorBasis"] == "general"
    assert "CLOCKPROBE_FAIL: sustainedClockPct" in ran.marker
    assert "P8 in 100 % of samples" in ran.marker  # pinned low, every reason clear


def test_a_latched_thermal_slowdown_at_temperature_applies_the_thermal_floor() -> None:
    ran = in_process(env_for("thermal_latch", CLOCKPROBE_MIN_THERMAL_CLOCK_PCT="40"))
    m = ran.parsed.metrics
    assert ran.exit_code == 0, ran.stdout
    assert m["clockFloorBasis"] == "thermal" and m["clockFloorAppliedPct"] == "40"
    assert m["throttleClassification"] == "thermal"
    assert int(m["hwThermalSlowdownSamples"]) > 0 and int(m["throttleEvents"]) == 1


def test_below_the_thermal_temperature_the_general_floor_applies() -> None:
    env = env_for("thermal_latch", CLOCKPROBE_MIN_THERMAL_CLOCK_PCT="40")
    ran = in_process({**env, "CLOCKPROBE_THERMAL_TEMP_C": "95"})
    assert ran.exit_code == 1
    assert ran.parsed.metrics["clockFloorBasis"] == "general"
    assert "thermal" in ran.marker  # the classification is named in the message


def test_a_thermal_floor_stricter_than_the_general_one_is_lowered_to_it() -> None:
    env = env_for("healthy", CLOCKPROBE_MIN_THERMAL_CLOCK_PCT="90")
    ran = in_process({**env, "CLOCKPROBE_MIN_SUSTAINED_CLOCK_PCT": "60"})
    assert ran.parsed.metrics["thermalClockFloorPct"] == "60"
    assert "lowered" in ran.parsed.metrics["configWarnings"]


def test_a_power_capped_part_above_the_floor_passes_with_its_cap_counted() -> None:
    ran = in_process(env_for("power_cap"))
    m = ran.parsed.metrics
    assert ran.exit_code == 0
    assert 85 <= float(m["sustainedClockPct"]) <= 87
    assert m["throttleClassification"] == "powerCap" and m["throttleEvents"] == "1"
    assert m["throttleReasons"] == "swPowerCap"


def test_mig_enabled_skips_with_the_declared_marker() -> None:
    ran = in_process(env_for("mig_on"))
    assert ran.exit_code == 2 and ran.marker.startswith("CLOCKPROBE_SKIP: MIG")
    assert ran.parsed.verdict is RunnerVerdict.SKIP and not ran.parsed.undeclared_skip


def test_no_rated_boost_clock_skips() -> None:
    ran = in_process(env_for("no_rated_clock"))
    assert ran.exit_code == 2 and "rated boost clock" in ran.marker


def test_low_utilisation_is_an_error_that_prints_no_sustained_clock() -> None:
    ran = in_process(env_for("idle"))
    assert ran.exit_code == 3 and "utilisation" in ran.marker
    assert "sustainedClockPct" not in ran.parsed.metrics
    assert "smClockMHz" in ran.parsed.metrics  # what it has is still printed


def test_nvml_missing_while_a_device_is_visible_is_an_error() -> None:
    ran = in_process(dict(QUICK))  # no trace: the real NVML, which is not installed here
    assert ran.exit_code == 3 and "NVML is absent" in ran.marker


def test_nvml_that_fails_to_start_is_an_error() -> None:
    ran = in_process(env_for("init_error"))
    assert ran.exit_code == 3 and "version mismatch" in ran.marker


def test_a_malformed_floor_is_an_error_naming_the_variable() -> None:
    ran = in_process(env_for("healthy", CLOCKPROBE_MIN_SUSTAINED_CLOCK_PCT="70%"))
    assert ran.exit_code == 3 and "CLOCKPROBE_MIN_SUSTAINED_CLOCK_PCT" in ran.marker


def test_a_duration_under_the_floor_is_raised_with_a_warning() -> None:
    ran = in_process({**env_for("healthy"), "BURNIN_DURATION_SECONDS": "4"})
    assert ran.exit_code == 0
    assert ran.parsed.metrics["durationRequestedS"] == "4"
    assert "raised to the 10 s floor" in ran.parsed.metrics["configWarnings"]


def test_a_sample_interval_out_of_range_is_clamped_with_a_warning() -> None:
    ran = in_process(env_for("healthy", CLOCKPROBE_SAMPLE_INTERVAL_MS="1"))
    assert ran.exit_code == 0
    assert "clamped to 10 ms" in ran.parsed.metrics["configWarnings"]


def test_every_device_is_measured_and_the_worst_one_decides() -> None:
    env = env_for("two_devices", BURNIN_TEST_DEVICE_COUNT="2")
    ran = in_process({**env, "CLOCKPROBE_MIN_SUSTAINED_CLOCK_PCT": "80"})
    m = ran.parsed.metrics
    assert ran.exit_code == 1 and "device 1" in ran.marker
    assert m["deviceCount"] == "2" and m["worstDeviceIndex"] == "1"
    assert 75 <= float(m["sustainedClockPct"]) <= 76.5  # device 1's 1500 of 1980 MHz
    assert 23 <= float(m["sustainedClockSpreadPct"]) <= 25
    assert m["deviceConcurrency"] == "sequential"


def test_the_test_time_scale_without_the_test_device_is_refused() -> None:
    ran = in_process({"BURNIN_TEST_TIME_SCALE": "0.1"})
    assert ran.exit_code == 3 and "BURNIN_TEST_TIME_SCALE" in ran.marker


def test_on_this_host_without_a_gpu_or_test_mode_it_skips_never_passes() -> None:
    ran = run_runner("clockprobe", {})
    assert_contract(ran)
    assert ran.exit_code == 2, ran.stdout
    assert ran.marker.startswith("CLOCKPROBE_SKIP: no accelerator")
    assert ran.parsed.verdict is RunnerVerdict.SKIP


def test_an_error_on_one_device_leaves_no_sustained_clock_from_the_other() -> None:
    ran = in_process(env_for("two_devices", BURNIN_TEST_DEVICE_COUNT="3"))  # NVML sees 2
    assert ran.exit_code == 3 and "device 2: NVML has no device" in ran.marker
    assert "sustainedClockPct" not in ran.parsed.metrics
    assert ran.parsed.metrics["deviceCount"] == "3"


def test_device_and_compiler_errors_are_kernel_failures_and_bugs_are_not() -> None:
    compile_error = type("CompilationError", (Exception,), {"__module__": "triton.compiler"})
    assert clockprobe.kernel_failure(RuntimeError("CUDA error: an illegal memory access"))
    assert clockprobe.kernel_failure(compile_error("at 12:4: unsupported"))
    assert not clockprobe.kernel_failure(NameError("x"))  # a runner bug: a crash with a trace


def test_sigterm_while_devices_load_at_once_stops_them_and_ends_in_error() -> None:
    env = env_for("two_devices", BURNIN_TEST_DEVICE_COUNT="2", BURNIN_DEVICE_CONCURRENCY="all")
    env["BURNIN_DURATION_SECONDS"] = "3600"
    proc = subprocess.Popen(
        argv_of("clockprobe"), env=runner_env(env), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    first = proc.stdout.readline()  # driverVersion: NVML is open, the devices start
    assert first.startswith("driverVersion="), first
    proc.send_signal(signal.SIGTERM)
    rest, err = proc.communicate(timeout=60)  # devices that kept loading would hang here
    assert proc.returncode == 3, (proc.returncode, err[-2000:])
    ran = finish("clockprobe", first + rest, err, proc.returncode)
    assert_contract(ran)
    assert "terminated by signal SIGTERM" in ran.marker
