"""The standard 5-field cron expression (minute hour day-of-month month day-of-week) and when it
next fires on a zone's wall clock.

Each field is ``*`` (or ``?`` in the two day fields), a value, a range ``a-b``, a step ``*/n``,
``a-b/n`` or ``a/n`` (from ``a`` to the field's end), or a comma list of those. Months take
``JAN``..``DEC`` and weekdays ``SUN``..``SAT`` (any case); weekday 7 is Sunday too. As in every
cron, when both day fields are restricted a day matching EITHER fires; when one is ``*`` the
other alone decides.

Wall-clock time decides, in the schedule's zone (zoneinfo). On a day the clocks jump forward a
local time that does not exist is skipped, never moved; on a day they fall back a local time
that happens twice fires once, at its first occurrence.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")

# How far ahead a search may look for a matching wall time. February 29th recurs at most eight
# years apart (2096 -> 2104); a valid expression always fires well within this.
_HORIZON_YEARS = 10


class CronError(ValueError):
    """A cron expression that cannot be read."""


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()
    name_base: int = 0  # the value of names[0]


_FIELDS = (
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day-of-month", 1, 31),
    _Field("month", 1, 12, _MONTHS, 1),
    # 7 is accepted as Sunday and folded onto 0 after parsing.
    _Field("day-of-week", 0, 7, _DAYS, 0),
)


@dataclass(frozen=True)
class CronExpr:
    """A parsed expression: the allowed values of each field."""

    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool  # day-of-month was * or ?
    any_weekday: bool  # day-of-week was * or ?

    def day_matches(self, year: int, month: int, day: int) -> bool:
        """Whether the date fires (given its month is allowed)."""
        in_days = day in self.days
        # datetime.weekday(): Monday = 0; cron: Sunday = 0.
        in_weekdays = (calendar.weekday(year, month, day) + 1) % 7 in self.weekdays
        if self.any_day or self.any_weekday:
            return in_days and in_weekdays
        return in_days or in_weekdays

    def matches(self, wall: datetime) -> bool:
        """Whether a wall-clock minute fires (seconds must be zero)."""
        return (
            wall.second == 0
            and wall.microsecond == 0
            and wall.minute in self.minutes
            and wall.hour in self.hours
            and wall.month in self.months
            and self.day_matches(wall.year, wall.month, wall.day)
        )

    def next_after(self, after: datetime, zone: tzinfo) -> datetime | None:
        """The first instant strictly after ``after`` whose wall time in ``zone`` fires, as an
        aware datetime in ``zone``; None if nothing fires within the search horizon."""
        if after.tzinfo is None:
            raise ValueError("next_after needs a timezone-aware time")
        local = after.astimezone(zone)
        wall = local.replace(tzinfo=None, second=0, microsecond=0, fold=0) + timedelta(minutes=1)
        limit = wall.replace(day=1) + timedelta(days=366 * _HORIZON_YEARS)
        while True:
            found = self._next_wall(wall, limit)
            if found is None:
                return None
            instant = _first_instant(found, zone)
            if instant is not None and instant > after:
                return instant
            wall = found + timedelta(minutes=1)

    def _next_wall(self, wall: datetime, limit: datetime) -> datetime | None:
        # Jump field by field (month, day, hour, minute) rather than minute by minute.
        while wall < limit:
            if wall.month not in self.months:
                wall = _next_month(wall)
                continue
            if not self.day_matches(wall.year, wall.month, wall.day):
                wall = wall.replace(hour=0, minute=0) + timedelta(days=1)
                continue
            hour = _at_or_after(self.hours, wall.hour)
            if hour is None:
                wall = wall.replace(hour=0, minute=0) + timedelta(days=1)
                continue
            if hour != wall.hour:
                wall = wall.replace(hour=hour, minute=0)
            minute = _at_or_after(self.minutes, wall.minute)
            if minute is None:
                wall = wall.replace(minute=0) + timedelta(hours=1)
                continue
            return wall.replace(minute=minute)
        return None


def _next_month(wall: datetime) -> datetime:
    if wall.month == 12:
        return datetime(wall.year + 1, 1, 1)
    return datetime(wall.year, wall.month + 1, 1)


def _at_or_after(values: tuple[int, ...], current: int) -> int | None:
    for value in values:
        if value >= current:
            return value
    return None


def _first_instant(wall: datetime, zone: tzinfo) -> datetime | None:
    """The first instant showing ``wall`` in ``zone``; None if the clocks skip it."""
    candidate = wall.replace(tzinfo=zone, fold=0)
    # A wall time in a spring-forward gap does not survive the round trip through UTC.
    back = candidate.astimezone(UTC).astimezone(zone).replace(tzinfo=None)
    return candidate if back == wall else None


def parse_cron(text: str) -> CronExpr:
    """Parse a 5-field expression; CronError naming the field at fault."""
    parts = text.split()
    if len(parts) != 5:
        raise CronError(
            f"expected 5 fields (minute hour day-of-month month day-of-week), got {len(parts)}"
        )
    values = [_parse_field(part, spec) for part, spec in zip(parts, _FIELDS, strict=True)]
    weekdays = frozenset(d % 7 for d in values[4])
    days, months = frozenset(values[2]), frozenset(values[3])
    any_day = parts[2] in ("*", "?")
    any_weekday = parts[4] in ("*", "?")
    expr = CronExpr(
        minutes=tuple(sorted(values[0])),
        hours=tuple(sorted(values[1])),
        days=days,
        months=months,
        weekdays=weekdays,
        any_day=any_day,
        any_weekday=any_weekday,
    )
    if not any_day and any_weekday and not _some_day_exists(days, months):
        raise CronError(f"{text!r} never fires: no allowed month has any of its days")
    return expr


def _some_day_exists(days: frozenset[int], months: frozenset[int]) -> bool:
    longest = {m: calendar.monthrange(2024, m)[1] for m in months}  # 2024: February has 29
    return any(d <= longest[m] for m in months for d in days)


def _parse_field(text: str, spec: _Field) -> set[int]:
    out: set[int] = set()
    for item in text.split(","):
        if not item:
            raise CronError(f"{spec.name} field {text!r} has an empty list item")
        out |= _parse_item(item, spec)
    return out


def _parse_item(item: str, spec: _Field) -> set[int]:
    body, slash, step_text = item.partition("/")
    step = 1
    if slash:
        if not (step_text.isascii() and step_text.isdigit()) or int(step_text) == 0:
            raise CronError(f"{spec.name} field: step in {item!r} must be a positive number")
        step = int(step_text)
    wildcard = ("*", "?") if spec.name.startswith("day") else ("*",)
    if body in wildcard:
        low, high = spec.low, spec.high
    elif "-" in body:
        first, _, last = body.partition("-")
        low, high = _value(first, spec, item), _value(last, spec, item)
        if low > high:
            raise CronError(f"{spec.name} field: range {item!r} runs backwards")
    else:
        low = _value(body, spec, item)
        # "a/n" means every n-th value from a to the end of the field.
        high = spec.high if slash else low
    if spec.name == "day-of-week" and (body in wildcard or (slash and "-" not in body)):
        high = 6  # 7 only aliases Sunday when written; "*/2" and "1/2" must not reach it
    return set(range(low, high + 1, step))


def _value(text: str, spec: _Field, item: str) -> int:
    upper = text.upper()
    if upper in spec.names:
        return spec.names.index(upper) + spec.name_base
    if not (text.isascii() and text.isdigit()):
        raise CronError(f"{spec.name} field: {text!r} in {item!r} is not a number or a name")
    value = int(text)
    if not spec.low <= value <= spec.high:
        raise CronError(f"{spec.name} field: {value} in {item!r} is outside {spec.low}-{spec.high}")
    return value
