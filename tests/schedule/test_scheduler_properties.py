"""The scheduler as properties: whatever the cadence, policy, deadline, reconcile times and run
outcomes, a tick is fired at most once and never before it is due, only cadence ticks fire, at
most one run starts per reconcile, the cursor and the missed counter never go back, the cursor
is written before each create, active runs are never deleted, and Forbid never overlaps."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedule_world import T0, World, world

from glimmer.api.cadence import parse_cadence
from glimmer.contract.vocab import Phase
from glimmer.schedule.actions import CreateRun, DeleteRun, WriteStatus
from glimmer.schedule.decide import decide
from glimmer.schedule.history import is_active, scheduled_at

CADENCES = ["*/20 * * * *", "0 * * * *", "30 2 * * *", "@every 45m", "0 */6 * * 1-5"]
ZONES = ["", "Europe/Berlin", "America/New_York"]
OUTCOMES = [Phase.PASSED, Phase.FAILED, Phase.ERROR, Phase.CANCELLED, None]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cadence=st.sampled_from(CADENCES),
    zone=st.sampled_from(ZONES),
    allow=st.booleans(),
    deadline=st.none() | st.integers(0, 7200),
    limits=st.tuples(st.integers(0, 3), st.integers(0, 3)),
    # Each step: minutes until the next reconcile, and what happens to the oldest active run.
    steps=st.lists(
        st.tuples(st.integers(0, 600), st.sampled_from(OUTCOMES)), min_size=1, max_size=25
    ),
)
def test_scheduler_invariants(
    cadence: str,
    zone: str,
    allow: bool,
    deadline: int | None,
    limits: tuple[int, int],
    steps: list[tuple[int, Phase | None]],
) -> None:
    spec: dict[str, object] = {
        "schedule": cadence,
        "timeZone": zone,
        "concurrencyPolicy": "Allow" if allow else "Forbid",
        "successfulRunsHistoryLimit": limits[0],
        "failedRunsHistoryLimit": limits[1],
    }
    if deadline is not None:
        spec["startingDeadlineSeconds"] = deadline
    w: World = world(**spec)
    ticks = parse_cadence(cadence, zone)
    now = T0
    fired: set[str] = set()
    cursor = None
    missed = 0
    for minutes, outcome in steps:
        now += timedelta(minutes=minutes)
        active_before = {r.name for r in w.runs.values() if is_active(r)}
        decision = decide(w.schedule, list(w.runs.values()), now)
        creates = [a for a in decision.actions if isinstance(a, CreateRun)]
        assert len(creates) <= 1
        for action in decision.actions:
            if isinstance(action, DeleteRun):
                assert action.name not in active_before
        if creates:
            run = creates[0].run
            index = decision.actions.index(creates[0])
            before = decision.actions[index - 1]
            assert isinstance(before, WriteStatus)
            tick = scheduled_at(run)
            assert before.status.last_schedule_time == tick
            assert tick <= now and run.name not in fired
            if ticks.every_seconds is not None:
                # Intervals chain from the creation time (no backlog here is long enough to resync).
                assert (tick - T0).total_seconds() % ticks.every_seconds == 0
            else:
                assert ticks.next(tick - timedelta(seconds=1)) == tick  # a real cron tick
            if deadline is not None:
                assert tick >= now - timedelta(seconds=deadline)
            if not allow:
                assert not active_before
            fired.add(run.name)
        w.step(now)
        status = w.status
        if cursor is not None and status.last_schedule_time is not None:
            assert status.last_schedule_time >= cursor
        cursor = status.last_schedule_time or cursor
        assert status.missed_schedules >= missed
        missed = status.missed_schedules
        active = sorted((r for r in w.runs.values() if is_active(r)), key=scheduled_at)
        if outcome is not None and active:
            w.finish(active[0].name, outcome, now)
