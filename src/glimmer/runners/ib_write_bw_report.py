"""What perftest's ``ib_write_bw`` and ``ib_write_lat`` printed, read into figures (§9.10, 9.12,
9.15). Shared by ib-write-bw, gpudirect-rdma and fabric-soak, which all drive those two tools.

perftest prints a header block, the connection addresses, then a results table between dashed
lines: a header row naming the columns and one row of numbers per message size. The column
header carries the unit (``BW average[Gb/sec]`` under ``--report_gbits``, ``[MB/sec]`` or
``[MiB/sec]`` without), so the unit is read from it and asserted rather than assumed: a build
that ignored ``--report_gbits`` would otherwise report MB/s as Gb/s.

Latency tables come in three shapes: iteration mode with percentiles (current builds), without
them (older builds: the p99 is then absent, never guessed), and duration mode (only ``t_avg``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BW_UNIT = re.compile(r"BW average\[([^\]]+)\]")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
# perftest's own failure lines, worth quoting in an Error.
_FAILURES = re.compile(
    r"^\s*((?:Couldn't|Unable|Failed|Did not detect|Conflicting|Completion with error|"
    r"ethernet_read_keys|Received \d+ times ADDR_ERROR).*)$",
    re.MULTILINE,
)


@dataclass(frozen=True)
class BandwidthRow:
    message_bytes: int
    iterations: int
    peak_gbps: float  # 0.00 in duration mode: never reported
    average_gbps: float
    msg_rate_mpps: float


@dataclass(frozen=True)
class LatencyRow:
    message_bytes: int
    iterations: int
    min_us: float | None
    max_us: float | None
    typical_us: float | None
    avg_us: float | None
    p99_us: float | None


class ReportError(ValueError):
    """perftest's output cannot be read as the measurement it should be (wrong unit, no
    results table); the message says what was wrong."""


def _rows(text: str, header_has: str) -> tuple[str, list[list[str]]]:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "#bytes" in line and header_has in line:
            rows: list[list[str]] = []
            for row in lines[i + 1 :]:
                fields = row.split()
                if not fields or set(row.strip()) == {"-"}:
                    if rows:
                        break
                    continue
                if not all(_NUMBER.match(f) for f in fields):
                    break
                rows.append(fields)
            return line, rows
    return "", []


def failure_lines(text: str) -> list[str]:
    return [m.group(1).strip() for m in _FAILURES.finditer(text)]


def read_bandwidth(text: str) -> BandwidthRow:
    """The last row of an ``ib_write_bw`` results table, in Gb/s."""
    header, rows = _rows(text, "BW average")
    if not header:
        raise ReportError("ib_write_bw printed no results table")
    unit = _BW_UNIT.search(header)
    if unit is None or unit.group(1) != "Gb/sec":
        said = unit.group(1) if unit else "none"
        raise ReportError(f"ib_write_bw reported in {said}, not Gb/sec (--report_gbits ignored)")
    if not rows or len(rows[-1]) < 5:
        raise ReportError("ib_write_bw's results table has no complete row")
    f = rows[-1]
    return BandwidthRow(int(f[0]), int(f[1]), float(f[2]), float(f[3]), float(f[4]))


def read_latency(text: str) -> LatencyRow:
    """The last row of an ``ib_write_lat`` results table (any of its three shapes), in µs."""
    header, rows = _rows(text, "usec]")
    if not header or not rows:
        raise ReportError("ib_write_lat printed no results table")
    f = [float(x) for x in rows[-1]]
    size, iters = int(f[0]), int(f[1])
    if "t_min" not in header:  # duration mode: " #bytes #iterations t_avg[usec] tps average"
        return LatencyRow(size, iters, None, None, None, f[2] if len(f) > 2 else None, None)
    if len(f) < 5:
        raise ReportError("ib_write_lat's results table has no complete row")
    avg = f[5] if "t_avg" in header and len(f) > 5 else None
    p99 = f[7] if "99% percentile" in header and len(f) > 7 else None
    return LatencyRow(size, iters, f[2], f[3], f[4], avg, p99)
