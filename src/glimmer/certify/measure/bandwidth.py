"""Bandwidth measurements from nccl-tests output (specs/certify.md §6.1, peers.md §2.2).

Two readers of the same log:

* :func:`parse_table` reads the whole nccl-tests table — per message size the out-of-place and
  in-place ``time algbw busbw #wrong`` — and the ``# Avg bus bandwidth`` footer.
* :class:`BandwidthParser` is the LogProfile ``bandwidthResult`` recipe: one regex with the named
  groups ``size``, ``algBW`` and ``busBW`` (the built-in ``nccl-bandwidth`` profile captures the
  out-of-place columns), applied line by line after the kubelet timestamp is stripped.

Neither raises on odd text: a line that does not match or does not parse is skipped, because a
pod log mixes NCCL INFO lines, headers and whatever the launcher printed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from glimmer.api.certify.logprofile import LogProfile
from glimmer.errors import InputError, Location

# Kubelet prefix of ``kubectl logs --timestamps``: RFC 3339 with optional fraction and either Z or
# a ±hh:mm offset (non-UTC nodes emit offsets), then exactly one space.
_KUBELET_TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}) ")

# The built-in ``nccl-bandwidth`` LogProfile pattern (§6.1), carried over literally.
NCCL_BANDWIDTH_PATTERN = (
    r"^\s*(?P<size>\d+)\s+\d+\s+\w+\s+\w+\s+-?\d+\s+[\d.]+\s+(?P<algBW>[\d.]+)\s+(?P<busBW>[\d.]+)"
)
_REQUIRED_GROUPS = ("size", "algBW", "busBW")

# One full table row: size count type redop root, then out-of-place and in-place
# ``time algbw busbw #wrong``. ``#wrong`` is ``N/A`` when nccl-tests skips the check (-c 0).
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_ROW = re.compile(
    rf"^\s*(?P<size>\d+)\s+(?P<count>\d+)\s+(?P<type>\w+)\s+(?P<redop>\w+)\s+(?P<root>-?\d+)"
    rf"\s+(?P<ot>{_NUM})\s+(?P<oa>{_NUM})\s+(?P<ob>{_NUM})\s+(?P<ow>\d+|N/A)"
    rf"\s+(?P<it>{_NUM})\s+(?P<ia>{_NUM})\s+(?P<ib>{_NUM})\s+(?P<iw>\d+|N/A)\s*$"
)
_AVG = re.compile(rf"^#\s*Avg bus bandwidth\s*:\s*(?P<v>{_NUM})")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(?P<n>\d+)\s+(?P<s>OK|FAILED)")


def strip_kubelet_timestamp(line: str) -> str:
    """The line without its kubelet timestamp prefix (unchanged when it has none)."""
    return _KUBELET_TS.sub("", line, count=1)


def bus_factor(collective: str, ranks: int) -> float:
    """busbw = algbw × factor, as nccl-tests computes it (peers.md §2.2); 0 for a single rank.

    all_reduce 2(n−1)/n; all_gather, reduce_scatter, alltoall, gather, scatter (n−1)/n;
    broadcast, reduce, sendrecv and hypercube 1.
    """
    if ranks <= 1:
        return 0.0  # one rank moves nothing over a bus: nccl-tests prints busbw 0 (§6.1)
    name = collective.replace("-", "_").replace("_perf", "").lower()
    name = {"allreduce": "all_reduce", "allgather": "all_gather"}.get(name, name)
    name = {"reducescatter": "reduce_scatter"}.get(name, name)
    n = ranks
    if name == "all_reduce":
        return 2.0 * (n - 1) / n
    if name in ("all_gather", "reduce_scatter", "alltoall", "gather", "scatter"):
        return (n - 1) / n
    if name in ("broadcast", "reduce", "sendrecv", "hypercube"):
        return 1.0
    raise ValueError(f"no bus-bandwidth factor for collective {collective!r}")


@dataclass(frozen=True)
class Half:
    """One half of a row: out-of-place or in-place."""

    time_us: float
    alg_bw: float  # GB/s
    bus_bw: float  # GB/s
    wrong: int | None  # None: the check was skipped (N/A)


@dataclass(frozen=True)
class TableRow:
    size: int  # bytes
    count: int
    dtype: str
    redop: str
    root: int
    out_of_place: Half
    in_place: Half


@dataclass(frozen=True)
class NcclTable:
    """What one nccl-tests run printed: its rows and footer."""

    rows: tuple[TableRow, ...]
    avg_bus_bw: float | None  # the "# Avg bus bandwidth" footer (over every size, §2.2 gotcha)
    out_of_bounds: int | None

    @property
    def wrong(self) -> int:
        """Incorrect elements over every row and both halves."""
        return sum((r.out_of_place.wrong or 0) + (r.in_place.wrong or 0) for r in self.rows)

    def peak_bus_bw(self) -> float | None:
        """busBandwidthGBps of §7.5: the largest out-of-place busbw over sizes."""
        return max((r.out_of_place.bus_bw for r in self.rows), default=None)

    def peak_alg_bw(self) -> float | None:
        """algBandwidthGBps of §7.5: the largest out-of-place algbw over sizes."""
        return max((r.out_of_place.alg_bw for r in self.rows), default=None)


def _float(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _half(t: str, a: str, b: str, w: str) -> Half | None:
    ft, fa, fb = _float(t), _float(a), _float(b)
    if ft is None or fa is None or fb is None:
        return None
    return Half(ft, fa, fb, None if w == "N/A" else int(w))


def parse_table(text: str) -> NcclTable:
    """Every table row and the footer of an nccl-tests log (kubelet timestamps stripped).

    Never raises: unknown lines are skipped, and an empty table is a table with no rows.
    """
    rows: list[TableRow] = []
    avg: float | None = None
    oob: int | None = None
    for raw in text.splitlines():
        line = strip_kubelet_timestamp(raw)
        if line.lstrip().startswith("#"):
            m = _AVG.match(line.strip())
            if m:
                avg = _float(m.group("v"))
            o = _OOB.match(line.strip())
            if o:
                oob = int(o.group("n"))
            continue
        r = _ROW.match(line)
        if r is None:
            continue
        out = _half(r["ot"], r["oa"], r["ob"], r["ow"])
        inp = _half(r["it"], r["ia"], r["ib"], r["iw"])
        if out is None or inp is None:
            continue
        rows.append(
            TableRow(
                int(r["size"]), int(r["count"]), r["type"], r["redop"], int(r["root"]), out, inp
            )
        )
    return NcclTable(tuple(rows), avg, oob)


# ---- the LogProfile recipe -------------------------------------------------------------------


@dataclass(frozen=True)
class BandwidthRow:
    """One parsed ``bandwidthResult`` line."""

    size: int
    alg_bw: float
    bus_bw: float


class BandwidthParser:
    """A LogProfile's ``bandwidthResult`` pattern, compiled once."""

    def __init__(self, pattern: str | None, where: Location | None = None) -> None:
        loc = where or Location(field="spec.patterns.bandwidthResult")
        if not pattern:
            raise InputError("LogProfile has no bandwidthResult pattern", loc)
        try:
            self.regex = re.compile(pattern)
        except re.error as e:
            raise InputError(f"bandwidthResult regex does not compile: {e}", loc) from None
        if not all(g in self.regex.groupindex for g in _REQUIRED_GROUPS):
            raise InputError(
                "bandwidthResult regex must have named groups: size, algBW, busBW", loc
            )

    def parse(self, text: str) -> list[BandwidthRow]:
        """Rows in log order; lines that do not match or do not parse are skipped."""
        out: list[BandwidthRow] = []
        for raw in text.splitlines():
            m = self.regex.search(strip_kubelet_timestamp(raw))
            if m is None:
                continue
            try:
                size = int(m.group("size"))
            except (TypeError, ValueError):
                continue
            alg, bus = _float(m.group("algBW") or ""), _float(m.group("busBW") or "")
            if alg is None or bus is None:
                continue
            out.append(BandwidthRow(size, alg, bus))
        return out


NCCL_BANDWIDTH = BandwidthParser(NCCL_BANDWIDTH_PATTERN)


def bandwidth_parser(profile: LogProfile) -> BandwidthParser:
    """The ``bandwidthResult`` recipe of a loaded LogProfile (errors name the profile)."""
    pattern = profile.spec.patterns.bandwidth_result
    where = Location(obj=f"LogProfile/{profile.name}", field="spec.patterns.bandwidthResult")
    return BandwidthParser(pattern.regex if pattern else None, where)


@dataclass(frozen=True)
class SizeResult:
    """A BandwidthMeasurement ``results[]`` entry: running averages at one message size."""

    size: int
    alg_bw: float
    bus_bw: float
    samples: int


@dataclass(frozen=True)
class SizeSums:
    """The exact sums behind one ``results[]`` entry: a measurement sampled many times keeps
    these (not the rounded averages it shows), so its figures equal one whole read's."""

    size: int
    alg_sum: float
    bus_sum: float
    samples: int

    def result(self) -> SizeResult:
        return SizeResult(
            self.size, self.alg_sum / self.samples, self.bus_sum / self.samples, self.samples
        )


def accumulate(sums: Sequence[SizeSums], rows: Iterable[BandwidthRow]) -> list[SizeSums]:
    """Fold new rows into per-size sums; sizes keep their first-seen order, new sizes are
    appended, a row adds to its size's sums in log order."""
    order = [s.size for s in sums]
    acc = {s.size: (s.alg_sum, s.bus_sum, s.samples) for s in sums}
    for row in rows:
        if row.size not in acc:
            order.append(row.size)
            acc[row.size] = (0.0, 0.0, 0)
        a, b, n = acc[row.size]
        acc[row.size] = (a + row.alg_bw, b + row.bus_bw, n + 1)
    return [SizeSums(s, *acc[s]) for s in order if acc[s][2] > 0]


def merge(results: Sequence[SizeResult], rows: Iterable[BandwidthRow]) -> list[SizeResult]:
    """Fold new rows into per-size running averages (§6.1): newAvg = (old·oldN + Σnew)/(oldN +
    newN); sizes keep their first-seen order, new sizes are appended."""
    sums = [
        SizeSums(r.size, r.alg_bw * r.samples, r.bus_bw * r.samples, r.samples) for r in results
    ]
    return [s.result() for s in accumulate(sums, rows)]


def peak_bus_bw(results: Sequence[SizeResult]) -> float | None:
    """busBandwidthGBps (§7.5): the largest busbw over sizes; None without results."""
    return max((r.bus_bw for r in results), default=None)


def peak_alg_bw(results: Sequence[SizeResult]) -> float | None:
    """algBandwidthGBps (§7.5): the largest algbw over sizes; None without results."""
    return max((r.alg_bw for r in results), default=None)
