"""A schedule's ``spec.schedule`` and ``spec.timeZone`` read into a :class:`Cadence`: something
that says when the schedule next fires after a given instant.

Accepted: a 5-field cron expression (see :mod:`glimmer.api.cron`), the descriptors
``@yearly`` ``@annually`` ``@monthly`` ``@weekly`` ``@daily`` ``@midnight`` ``@hourly``, and
``@every <duration>``. A ``TZ=``/``CRON_TZ=`` prefix is refused: the zone belongs in
``spec.timeZone`` alone, so one field says where "03:00" is. An empty zone is UTC, never the
zone of the process that happens to run the scheduler.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from glimmer.api.cron import CronError, CronExpr, parse_cron
from glimmer.api.duration import DurationError, parse_seconds

DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_ZONE_PREFIXES = ("TZ=", "CRON_TZ=")


class ScheduleError(ValueError):
    """``spec.schedule`` or ``spec.timeZone`` cannot be used; the message says why."""


@dataclass(frozen=True)
class Cadence:
    """When a schedule fires: a cron expression on a zone's wall clock, or a fixed interval."""

    text: str
    zone: tzinfo
    cron: CronExpr | None = None
    every_seconds: int | None = None

    def next(self, after: datetime) -> datetime | None:
        """The first fire time strictly after ``after`` (aware, in UTC); None if never."""
        if after.tzinfo is None:
            raise ValueError("Cadence.next needs a timezone-aware time")
        if self.every_seconds is not None:
            # Intervals count from the previous tick, truncated to the whole second.
            base = after.astimezone(UTC).replace(microsecond=0)
            return base + timedelta(seconds=self.every_seconds)
        assert self.cron is not None
        found = self.cron.next_after(after, self.zone)
        return found.astimezone(UTC) if found is not None else None


def load_zone(name: str | None) -> tzinfo:
    """The IANA zone ``name``; UTC when empty. ScheduleError when unknown."""
    if not name or not name.strip():
        return UTC
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ScheduleError(
            f"unknown time zone {name!r} (an IANA name such as Europe/Berlin)"
        ) from None


def parse_cadence(schedule: str, time_zone: str | None = None) -> Cadence:
    """Read ``spec.schedule`` in ``spec.timeZone``; ScheduleError with the reason if invalid."""
    text = schedule.strip()
    if not text:
        raise ScheduleError("the schedule is empty")
    if text.upper().startswith(_ZONE_PREFIXES):
        raise ScheduleError("a TZ= or CRON_TZ= prefix is not allowed; set spec.timeZone")
    zone = load_zone(time_zone)
    try:
        if text.startswith("@"):
            word, _, rest = text.partition(" ")
            word = word.lower()
            if word == "@every":
                return Cadence(text, zone, every_seconds=parse_seconds(rest))
            if word not in DESCRIPTORS or rest.strip():
                known = ", ".join([*DESCRIPTORS, "@every <duration>"])
                raise ScheduleError(f"unknown descriptor {text!r} (known: {known})")
            return Cadence(text, zone, cron=parse_cron(DESCRIPTORS[word]))
        return Cadence(text, zone, cron=parse_cron(text))
    except (CronError, DurationError) as e:
        raise ScheduleError(str(e)) from None
