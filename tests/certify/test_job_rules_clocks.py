"""The Job controller's clocks (specs/certify.md §3.2 timeout, §7.6 stall, §7.7 restart) —
§9.2 scenario 40: job timeout from workloadStartTime and never while suspended, the stall
anchor clamp."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from glimmer.certify.job_rules import (
    STARTUP_STALL_MESSAGE,
    STEP_STALL_MESSAGE,
    Progress,
    restart_allowed,
    restart_grace,
    restart_message,
    stall,
    timed_out,
    timeout_anchor,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_the_timeout_runs_from_the_workload_start_not_the_group_start() -> None:
    kw: dict[str, Any] = {"workload_start": at(3000), "workload_created": True, "group_start": T0}
    assert not timed_out(at(3600 + 2999), HOUR, **kw)
    assert timed_out(at(3600 + 3001), HOUR, **kw)


def test_a_workload_that_exists_but_never_ran_never_times_out() -> None:
    # Suspended by a queue (Kueue): waiting for quota is no fault of the nodes.
    assert timeout_anchor(None, True, T0) is None
    assert not timed_out(
        at(10 * 3600), HOUR, workload_start=None, workload_created=True, group_start=T0
    )


def test_without_a_workload_the_clock_runs_from_the_group_start() -> None:
    kw: dict[str, Any] = {"workload_start": None, "workload_created": False, "group_start": T0}
    assert timeout_anchor(None, False, T0) == T0
    assert not timed_out(at(3600), HOUR, **kw)
    assert timed_out(at(3601), HOUR, **kw)


def test_a_zero_timeout_or_no_start_never_fires() -> None:
    assert not timed_out(
        at(1e6), timedelta(0), workload_start=T0, workload_created=True, group_start=T0
    )
    assert not timed_out(
        at(1e6), HOUR, workload_start=None, workload_created=False, group_start=None
    )


def test_stall_needs_a_multiplier_and_a_measurement() -> None:
    progress = Progress(start_time=T0)
    assert stall(at(1e6), progress, stall_multiplier=None, workload_start=None) is None
    assert stall(at(1e6), None, stall_multiplier=2.0, workload_start=None) is None


def test_the_startup_budget_counts_from_the_application_start() -> None:
    progress = Progress(start_time=T0, application_start_time=at(100))
    budget = 1200 + 120  # startupStallTimeoutSeconds + 2 x sampleInterval
    assert stall(at(100 + budget), progress, stall_multiplier=2, workload_start=None) is None
    got = stall(at(100 + budget + 1), progress, stall_multiplier=2, workload_start=None)
    assert got == STARTUP_STALL_MESSAGE


def test_the_startup_anchor_falls_back_to_the_measurement_start_and_else_skips() -> None:
    assert stall(at(1321), Progress(start_time=T0), stall_multiplier=2, workload_start=None)
    assert stall(at(1e6), Progress(), stall_multiplier=2, workload_start=None) is None


def test_the_startup_anchor_is_clamped_forward_to_the_workload_start() -> None:
    # The measurement started when the Job did; the pods waited 1000 s in the queue first.
    progress = Progress(start_time=T0)
    kw: dict[str, Any] = {"stall_multiplier": 2.0, "workload_start": at(1000)}
    assert stall(at(1000 + 1320), progress, **kw) is None
    assert stall(at(1000 + 1321), progress, **kw) == STARTUP_STALL_MESSAGE
    # An anchor already after the workload start is kept.
    late = Progress(start_time=T0, application_start_time=at(2000))
    assert stall(at(2000 + 1320), late, **kw) is None


def test_the_startup_budget_and_sample_interval_can_be_set() -> None:
    progress = Progress(start_time=T0)
    kw: dict[str, Any] = {
        "stall_multiplier": 2.0,
        "workload_start": None,
        "startup_timeout": timedelta(seconds=60),
        "sample_interval": timedelta(seconds=10),
    }
    assert stall(at(80), progress, **kw) is None
    assert stall(at(81), progress, **kw) == STARTUP_STALL_MESSAGE


def test_a_training_stall_is_a_multiple_of_the_mean_step_time() -> None:
    progress = Progress(
        start_time=T0, last_step_timestamp=at(500), avg_step_time_sec=2.0, log_interval=10
    )
    threshold = 3 * 2.0 * 10 + 120  # multiplier x avg x logInterval + 2 x sampleInterval
    kw: dict[str, Any] = {"stall_multiplier": 3.0, "workload_start": T0}
    assert stall(at(500 + threshold), progress, **kw) is None
    assert stall(at(500 + threshold + 1), progress, **kw) == STEP_STALL_MESSAGE
    # logInterval 0 counts as 1.
    every = Progress(start_time=T0, last_step_timestamp=at(500), avg_step_time_sec=2.0)
    assert stall(at(500 + 127), every, **kw) == STEP_STALL_MESSAGE


def test_a_zero_mean_step_time_is_still_startup() -> None:
    progress = Progress(start_time=T0, last_step_timestamp=at(10), avg_step_time_sec=0.0)
    assert (
        stall(at(1321), progress, stall_multiplier=2, workload_start=None) == STARTUP_STALL_MESSAGE
    )


def test_checkpoint_restart_needs_a_checkpoint_restarts_left_and_a_saved_step() -> None:
    kw: dict[str, Any] = {
        "checkpoint": True,
        "restart_count": 0,
        "max_restarts": 3,
        "last_checkpoint_step": 250,
    }
    assert restart_allowed(**kw)
    assert not restart_allowed(**{**kw, "checkpoint": False})
    assert not restart_allowed(**{**kw, "restart_count": 3})
    assert not restart_allowed(**{**kw, "max_restarts": None})  # default 0
    assert not restart_allowed(**{**kw, "last_checkpoint_step": 0})
    assert not restart_allowed(**{**kw, "last_checkpoint_step": None})


def test_the_restart_message_and_grace() -> None:
    assert restart_message(1, 3) == "Restarting workload from checkpoint (restart 1/3)"
    assert restart_grace(timedelta(seconds=60)) == timedelta(seconds=120)
    assert restart_grace(None) == timedelta(seconds=30)
