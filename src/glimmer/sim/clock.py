"""Simulated time: instants as Unix seconds, the epoch, and how a user writes a time.

The simulator's clock is virtual. Its epoch is the instant the reference golden values are pinned
at (2026-10-02T00:00:00Z); counters integrate from it, and a relative time such as ``+2h`` is
an offset from it. An absolute time is RFC 3339 with a timezone.
"""

from __future__ import annotations

from datetime import UTC, datetime

from glimmer.api.fleet_sched import parse_duration

EPOCH = datetime(2026, 10, 2, tzinfo=UTC).timestamp()


def to_seconds(at: datetime) -> float:
    """Unix seconds of an aware datetime."""
    if at.tzinfo is None:
        raise ValueError("a time needs a timezone (e.g. 2026-10-02T00:00:00Z)")
    return at.timestamp()


def to_datetime(t: float) -> datetime:
    return datetime.fromtimestamp(t, tz=UTC)


def rfc3339(t: float) -> str:
    """``2026-10-02T00:00:00Z`` (fractions of a second only when present)."""
    text = to_datetime(t).isoformat()
    return text.replace("+00:00", "Z")


def parse_time(text: str, epoch: float = EPOCH) -> float:
    """Unix seconds of ``text``: RFC 3339 (``2026-10-02T01:00:00Z``) or ``+2h`` / ``-30m`` from
    the epoch (Go duration syntax). ValueError names what was wrong."""
    text = text.strip()
    if text[:1] in "+-":
        try:
            return epoch + parse_duration(text)
        except ValueError:
            raise ValueError(f"invalid time offset {text!r} (use e.g. +2h, +90m, -1h30m)") from None
    try:
        at = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"invalid time {text!r} (use RFC 3339 such as 2026-10-02T01:00:00Z, or +2h)"
        ) from None
    if at.tzinfo is None:
        raise ValueError(f"time {text!r} needs a timezone (e.g. 2026-10-02T01:00:00Z)")
    return at.timestamp()
