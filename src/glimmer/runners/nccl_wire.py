"""The bytes each nccl rank put on the wire, so the bus factor is checked, not just applied.

``busBandwidthGBs`` is the algorithm bandwidth times 2(n−1)/n for all-reduce (nccl-tests'
convention, :mod:`glimmer.runners.nccl_sweep`): the factor claims that a ring all-reduce of S
bytes makes every rank send 2(n−1)/n × S. On the gloo backend (test mode) the collective is TCP
over the host's network interfaces, so that claim can be measured: each rank reads its network
namespace's transmit counters (``/proc/self/net/dev``) around each size's iterations, the ranks
pool their figures, and rank 0 prints one ``wire`` line per rank and size with the bytes sent per
iteration and their ratio to the size. NCCL over RDMA bypasses those counters, so the lines are
printed on gloo only.

The counters are the namespace's, not the process's: anything else sending at the same time is
counted too, which makes the figure an upper bound on a busy host. Ranks that share one namespace
over loopback (the unit tests) share the ``lo`` counter, so each sees the sum of all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

NET_DEV = Path("/proc/self/net/dev")
LOOPBACK = "lo"


def transmitted(text: str, loopback: bool) -> int:
    """Bytes transmitted in ``/proc/net/dev`` text: over ``lo`` alone when the collective
    runs over loopback, else over every other interface."""
    total = 0
    for line in text.splitlines()[2:]:
        name, sep, counters = line.partition(":")
        fields = counters.split()
        if not sep or len(fields) < 9:
            continue
        if (name.strip() == LOOPBACK) == loopback:
            total += int(fields[8])  # receive has 8 columns; transmit bytes come next
    return total


def sent_bytes(loopback: bool, source: Path = NET_DEV) -> int:
    """This network namespace's transmitted bytes now; 0 where the counters cannot be read."""
    try:
        return transmitted(source.read_text(), loopback)
    except (OSError, ValueError):
        return 0


def is_loopback(host: str | None) -> bool:
    return host is not None and (host == "localhost" or host.startswith("127."))


def wire_lines(
    collective: str, factor: float, sizes: Sequence[int], per_rank: Sequence[Sequence[float]]
) -> list[str]:
    """One line per size and rank: bytes sent per iteration, as a multiple of the size, beside
    the bus factor the bandwidth figure assumes."""
    lines = []
    for column, size in enumerate(sizes):
        for rank, row in enumerate(per_rank):
            sent = row[column]
            lines.append(
                f"wire size {size} B rank {rank}: sent {sent:.0f} B per iteration, "
                f"{sent / size:.4f}x the size ({collective} bus factor {factor:.4f})"
            )
    return lines
