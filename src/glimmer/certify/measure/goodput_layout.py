"""Timestamps read by a LogProfile's Go time layout (specs/certify.md §2.8 ``timestamp.layout``).

A layout writes Go's reference time (Mon Jan 2 15:04:05 MST 2006) the way the log prints a time:
``2006-01-02 15:04:05.999999``, ``01/02/2006 03:04:05 PM``, ``Jan _2 15:04:05.000``. The layout
is turned into a regex once, so a fraction of any length (nanoseconds are cut to microseconds,
as Python keeps no more) and a zone of any Go form are read; a time without a zone is UTC, like
the kubelet's. A layout without a year (syslog style) is read in 1970, a placeholder: durations
within one log still come out right, but such a profile had better capture a full time.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_FRACTION = re.compile(r"[.,](0+|9+)")
# Go layout elements, longest first so ``2006`` is not read as ``2`` then ``006``.
_TOKENS = (
    ("January", r"(?P<monthname>[A-Za-z]+)"),
    ("Monday", r"[A-Za-z]+"),
    ("-07:00:00", r"(?P<zone>[+-]\d{2}:\d{2}:\d{2})"),
    ("Z07:00:00", r"(?P<zone>Z|[+-]\d{2}:\d{2}:\d{2})"),
    ("-070000", r"(?P<zone>[+-]\d{6})"),
    ("Z070000", r"(?P<zone>Z|[+-]\d{6})"),
    ("-07:00", r"(?P<zone>[+-]\d{2}:\d{2})"),
    ("Z07:00", r"(?P<zone>Z|[+-]\d{2}:\d{2})"),
    ("-0700", r"(?P<zone>[+-]\d{4})"),
    ("Z0700", r"(?P<zone>Z|[+-]\d{4})"),
    ("2006", r"(?P<year>\d{4})"),
    ("-07", r"(?P<zone>[+-]\d{2})"),
    ("Z07", r"(?P<zone>Z|[+-]\d{2})"),
    ("Jan", r"(?P<monthname>[A-Za-z]{3})"),
    ("Mon", r"[A-Za-z]{3}"),
    ("MST", r"[A-Z]{3,5}"),
    ("__2", r"[ \d]{2}\d"),
    ("002", r"\d{3}"),
    ("_2", r"(?P<day>[ \d]?\d)"),
    ("01", r"(?P<month>\d{2})"),
    ("02", r"(?P<day>\d{2})"),
    ("03", r"(?P<hour12>\d{2})"),
    ("04", r"(?P<minute>\d{2})"),
    ("05", r"(?P<second>\d{2})"),
    ("06", r"(?P<yy>\d{2})"),
    ("15", r"(?P<hour>\d{2})"),
    ("PM", r"(?P<ampm>AM|PM)"),
    ("pm", r"(?P<ampm>am|pm)"),
    ("1", r"(?P<month>\d{1,2})"),
    ("2", r"(?P<day>\d{1,2})"),
    ("3", r"(?P<hour12>\d{1,2})"),
    ("4", r"(?P<minute>\d{1,2})"),
    ("5", r"(?P<second>\d{1,2})"),
)
_OPTIONAL_FRACTION = r"(?:[.,](?P<fraction>\d+))?"


def layout_regex(layout: str) -> re.Pattern[str]:
    """The regex a Go layout reads times with (whole text, named parts); compile it once per
    profile and pass it to :func:`go_time` (no cache here: the core keeps no module state)."""
    out, i, has_fraction = [], 0, bool(_FRACTION.search(layout))
    while i < len(layout):
        if m := _FRACTION.match(layout, i):
            # .000: exactly that many digits; .999: any, or none at all (Go's rules, relaxed
            # to any length both ways: a log's precision is not the layout's business).
            out.append(r"[.,](?P<fraction>\d+)" if m.group(1)[0] == "0" else _OPTIONAL_FRACTION)
            i = m.end()
            continue
        for token, rx in _TOKENS:
            if layout.startswith(token, i):
                out.append(rx)
                i += len(token)
                if token in ("05", "5") and not has_fraction:
                    out.append(_OPTIONAL_FRACTION)  # Go reads a fraction after seconds anyway
                break
        else:
            out.append(r"\s+" if layout[i] == " " else re.escape(layout[i]))
            i += 1
    return re.compile("".join(out))


def _zone(text: str | None) -> timezone:
    if not text or text == "Z":
        return UTC
    digits = text[1:].replace(":", "")
    hours, minutes, seconds = int(digits[:2]), int(digits[2:4] or 0), int(digits[4:6] or 0)
    offset = timedelta(hours=hours, minutes=minutes, seconds=seconds)
    return timezone(-offset if text[0] == "-" else offset)


def go_time(text: str, layout: str | re.Pattern[str]) -> datetime | None:
    """``text`` read by the Go ``layout`` (or its :func:`layout_regex`); None when it does not
    fit."""
    rx = layout_regex(layout) if isinstance(layout, str) else layout
    m = rx.fullmatch(text.strip())
    if m is None:
        return None
    g = m.groupdict()
    try:
        year = int(g["year"]) if g.get("year") else 2000 + int(g["yy"]) if g.get("yy") else 1970
        if g.get("monthname"):
            month = _MONTHS.index(g["monthname"][:3].lower()) + 1
        else:
            month = int(g.get("month") or 1)
        hour = int(g.get("hour") or 0)
        if g.get("hour12"):
            hour = int(g["hour12"]) % 12 + (12 if (g.get("ampm") or "").lower() == "pm" else 0)
        micro = int(((g.get("fraction") or "") + "000000")[:6])
        return datetime(
            year,
            month,
            int((g.get("day") or "1").strip()),
            hour,
            int(g.get("minute") or 0),
            int(g.get("second") or 0),
            micro,
            tzinfo=_zone(g.get("zone")),
        )
    except ValueError:
        return None
