"""The cron parser and its next fire time: examples, refusals, and properties checked against a
brute-force oracle that walks every minute, in UTC and in zones with daylight saving time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glimmer.api.cadence import Cadence, ScheduleError, parse_cadence
from glimmer.api.cron import CronError, parse_cron
from glimmer.api.load import load_text
from glimmer.errors import InputErrors

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def at(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


def fires(text: str, after: datetime, n: int, zone: str | None = None) -> list[datetime]:
    cadence = parse_cadence(text, zone)
    out = []
    for _ in range(n):
        nxt = cadence.next(after)
        assert nxt is not None
        out.append(nxt)
        after = nxt
    return out


@pytest.mark.parametrize(
    ("text", "after", "expected"),
    [
        ("0 3 * * 0", at(2026, 10, 1), at(2026, 10, 4, 3)),  # Sunday
        ("0 3 * * 7", at(2026, 10, 1), at(2026, 10, 4, 3)),  # 7 is Sunday too
        ("0 3 * * SUN", at(2026, 10, 1), at(2026, 10, 4, 3)),
        ("*/15 * * * *", at(2026, 10, 1, 0, 7), at(2026, 10, 1, 0, 15)),
        ("5-20/5 1 * * *", at(2026, 10, 1, 1, 5), at(2026, 10, 1, 1, 10)),
        ("10/20 * * * *", at(2026, 10, 1, 0, 31), at(2026, 10, 1, 0, 50)),
        ("0 0 1 jan,Jul *", at(2026, 2, 1), at(2026, 7, 1)),
        ("0 12 * * mon-fri", at(2026, 10, 3), at(2026, 10, 5, 12)),  # Sat -> Mon
        ("0 0 29 2 *", at(2026, 3, 1), at(2028, 2, 29)),
        ("0 0 31 * *", at(2026, 4, 1), at(2026, 5, 31)),
        ("@hourly", at(2026, 10, 1, 0, 0, 1), at(2026, 10, 1, 1)),
        ("@daily", at(2026, 10, 1, 5), at(2026, 10, 2)),
        ("@weekly", at(2026, 10, 1), at(2026, 10, 4)),
        ("@monthly", at(2026, 10, 1), at(2026, 11, 1)),
        ("@yearly", at(2026, 10, 1), at(2027, 1, 1)),
        ("@every 168h", at(2026, 10, 1, 0, 0, 0), at(2026, 10, 8)),
        ("@every 1h30m", at(2026, 10, 1, 0, 0, 5), at(2026, 10, 1, 1, 30, 5)),
    ],
)
def test_next_fire_examples(text: str, after: datetime, expected: datetime) -> None:
    assert parse_cadence(text).next(after) == expected


def test_both_day_fields_restricted_fire_on_either() -> None:
    # The 13th OR a Friday, as in every cron; with one field "*" the other alone decides.
    days = [t.day for t in fires("0 0 13 * FRI", at(2026, 11, 1), 4)]
    assert days == [6, 13, 20, 27]
    assert [t.day for t in fires("0 0 13 * *", at(2026, 11, 1), 2)] == [13, 13]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("TZ=Europe/Berlin 0 3 * * *", "spec.timeZone"),
        ("CRON_TZ=UTC 0 3 * * *", "spec.timeZone"),
        ("0 3 * *", "5 fields"),
        ("0 3 * * * *", "5 fields"),
        ("60 * * * *", "outside 0-59"),
        ("* 24 * * *", "outside 0-23"),
        ("* * 0 * *", "outside 1-31"),
        ("* * * 13 *", "outside 1-12"),
        ("* * * * 8", "outside 0-7"),
        ("*/0 * * * *", "step"),
        ("5-1 * * * *", "backwards"),
        ("1,,2 * * * *", "empty list item"),
        ("x * * * *", "not a number"),
        ("? * * * *", "not a number"),  # "?" only in the day fields
        ("0 0 30 2 *", "never fires"),
        ("@reboot", "unknown descriptor"),
        ("@daily extra", "unknown descriptor"),
        ("@every", "empty duration"),
        ("@every 10", "not a Go duration"),
        ("@every -1h", "negative"),
        ("@every 1.5s", "whole number of seconds"),
    ],
)
def test_invalid_schedules_are_refused_with_a_reason(text: str, words: str) -> None:
    with pytest.raises(ScheduleError, match=words):
        parse_cadence(text)


def test_unknown_zone_is_refused_and_empty_zone_is_utc() -> None:
    with pytest.raises(ScheduleError, match="unknown time zone"):
        parse_cadence("0 3 * * *", "Mars/Olympus")
    assert parse_cadence("0 3 * * *", "").zone is UTC
    assert parse_cadence("0 3 * * *", None).zone is UTC


def test_question_mark_is_a_wildcard_in_the_day_fields() -> None:
    assert parse_cron("0 0 ? * ?") == parse_cron("0 0 * * *")
    with pytest.raises(CronError):
        parse_cron("0 ? * * *")


def test_timezone_decides_the_wall_clock() -> None:
    # 03:00 in Berlin is 01:00 UTC in summer and 02:00 UTC in winter.
    assert fires("0 3 * * *", at(2026, 7, 1), 1, "Europe/Berlin") == [at(2026, 7, 1, 1)]
    assert fires("0 3 * * *", at(2026, 12, 1), 1, "Europe/Berlin") == [at(2026, 12, 1, 2)]


def test_spring_forward_skips_a_local_time_that_does_not_exist() -> None:
    # 2026-03-29: Berlin jumps 02:00 -> 03:00, so 02:30 does not happen that day.
    got = fires("30 2 * * *", at(2026, 3, 28, 12), 2, "Europe/Berlin")
    assert [t.astimezone(BERLIN).day for t in got] == [30, 31]
    # 2026-03-08: New York jumps 02:00 -> 03:00.
    got = fires("30 2 * * *", at(2026, 3, 7, 12), 1, "America/New_York")
    assert got[0].astimezone(NEW_YORK).day == 9


def test_fall_back_fires_an_ambiguous_local_time_once() -> None:
    # 2026-10-25: Berlin's 02:00-02:59 happens twice; 02:30 fires at the first (CEST) only.
    got = fires("30 2 * * *", at(2026, 10, 24, 12), 2, "Europe/Berlin")
    assert got == [at(2026, 10, 25, 0, 30), at(2026, 10, 26, 1, 30)]
    # Hourly: the repeated 02:00 is not fired a second time.
    hourly = fires("0 * * * *", at(2026, 10, 24, 23, 30), 3, "Europe/Berlin")
    assert hourly == [at(2026, 10, 25, 0), at(2026, 10, 25, 2), at(2026, 10, 25, 3)]
    # 2026-11-01: New York repeats 01:00-01:59.
    got = fires("30 1 * * *", at(2026, 10, 31, 12), 2, "America/New_York")
    assert got == [at(2026, 11, 1, 5, 30), at(2026, 11, 2, 6, 30)]


def test_next_from_inside_the_repeated_hour_waits_for_the_next_day() -> None:
    # 01:10 UTC is 02:10 CET, the second pass through 02:xx: 02:30 has already fired (CEST).
    assert fires("30 2 * * *", at(2026, 10, 25, 1, 10), 1, "Europe/Berlin") == [
        at(2026, 10, 26, 1, 30)
    ]


def test_next_needs_an_aware_time() -> None:
    with pytest.raises(ValueError, match="aware"):
        parse_cadence("* * * * *").next(datetime(2026, 1, 1))


# -- properties ---------------------------------------------------------------------------------

ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata"]


def _field(low: int, high: int, names: tuple[str, ...] = ()) -> st.SearchStrategy[str]:
    value = st.integers(low, high).map(str)
    if names:
        value = value | st.sampled_from(names)
    span = st.tuples(st.integers(low, high), st.integers(low, high)).map(
        lambda p: f"{min(p)}-{max(p)}"
    )
    step = st.tuples(st.sampled_from(["*", f"{low}-{high}"]), st.integers(1, 7)).map(
        lambda p: f"{p[0]}/{p[1]}"
    )
    item = value | span | step
    return st.just("*") | st.lists(item, min_size=1, max_size=3).map(",".join)


# Hours and days biased to the DST-changeover region so transitions are exercised often.
EXPRESSIONS = st.tuples(
    _field(0, 59),
    _field(0, 23) | st.sampled_from(["1,2,3", "2", "0-3", "*/2"]),
    _field(1, 31) | st.just("*"),
    _field(1, 12, ("JAN", "MAR", "OCT", "NOV")) | st.just("*"),
    _field(0, 7, ("SUN", "SAT")) | st.just("*"),
).map(" ".join)
AFTER = st.datetimes(
    min_value=datetime(2024, 1, 1), max_value=datetime(2030, 12, 31), timezones=st.just(UTC)
)


def _valid(text: str) -> Cadence | None:
    try:
        return parse_cadence(text)
    except ScheduleError:
        return None


def _fires_at(cadence: Cadence, zone: ZoneInfo, instant: datetime) -> bool:
    """The oracle: ``instant`` fires iff its wall time matches and it is the first instant
    showing that wall time (a repeated hour fires once)."""
    assert cadence.cron is not None
    local = instant.astimezone(zone)
    wall = local.replace(tzinfo=None)
    if not cadence.cron.matches(wall):
        return False
    first = wall.replace(tzinfo=zone, fold=0)
    return first.astimezone(UTC) == instant.astimezone(UTC)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=EXPRESSIONS, zone_name=st.sampled_from(ZONES), after=AFTER)
def test_next_fire_is_after_matches_and_nothing_fires_in_between(
    text: str, zone_name: str, after: datetime
) -> None:
    cadence = _valid(text)
    if cadence is None:
        return
    zone = ZoneInfo(zone_name)
    cadence = Cadence(cadence.text, zone, cron=cadence.cron)
    nxt = cadence.next(after)
    assert nxt is not None
    assert nxt > after
    assert _fires_at(cadence, zone, nxt)
    # Minimality, by brute force over the minutes in between (bounded to keep it quick).
    probe = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    for _ in range(min(int((nxt - after).total_seconds() // 60), 3000)):
        if probe >= nxt:
            break
        assert not _fires_at(cadence, zone, probe), (text, zone_name, after, probe, nxt)
        probe += timedelta(minutes=1)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=EXPRESSIONS,
    zone_name=st.sampled_from(ZONES),
    a=AFTER,
    gap=st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=40)),
)
def test_next_fire_is_monotone(text: str, zone_name: str, a: datetime, gap: timedelta) -> None:
    cadence = _valid(text)
    if cadence is None:
        return
    cadence = Cadence(cadence.text, ZoneInfo(zone_name), cron=cadence.cron)
    first, second = cadence.next(a), cadence.next(a + gap)
    assert first is not None and second is not None
    assert first <= second


@settings(max_examples=100, deadline=None)
@given(
    seconds=st.integers(1, 10 * 24 * 3600),
    after=AFTER,
    gap=st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=3)),
)
def test_every_is_a_fixed_interval_and_monotone(
    seconds: int, after: datetime, gap: timedelta
) -> None:
    cadence = parse_cadence(f"@every {seconds}s", "Europe/Berlin")
    nxt = cadence.next(after)
    assert nxt is not None and nxt > after
    assert nxt - after.replace(microsecond=0) == timedelta(seconds=seconds)
    later = cadence.next(after + gap)
    assert later is not None and nxt <= later


def test_weekday_steps_stop_at_saturday() -> None:
    assert parse_cron("0 0 * * 1/2").weekdays == frozenset({1, 3, 5})
    assert parse_cron("0 0 * * */3").weekdays == frozenset({0, 3, 6})
    assert parse_cron("0 0 * * 5-7").weekdays == frozenset({5, 6, 0})


SCHEDULE_DOC = (
    "apiVersion: burnin.glimmer.ai/v1alpha1\nkind: BurnInSchedule\nmetadata: {{name: s}}\n"
    "spec:\n  schedule: '{cron}'\n  timeZone: {zone}\n  profileRef: smoke\n"
    "  target: {{nodeNames: [n1]}}\n"
)


@pytest.mark.parametrize(
    ("cron", "zone", "field", "words"),
    [
        ("0 3 * *", "UTC", "spec.schedule", "5 fields"),
        ("@every week", "UTC", "spec.schedule", "not a Go duration"),
        ("0 3 * * *", "Mars/Olympus", "spec.timeZone", "unknown time zone"),
    ],
)
def test_a_schedule_with_a_bad_cron_or_zone_is_refused_at_load_naming_the_field(
    cron: str, zone: str, field: str, words: str
) -> None:
    with pytest.raises(InputErrors) as refused:
        load_text(SCHEDULE_DOC.format(cron=cron, zone=zone), "s.yaml")
    (error,) = refused.value.errors
    assert error.location.field == field and words in error.message
    assert error.location.file == "s.yaml" and error.location.line is not None
