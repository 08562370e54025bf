"""Writing an nccl-tests log in the tool's own format, so a simulated run is read by the same
parser as a real one (:func:`glimmer.certify.measure.parse_table`).

The layout follows nccl-tests' ``src/common.cu``: a ``#`` preamble naming the parameters and the
devices, two header lines, one row per message size (out-of-place then in-place), and the
``Out of bounds`` / ``Avg bus bandwidth`` footer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from glimmer.certify.measure.bandwidth import Half, TableRow

# Test binaries and how their rows describe themselves (type, redop, root).
BINARIES = {
    "all_reduce": ("all_reduce_perf", "sum"),
    "all_gather": ("all_gather_perf", "none"),
    "reduce_scatter": ("reduce_scatter_perf", "sum"),
    "alltoall": ("alltoall_perf", "none"),
    "sendrecv": ("sendrecv_perf", "sum"),
}


@dataclass(frozen=True)
class Rank:
    """One rank of the run as the preamble lists it."""

    host: str
    device: int
    bus_id: str
    gpu_name: str


def _time(us: float) -> str:
    # nccl-tests drops decimals as the time grows so the column keeps its width.
    if us >= 10000:
        return f"{us:7.0f}"
    if us >= 100:
        return f"{us:7.1f}"
    return f"{us:7.2f}"


def _half(h: Half) -> str:
    wrong = "N/A" if h.wrong is None else str(h.wrong)
    return f"  {_time(h.time_us)}  {h.alg_bw:6.2f}  {h.bus_bw:6.2f}  {wrong:>6}"


def render_row(row: TableRow) -> str:
    """One table row, as nccl-tests prints it."""
    head = f"{row.size:12d}  {row.count:12d}  {row.dtype:>8}  {row.redop:>6}  {row.root:6d}"
    return head + _half(row.out_of_place) + _half(row.in_place)


def render_log(
    collective: str,
    ranks: Sequence[Rank],
    rows: Sequence[TableRow],
    *,
    min_bytes: int,
    max_bytes: int,
    iters: int = 100,
) -> str:
    """The whole log of one run: preamble, table and footer."""
    out = [
        f"# nThread 1 nGpus 1 minBytes {min_bytes} maxBytes {max_bytes} step: 2(factor) "
        f"warmup iters: 5 iters: {iters} agg iters: 1 validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]
    for i, r in enumerate(ranks):
        out.append(
            f"#  Rank {i:2d} Group  0 Pid {1000 + i:6d} on {r.host:>14} device {r.device:2d} "
            f"[{r.bus_id}] {r.gpu_name}"
        )
    out += [
        "#",
        "#" + " " * 62 + "out-of-place" + " " * 23 + "in-place",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
        "     (us)  (GB/s)  (GB/s)",
    ]
    out += [render_row(r) for r in rows]
    wrong = sum((r.out_of_place.wrong or 0) + (r.in_place.wrong or 0) for r in rows)
    avg = sum(r.out_of_place.bus_bw for r in rows) / len(rows) if rows else 0.0
    out += [
        f"# Out of bounds values : {wrong} {'OK' if wrong == 0 else 'FAILED'}",
        f"# Avg bus bandwidth    : {avg:.4f} ",
        "#",
        "",
    ]
    return "\n".join(out)
