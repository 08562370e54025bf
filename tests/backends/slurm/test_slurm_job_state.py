"""What Slurm says about a job, read as an execution's phase and end (backends/slurm/job_state.py):
no end is a success unless the runner itself recorded exit 0 and the job completed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from glimmer.backends.slurm.job_state import (
    DEADLINE_REASON,
    NEVER_SEEN,
    VANISHED,
    ending,
    parse_rows,
    slurm_exit_code,
    slurm_time,
    vanished,
)


def test_squeue_lines_are_read_field_by_field() -> None:
    text = (
        "12|x-a1|RUNNING|uid-1|2026-12-01T21:42:19|2026-12-01T22:42:19|/s/x-a1.sh|None\n"
        "13|x-a2|PENDING|uid-1|N/A|N/A|/s/x-a2.sh|ReqNodeNotAvail, Reserved for maintenance|x\n"
        "garbage\n"
    )
    running, pending = parse_rows(text)
    assert (running.job_id, running.name, running.state, running.comment) == (
        "12",
        "x-a1",
        "RUNNING",
        "uid-1",
    )
    assert running.started and not running.ended
    assert running.script == "/s/x-a1.sh"
    assert pending.start is None and pending.end is None
    assert pending.reason == "ReqNodeNotAvail, Reserved for maintenance|x"  # kept whole
    assert not pending.started


def test_slurm_times_are_local_times_read_as_utc() -> None:
    moment = slurm_time("2026-12-01T21:42:19")
    assert moment == datetime(2026, 12, 1, 21, 42, 19).astimezone(UTC)
    for nothing in ("N/A", "Unknown", "None", ""):
        assert slurm_time(nothing) is None


def test_slurms_exit_code_is_the_code_or_128_plus_the_signal() -> None:
    assert slurm_exit_code("3:0") == 3
    assert slurm_exit_code("0:15") == 143
    assert slurm_exit_code("0:9") == 137
    assert slurm_exit_code("") is None


@pytest.mark.parametrize("code", [0, 1, 2, 3])
def test_the_runners_own_exit_code_is_carried_exactly(code: int) -> None:
    end = ending("COMPLETED" if code == 0 else "FAILED", code, slurm_exit=code)
    assert end.exit_code == code
    assert end.succeeded is (code == 0)
    assert end.reason == ""


def test_a_completed_job_whose_runner_recorded_nothing_is_no_success() -> None:
    end = ending("COMPLETED", None, slurm_exit=0)
    assert not end.succeeded
    assert end.exit_code == NEVER_SEEN
    assert "without recording the runner's exit code" in end.container_message


@pytest.mark.parametrize(
    ("state", "reason"),
    [
        ("CANCELLED", "Cancelled"),
        ("TIMEOUT", DEADLINE_REASON),
        ("DEADLINE", DEADLINE_REASON),
        ("NODE_FAIL", "NodeFail"),
        ("PREEMPTED", "Preempted"),
        ("BOOT_FAIL", "BootFail"),
    ],
)
def test_a_job_slurm_ended_is_failed_with_a_pod_level_reason(state: str, reason: str) -> None:
    end = ending(state, None, slurm_exit=143)
    assert not end.succeeded
    assert end.reason == reason and end.message
    assert end.exit_code == 143
    # Even a runner that got to record 0 before the end is not a success then.
    assert not ending(state, 0).succeeded


def test_out_of_memory_is_the_containers_account() -> None:
    end = ending("OUT_OF_MEMORY", None, slurm_exit=137)
    assert not end.succeeded and end.container_reason == "OOMKilled" and end.reason == ""


def test_the_watchdogs_deadline_kill_is_deadline_exceeded_whatever_the_exit() -> None:
    end = ending("COMPLETED", 0, deadline_kill=True, deadline_seconds=125)
    assert not end.succeeded
    assert end.reason == DEADLINE_REASON
    assert "125s" in end.message


def test_a_job_slurm_forgot_without_an_exit_is_vanished_never_success() -> None:
    end = vanished(None)
    assert not end.succeeded and end.reason == VANISHED and end.exit_code == NEVER_SEEN
    assert vanished(0).succeeded and vanished(3).exit_code == 3  # the script did record it
