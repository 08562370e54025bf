"""Durations as ``@every`` writes them, in Go's ``time.ParseDuration`` syntax: ``168h``,
``1h30m``, ``1.5h``, ``90s``. A schedule ticks on whole seconds, so a duration must be a whole
number of seconds and at least one second; anything else is refused rather than rounded."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_UNIT_NS = {
    "ns": Decimal(1),
    "us": Decimal(1_000),
    "µs": Decimal(1_000),
    "μs": Decimal(1_000),
    "ms": Decimal(1_000_000),
    "s": Decimal(1_000_000_000),
    "m": Decimal(60_000_000_000),
    "h": Decimal(3_600_000_000_000),
}
_PART = re.compile(r"([0-9]*\.?[0-9]*)(ns|us|µs|μs|ms|s|m|h)")
_NS_PER_S = Decimal(1_000_000_000)


class DurationError(ValueError):
    """A duration that cannot be read, or that no schedule can tick on."""


def parse_seconds(text: str) -> int:
    """Whole seconds of a Go-style duration; DurationError when malformed, not positive, or not
    a whole number of seconds."""
    body = text.strip()
    if not body:
        raise DurationError("an empty duration")
    if body[0] in "+-":
        if body[0] == "-":
            raise DurationError(f"duration {text!r} is negative")
        body = body[1:]
    total = Decimal(0)
    pos = 0
    while pos < len(body):
        match = _PART.match(body, pos)
        if match is None or match.group(1) in ("", "."):
            raise DurationError(
                f"duration {text!r} is not a Go duration (numbers with units h, m, s, ms, us, ns)"
            )
        try:
            total += Decimal(match.group(1)) * _UNIT_NS[match.group(2)]
        except InvalidOperation:
            raise DurationError(f"duration {text!r} has a malformed number") from None
        pos = match.end()
    seconds, rest = divmod(total, _NS_PER_S)
    if rest:
        raise DurationError(f"duration {text!r} is not a whole number of seconds")
    if seconds < 1:
        raise DurationError(f"duration {text!r} is shorter than one second")
    return int(seconds)
