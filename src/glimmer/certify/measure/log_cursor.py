"""Where a measurement's read of one pod's log stands, and the lines a read adds past it
(specs/certify.md §6.1 "since an advancing anchor", ADR-005 ``sinceTime``).

A cursor is the kubelet timestamp of the last line consumed (as printed, RFC 3339 with up to
nanoseconds) and how many consumed lines carry exactly that timestamp. The API reads from a
whole second (``sinceTime`` truncates), so a read repeats the cursor's second: :func:`advance`
drops the lines before the cursor's time by their nanosecond prefix and, at its time, as many
as were consumed there — two lines written in the same nanosecond are neither lost nor counted
twice. A line without a prefix (a stand-in's log, a kubelet that printed none) shares the key
of the line before it; a log without any is then a line count from its start.

Only whole lines are consumed: an unterminated last line may still be being written, and is
read again, whole, by the next sample — unless the pod has finished (``final``). The cursor
names the pod by UID and the container's restart count: another pod (a checkpoint restart's
new workload) or another container instance starts from nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

_PREFIX = re.compile(
    r"^(?P<stamp>(?P<base>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(?P<frac>\d+))?"
    r"(?P<zone>Z|[+-]\d{2}:\d{2})) "
)

Key = tuple[int, int] | None  # (epoch nanoseconds, 0); None: no timestamp seen yet


def stamp_ns(stamp: str) -> int | None:
    """An RFC 3339 timestamp (up to nanoseconds) as epoch nanoseconds; None when not one."""
    m = _PREFIX.match(stamp + " ")
    if m is None:
        return None
    zone = m.group("zone")
    at = datetime.fromisoformat(m.group("base")).replace(tzinfo=UTC)
    if zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        at -= sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    frac = (m.group("frac") or "")[:9].ljust(9, "0")
    return int(at.timestamp()) * 1_000_000_000 + int(frac)


def line_stamp(raw: str) -> str | None:
    """The kubelet timestamp a log line starts with, as printed."""
    m = _PREFIX.match(raw)
    return m.group("stamp") if m else None


@dataclass(frozen=True)
class Cursor:
    """The last consumed line of pod ``pod_uid``'s container (after ``restarts`` restarts)."""

    pod_uid: str
    restarts: int = 0
    stamp: str | None = None  # its kubelet timestamp; None: no stamped line consumed yet
    at_stamp: int = 0  # consumed lines whose key is ``stamp``'s

    def since_time(self) -> str | None:
        """``sinceTime`` for the next read: the cursor's whole second (UTC), None: from the
        start."""
        ns = stamp_ns(self.stamp) if self.stamp else None
        if ns is None:
            return None
        whole = datetime.fromtimestamp(ns // 1_000_000_000, UTC)
        return whole.strftime("%Y-%m-%dT%H:%M:%SZ")

    def to_status(self, role: str) -> dict[str, Any]:
        out: dict[str, Any] = {"role": role, "podUID": self.pod_uid, "restarts": self.restarts}
        if self.stamp is not None:
            out["time"] = self.stamp
        out["linesAtTime"] = self.at_stamp
        return out


def from_status(found: Mapping[str, Any]) -> Cursor:
    return Cursor(
        str(found.get("podUID") or ""),
        int(found.get("restarts") or 0),
        str(found["time"]) if found.get("time") else None,
        int(found.get("linesAtTime") or 0),
    )


def _key(stamp: str | None) -> int | None:
    return stamp_ns(stamp) if stamp else None


@dataclass(frozen=True)
class Read:
    """The lines a read adds past a cursor, and the cursor after each of them."""

    lines: tuple[str, ...]
    cursors: tuple[Cursor, ...]  # cursors[i]: consumed up to and including lines[i]

    def cursor_after(self, count: int, before: Cursor) -> Cursor:
        """The cursor once the first ``count`` lines are consumed."""
        return self.cursors[count - 1] if count > 0 else before


def advance(text: str, cursor: Cursor, *, final: bool = False) -> Read:
    """The whole lines of ``text`` (a read from ``cursor.since_time()``) past ``cursor``."""
    parts = text.split("\n")
    whole, tail = parts[:-1], parts[-1]
    if final and tail:
        whole.append(tail)
    cursor_ns = _key(cursor.stamp)
    stamp: str | None = None
    seen_at: dict[int | None, int] = {}
    lines: list[str] = []
    cursors: list[Cursor] = []
    current = cursor
    for raw in whole:
        stamp = line_stamp(raw) or stamp
        ns = _key(stamp)
        count = seen_at[ns] = seen_at.get(ns, 0) + 1
        if cursor_ns is not None and (ns is None or ns < cursor_ns):
            continue  # before the cursor (the repeated second)
        if ns == cursor_ns and count <= cursor.at_stamp:
            continue  # at the cursor's time and consumed already
        if ns == _key(current.stamp):
            current = Cursor(current.pod_uid, current.restarts, current.stamp, current.at_stamp + 1)
        else:
            current = Cursor(current.pod_uid, current.restarts, stamp, 1)
        lines.append(raw)
        cursors.append(current)
    return Read(tuple(lines), tuple(cursors))
