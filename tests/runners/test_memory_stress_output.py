"""memory-stress: stressapptest's own log (captured on this machine) read into §9.7's figures
and verdict order."""

from __future__ import annotations

from pathlib import Path

from glimmer.contract.vocab import RunnerVerdict
from glimmer.runners.memory_stress_output import judge, read_log

FIXTURES = Path(__file__).parent / "fixtures" / "memory-stress"


def _log(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_a_clean_run_passes_with_its_counters_and_copy_bandwidth() -> None:
    log = read_log(_log("pass.txt"))
    assert log.revision == "1.0.6_autoconf"
    assert log.incidents == 0
    assert log.miscompares == 0
    assert log.run_seconds == 5.0
    # Copy threads only: each copied byte is read once and written once.
    assert log.read_mbs() == log.write_mbs() == 25836.96
    verdict = judge(log, 0)
    assert verdict.verdict is RunnerVerdict.PASS
    assert verdict.sat_status == "pass"
    assert verdict.counters


def test_injected_miscompares_fail_as_hardware_incidents() -> None:
    log = read_log(_log("forced-errors.txt"))
    assert log.incidents == 2
    assert log.miscompares == 2
    assert len(log.hardware_errors) == 2
    verdict = judge(log, 1)
    assert verdict.verdict is RunnerVerdict.FAIL
    assert verdict.sat_status == "fail-hardware"
    assert "2 hardware incident" in verdict.reason


def test_a_run_stopped_by_a_signal_is_an_error_without_counters() -> None:
    log = read_log(_log("user-exit-early.txt"))
    assert log.exited_early
    verdict = judge(log, 0)  # stressapptest itself says PASS and exits 0
    assert verdict.verdict is RunnerVerdict.ERROR
    assert not verdict.counters


def test_a_procedural_failure_is_an_error_not_a_fail() -> None:
    log = read_log(_log("procedural-allocation.txt"))
    verdict = judge(log, 1)
    assert verdict.verdict is RunnerVerdict.ERROR
    assert verdict.sat_status == "fail-procedural"
    assert "memalign returned 0" in verdict.reason


def test_a_log_cut_before_its_summary_is_an_error() -> None:
    text = _log("pass.txt").split("Stats: Found")[0]
    verdict = judge(read_log(text), -9)
    assert verdict.verdict is RunnerVerdict.ERROR
    assert not verdict.counters
    assert read_log(text).read_mbs() is None


def test_corruption_logged_before_a_kill_still_fails() -> None:
    text = _log("forced-errors.txt").split("Log: Thread 1 found")[0]
    log = read_log(text)
    assert log.incidents is None  # the summary never came
    verdict = judge(log, -9, interrupted="terminated by signal SIGTERM before a verdict")
    assert verdict.verdict is RunnerVerdict.FAIL


def test_summary_errors_that_are_not_incidents_are_an_error() -> None:
    text = _log("pass.txt").replace(
        "0 hardware incidents, 0 errors", "0 hardware incidents, 3 errors"
    )
    verdict = judge(read_log(text), 0)
    assert verdict.verdict is RunnerVerdict.ERROR
    assert "3 error" in verdict.reason


def test_the_runners_own_interruption_overrides_a_clean_looking_log() -> None:
    verdict = judge(read_log(_log("pass.txt")), 0, interrupted="overran")
    assert verdict.verdict is RunnerVerdict.ERROR
    assert verdict.reason == "overran"
