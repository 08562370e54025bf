"""Scenario 57 of specs/burnin.md §11.2 and the other rules of §7.1, on the pure scheduler:
fire once at the due tick in the configured zone, no burst after an outage, the starting
deadline, the >1000-tick resync, Forbid and Allow, separate history limits that never delete
active runs, suspend without replay, and the cursor written before the run is created."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from schedule_world import T0, World, world

from glimmer.api.k8s import Condition
from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.api.schedule import BurnInScheduleStatus
from glimmer.contract.vocab import Phase
from glimmer.schedule.actions import CreateRun, DeleteRun, WriteStatus
from glimmer.schedule.decide import decide
from glimmer.schedule.keys import (
    DEFAULT_FAILED_HISTORY,
    DEFAULT_SUCCESSFUL_HISTORY,
    INT32_MAX,
    SCHEDULE_LABEL,
    SCHEDULED_AT_ANNOTATION,
)
from glimmer.schedule.stamp import run_name, stamp_run

DAY = timedelta(days=1)
TICK1 = datetime(2026, 10, 1, 3, tzinfo=UTC)  # first 03:00 UTC after T0


def condition(w: World, kind: str = "ScheduleValid") -> Condition:
    found = [c for c in w.status.conditions or () if c.type == kind]
    assert len(found) == 1
    return found[0]


# -- firing -----------------------------------------------------------------------------------


def test_nothing_fires_before_the_first_tick_and_it_wakes_for_it() -> None:
    w = world()
    d = w.step(T0 + timedelta(hours=1))
    assert d.fired is None and not w.runs
    assert d.next_tick == TICK1
    assert d.requeue_after == pytest.approx(2 * 3600)
    assert condition(w).status == "True" and condition(w).reason == "Parsed"


def test_fires_once_at_the_due_tick_with_a_stamped_run() -> None:
    w = world(runTemplate={"deadlineSeconds": 7200, "retryOnErrorLimit": 1, "baseline": True})
    d = w.step(TICK1 + timedelta(seconds=5))
    assert d.fired == TICK1
    (run,) = w.runs.values()
    assert run.name == f"nightly-{int(TICK1.timestamp())}"
    assert run.metadata.namespace == "lab"
    assert run.metadata.labels == {SCHEDULE_LABEL: "nightly"}
    assert run.metadata.annotations == {SCHEDULED_AT_ANNOTATION: "2026-10-01T03:00:00Z"}
    (owner,) = run.metadata.owner_references or []
    assert (owner.kind, owner.name, owner.uid, owner.controller) == (
        "BurnInSchedule",
        "nightly",
        "sched-uid",
        True,
    )
    assert run.spec.profile_ref == "acceptance"
    assert run.spec.target.node_names == ["gpu-01", "gpu-02"]
    assert run.spec.deadline_seconds == 7200
    assert run.spec.retry_on_error_limit == 1
    assert run.spec.max_concurrent_nodes == 1
    assert run.spec.baseline is True
    assert w.status.last_schedule_time == TICK1
    assert w.status.last_run_name == run.name
    assert w.status.last_run_phase is Phase.PENDING
    assert [r.name for r in w.status.active or ()] == [run.name]
    # A second reconcile at the same instant creates nothing more.
    again = w.step(TICK1 + timedelta(seconds=6))
    assert again.fired is None and len(w.runs) == 1
    assert again.next_tick == TICK1 + DAY


def test_the_target_is_a_copy_not_shared_with_the_schedule() -> None:
    w = world()
    run = stamp_run(w.schedule, TICK1)
    assert run.spec.target == w.schedule.spec.target
    assert run.spec.target is not w.schedule.spec.target


def test_time_zone_decides_when_the_tick_is_and_empty_means_utc() -> None:
    berlin = world(timeZone="Europe/Berlin")
    assert berlin.step(T0).next_tick == datetime(2026, 10, 1, 1, tzinfo=UTC)  # 03:00 CEST
    utc = world(timeZone="")
    assert utc.step(T0).next_tick == TICK1
    new_york = world(timeZone="America/New_York")
    assert new_york.step(T0).next_tick == datetime(2026, 10, 1, 7, tzinfo=UTC)  # 03:00 EDT


def test_the_cursor_is_written_before_the_run_is_created() -> None:
    w = world()
    d = decide(w.schedule, [], TICK1)
    kinds = [type(a) for a in d.actions]
    assert kinds == [WriteStatus, CreateRun, WriteStatus]
    first = d.actions[0]
    assert isinstance(first, WriteStatus) and first.status.last_schedule_time == TICK1
    assert first.status.last_run_name is None  # the run does not exist yet
    w.step(TICK1)
    assert w.log[:2] == [f"status cursor={TICK1}", f"create {run_name('nightly', TICK1)}"]


def test_a_failed_create_after_the_cursor_write_loses_the_tick_once_never_twice() -> None:
    w = world()
    w.fail_create = True
    with pytest.raises(RuntimeError):
        w.step(TICK1)
    assert w.status.last_schedule_time == TICK1 and not w.runs
    w.fail_create = False
    d = w.step(TICK1 + timedelta(minutes=1))
    assert d.fired is None and not w.runs
    assert w.step(TICK1 + DAY).fired == TICK1 + DAY


def test_no_burst_after_an_outage_only_the_latest_tick_fires() -> None:
    w = world()
    w.step(TICK1)
    w.finish(run_name("nightly", TICK1), Phase.PASSED, TICK1 + timedelta(hours=1))
    # Down for five days: ticks on days 2..6 passed; only day 6 fires, four are missed.
    now = TICK1 + 5 * DAY + timedelta(minutes=10)
    d = w.step(now)
    assert d.fired == TICK1 + 5 * DAY
    assert d.missed == 4
    assert len(w.runs) == 2
    assert w.status.missed_schedules == 4


def test_ticks_older_than_the_starting_deadline_are_missed_not_fired() -> None:
    w = world(startingDeadlineSeconds=3600)
    d = w.step(TICK1 + timedelta(hours=2))
    assert d.fired is None and not w.runs
    assert d.missed == 1 and w.status.missed_schedules == 1
    assert w.status.last_schedule_time == TICK1  # counted once, not again next time
    d = w.step(TICK1 + timedelta(hours=3))
    assert d.missed == 0 and w.status.missed_schedules == 1
    # Within the deadline it fires.
    assert w.step(TICK1 + DAY + timedelta(minutes=59)).fired == TICK1 + DAY


def test_a_tick_exactly_at_the_deadline_still_fires() -> None:
    w = world(startingDeadlineSeconds=60)
    assert w.step(TICK1 + timedelta(seconds=60)).fired == TICK1


def test_a_backlog_of_more_than_1000_ticks_resyncs_to_now_and_fires_nothing() -> None:
    w = world(schedule="* * * * *")
    now = T0 + timedelta(minutes=1001, seconds=30)
    d = w.step(now)
    assert d.resynced and d.fired is None and not w.runs
    assert w.status.last_schedule_time == now
    assert w.status.missed_schedules > 1000
    # From the resynced cursor it fires normally again.
    nxt = w.step(now + timedelta(seconds=40))
    assert nxt.fired == T0 + timedelta(minutes=1002)


def test_exactly_1000_ticks_are_walked_and_the_latest_fires() -> None:
    w = world(schedule="* * * * *")
    d = w.step(T0 + timedelta(minutes=1000))
    assert not d.resynced and d.fired == T0 + timedelta(minutes=1000) and d.missed == 999


def test_missed_schedules_saturates_at_int32_max() -> None:
    w = world()
    w.schedule = w.schedule.model_copy(
        update={"status": BurnInScheduleStatus(missed_schedules=INT32_MAX - 1)}
    )
    w.step(TICK1 + 3 * DAY)
    assert w.status.missed_schedules == INT32_MAX


# -- concurrency --------------------------------------------------------------------------------


def test_forbid_skips_and_counts_missed_while_a_run_is_active() -> None:
    w = world()
    w.step(TICK1)
    d = w.step(TICK1 + DAY)
    assert d.skipped == TICK1 + DAY and d.fired is None
    assert len(w.runs) == 1
    assert w.status.missed_schedules == 1
    assert w.status.last_schedule_time == TICK1 + DAY
    # Once the run has finished the next tick fires again.
    w.finish(run_name("nightly", TICK1), Phase.FAILED, TICK1 + DAY + timedelta(hours=1))
    assert w.step(TICK1 + 2 * DAY).fired == TICK1 + 2 * DAY


@pytest.mark.parametrize("policy", ["Forbid", None])
def test_forbid_is_the_default(policy: str | None) -> None:
    spec: dict[str, Any] = {} if policy is None else {"concurrencyPolicy": policy}
    w = world(**spec)
    w.step(TICK1)
    assert w.step(TICK1 + DAY).skipped == TICK1 + DAY


def test_a_run_with_no_phase_yet_counts_as_active() -> None:
    w = world()
    w.step(TICK1)
    (run,) = w.runs.values()
    assert run.status is None
    assert w.step(TICK1 + DAY).skipped is not None


def test_allow_creates_beside_an_active_run() -> None:
    w = world(concurrencyPolicy="Allow")
    w.step(TICK1)
    d = w.step(TICK1 + DAY)
    assert d.fired == TICK1 + DAY
    assert len(w.runs) == 2
    assert [r.name for r in w.status.active or ()] == [
        run_name("nightly", TICK1),
        run_name("nightly", TICK1 + DAY),
    ]


# -- history ------------------------------------------------------------------------------------


def _finished_history(w: World, phases: list[Phase]) -> None:
    for i, phase in enumerate(phases):
        tick = TICK1 + i * DAY
        d = w.step(tick)
        assert d.fired == tick
        w.finish(run_name("nightly", tick), phase, tick + timedelta(hours=1))


def test_history_limits_3_and_10_apply_separately_oldest_first() -> None:
    w = world(concurrencyPolicy="Allow")
    phases = [Phase.PASSED] * 5 + [Phase.FAILED] * 6 + [Phase.ERROR] * 3 + [Phase.CANCELLED] * 3
    _finished_history(w, phases)
    w.step(TICK1 + len(phases) * DAY)  # this reconcile prunes (and fires the next tick)
    left = {r.name: r.status.phase if r.status else None for r in w.runs.values()}
    passed = sorted(n for n, p in left.items() if p is Phase.PASSED)
    failed = sorted(n for n, p in left.items() if p in (Phase.FAILED, Phase.ERROR, Phase.CANCELLED))
    assert passed == [run_name("nightly", TICK1 + i * DAY) for i in (2, 3, 4)]
    assert failed == [run_name("nightly", TICK1 + i * DAY) for i in range(7, 17)]
    deletes = [line for line in w.log if line.startswith("delete")]
    assert deletes[:2] == [
        f"delete {run_name('nightly', TICK1)}",
        f"delete {run_name('nightly', TICK1 + DAY)}",
    ]


def test_history_pruning_never_deletes_active_runs() -> None:
    w = world(concurrencyPolicy="Allow", successfulRunsHistoryLimit=0, failedRunsHistoryLimit=0)
    for i in range(4):
        w.step(TICK1 + i * DAY)
    assert len(w.runs) == 4  # all still active
    w.finish(run_name("nightly", TICK1), Phase.PASSED, TICK1 + timedelta(hours=1))
    w.step(TICK1 + 3 * DAY + timedelta(hours=1))
    assert run_name("nightly", TICK1) not in w.runs and len(w.runs) == 3


def test_runs_the_schedule_does_not_own_are_ignored() -> None:
    w = world(successfulRunsHistoryLimit=0)
    foreign = stamp_run(w.schedule, TICK1)
    # Same label, but a different controller: not ours to count, block on or delete.
    meta = foreign.metadata.model_copy(update={"owner_references": None, "name": "hand-made"})
    w.runs["hand-made"] = foreign.model_copy(
        update={"metadata": meta, "status": BurnInRunStatus(phase=Phase.RUNNING)}
    )
    d = w.step(TICK1)
    assert d.fired == TICK1 and "hand-made" in w.runs
    assert [r.name for r in w.status.active or ()] == [run_name("nightly", TICK1)]


def test_last_successful_time_never_regresses() -> None:
    w = world(concurrencyPolicy="Allow", successfulRunsHistoryLimit=1)
    _finished_history(w, [Phase.PASSED, Phase.PASSED])
    w.step(TICK1 + 2 * DAY)
    best = TICK1 + DAY + timedelta(hours=1)
    assert w.status.last_successful_time == best
    # Pruned away and replaced by an older-finishing pass: the time stays.
    for run in list(w.runs.values()):
        if run.status and run.status.phase is Phase.PASSED:
            del w.runs[run.name]
    early = stamp_run(w.schedule, TICK1 - DAY)
    w.runs[early.name] = early.model_copy(
        update={"status": BurnInRunStatus(phase=Phase.PASSED, finished_at=TICK1 - DAY)}
    )
    w.step(TICK1 + 2 * DAY + timedelta(minutes=5))
    assert w.status.last_successful_time == best


def test_last_run_reflects_the_newest_run_and_its_phase() -> None:
    w = world(concurrencyPolicy="Allow")
    _finished_history(w, [Phase.FAILED])
    w.step(TICK1 + timedelta(hours=2))
    assert w.status.last_run_name == run_name("nightly", TICK1)
    assert w.status.last_run_phase is Phase.FAILED


# -- suspend and validity -----------------------------------------------------------------------


def test_suspend_stops_creation_and_resuming_does_not_replay() -> None:
    w = world(suspend=True)
    for i in range(3):
        d = w.step(TICK1 + i * DAY)
        assert d.fired is None and d.requeue_after is None
    assert not w.runs and w.status.last_schedule_time is None
    spec = w.schedule.spec.model_copy(update={"suspend": False})
    w.schedule = w.schedule.model_copy(update={"spec": spec})
    d = w.step(TICK1 + 2 * DAY + timedelta(minutes=1))
    assert d.fired == TICK1 + 2 * DAY  # one run, for the latest tick only
    assert len(w.runs) == 1 and d.missed == 2


def test_suspend_still_prunes_history() -> None:
    w = world(successfulRunsHistoryLimit=0)
    _finished_history(w, [Phase.PASSED])
    spec = w.schedule.spec.model_copy(update={"suspend": True})
    w.schedule = w.schedule.model_copy(update={"spec": spec})
    w.step(TICK1 + timedelta(hours=5))
    assert not w.runs


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"schedule": "0 3 * *"}, "5 fields"),
        ({"schedule": "61 3 * * *"}, "outside 0-59"),
        ({"timeZone": "Nowhere/Else"}, "unknown time zone"),
    ],
)
def test_an_invalid_schedule_sets_the_condition_and_creates_nothing(
    spec: dict[str, Any], words: str
) -> None:
    w = world(**spec)
    d = w.step(TICK1 + DAY)
    assert not w.runs and d.requeue_after is None
    c = condition(w)
    assert (c.status, c.reason) == ("False", "InvalidSchedule") and words in c.message
    assert [type(a) for a in d.actions] == [WriteStatus]


def test_a_tz_prefix_is_invalid_even_if_it_got_past_the_schema() -> None:
    w = world()
    spec = w.schedule.spec.model_copy(update={"schedule": "CRON_TZ=UTC 0 3 * * *"})
    w.schedule = w.schedule.model_copy(update={"spec": spec})
    w.step(TICK1)
    assert condition(w).reason == "InvalidSchedule" and not w.runs


def test_status_is_written_only_when_it_changed_and_the_condition_keeps_its_time() -> None:
    w = world()
    w.step(T0 + timedelta(minutes=1))
    since = condition(w).last_transition_time
    d = w.step(T0 + timedelta(minutes=2))
    assert d.actions == ()
    assert condition(w).last_transition_time == since


def test_the_uid_of_a_created_run_is_picked_up_on_the_next_reconcile() -> None:
    w = world()
    w.step(TICK1)
    assert (w.status.active or [])[0].uid is None
    d = w.step(TICK1 + timedelta(seconds=1))
    assert [type(a) for a in d.actions] == [WriteStatus]
    assert (w.status.active or [])[0].uid == f"uid-{run_name('nightly', TICK1)}"


def test_run_names_are_valid_and_bounded() -> None:
    long = "a" * 199 + ".b" + "c" * 50
    name = run_name(long, TICK1)
    assert len(name) <= 253 and not name.startswith("-")
    assert ".-" not in name
    BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": name},
            "spec": {"profileRef": "p", "target": {}},
        }
    )


def test_decide_refuses_a_naive_now() -> None:
    w = world()
    with pytest.raises(ValueError, match="aware"):
        decide(w.schedule, [], datetime(2026, 10, 1))


def test_deletes_come_first_and_name_the_namespace() -> None:
    w = world(concurrencyPolicy="Allow", failedRunsHistoryLimit=0)
    _finished_history(w, [Phase.FAILED])
    d = decide(w.schedule, list(w.runs.values()), TICK1 + DAY)
    assert isinstance(d.actions[0], DeleteRun)
    assert d.actions[0] == DeleteRun("lab", run_name("nightly", TICK1))


def test_daylight_saving_days_in_berlin_skip_the_missing_tick_and_fire_the_repeated_once() -> None:
    w = world(schedule="30 2 * * *", timeZone="Europe/Berlin", concurrencyPolicy="Allow")
    spring = [datetime(2026, 3, d, 12, tzinfo=UTC) for d in (28, 29, 30)]
    w.schedule = w.schedule.model_copy(
        update={"status": BurnInScheduleStatus(last_schedule_time=spring[0] - DAY)}
    )
    fired = [w.step(t).fired for t in spring]
    # 02:30 does not exist on 29 March: no run, and nothing counted missed for it.
    assert fired == [
        datetime(2026, 3, 28, 1, 30, tzinfo=UTC),
        None,
        datetime(2026, 3, 30, 0, 30, tzinfo=UTC),
    ]
    assert w.status.missed_schedules == 0
    # 25 October: 02:30 happens twice; a reconcile after each fires only the first.
    first = w.step(datetime(2026, 10, 25, 0, 31, tzinfo=UTC))
    second = w.step(datetime(2026, 10, 25, 1, 31, tzinfo=UTC))
    assert first.fired == datetime(2026, 10, 25, 0, 30, tzinfo=UTC) and second.fired is None


def test_a_cursor_written_without_a_zone_reads_as_utc() -> None:
    w = world()
    naive = BurnInScheduleStatus.model_validate({"lastScheduleTime": "2026-10-01T03:00:00"})
    w.schedule = w.schedule.model_copy(update={"status": naive})
    assert w.step(TICK1 + timedelta(hours=1)).fired is None
    assert w.step(TICK1 + DAY).fired == TICK1 + DAY


def test_a_last_successful_time_without_a_zone_still_compares() -> None:
    w = world(concurrencyPolicy="Allow")
    naive = BurnInScheduleStatus.model_validate({"lastSuccessfulTime": "2026-09-01T00:00:00"})
    w.schedule = w.schedule.model_copy(update={"status": naive})
    _finished_history(w, [Phase.PASSED])
    w.step(TICK1 + timedelta(hours=2))
    assert w.status.last_successful_time == TICK1 + timedelta(hours=1)


def test_history_defaults_are_those_of_appendix_a() -> None:
    spec = world().schedule.spec
    assert spec.successful_runs_history_limit == DEFAULT_SUCCESSFUL_HISTORY == 3
    assert spec.failed_runs_history_limit == DEFAULT_FAILED_HISTORY == 10
    assert spec.concurrency_policy.value == "Forbid"
