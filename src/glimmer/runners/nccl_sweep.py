"""The collective of one nccl rank and its size sweep: what each rank sends, what it must get
back, how long each size takes, and the bus bandwidth that makes sizes and collectives
comparable (nccl-tests' convention, peers.md §2.2).

For a collective over n ranks moving ``size`` bytes (the whole buffer, as nccl-tests counts
it), ``algbw = size / time`` and ``busbw = algbw × factor``: 2(n−1)/n for all-reduce, (n−1)/n
for all-gather, reduce-scatter and all-to-all, so that busbw is the same figure for every
collective on the same links, and at n = 2 all-reduce's bus bandwidth equals its algbw.

Every rank fills its input with ``rank + 1 + (index mod 13)`` in float32 (small integers, so
any sum is exact) and, once per size after the timed iterations, checks every element it
received against the value the collective must produce; a wrong element is a miscompare.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

COLLECTIVES = ("allreduce", "allgather", "reducescatter", "alltoall")
# nccl-tests' default sweep, 8 B to 256 MiB.
DEFAULT_SIZES = (
    8, 64, 512, 4096, 32768, 262144, 1 << 20, 8 << 20, 64 << 20, 256 << 20,
)  # fmt: skip
ELEMENT = 4  # float32
PATTERN = 13


def bus_factor(collective: str, n: int) -> float:
    if n <= 1:
        return 0.0
    return 2.0 * (n - 1) / n if collective == "allreduce" else (n - 1) / n


def elements(collective: str, size: int, n: int) -> int:
    """Elements in the whole buffer: the size rounded down to whole float32s, and for the
    chunked collectives to a whole number of per-rank chunks (at least one element each)."""
    count = max(size // ELEMENT, 1)
    if collective == "allreduce":
        return count
    return max(count // n, 1) * n


@dataclass(frozen=True)
class SizeResult:
    size_bytes: int
    seconds: float  # per iteration
    algbw_gbs: float
    busbw_gbs: float
    wrong: int


class Collective:
    """One rank's buffers and operation for one size."""

    def __init__(
        self, torch: ModuleType, dist: ModuleType, collective: str, size: int, device: str
    ) -> None:
        self.torch, self.dist, self.kind = torch, dist, collective
        self.rank, self.n = dist.get_rank(), dist.get_world_size()
        self.count = elements(collective, size, self.n)
        self.size_bytes = self.count * ELEMENT
        chunk = self.count // self.n
        self.chunk = chunk
        inputs = {"allreduce": self.count, "allgather": chunk}
        outputs = {"allreduce": self.count, "reducescatter": chunk}
        index = torch.arange(inputs.get(collective, self.count), device=device)
        self.input = (index % PATTERN).float() + (self.rank + 1)
        self.output = torch.empty(outputs.get(collective, self.count), device=device)
        self.pristine = self.input.clone()
        if collective == "allreduce":
            self.output.copy_(self.input)

    def run(self) -> None:
        dist = self.dist
        if self.kind == "allreduce":
            dist.all_reduce(self.output)  # in place: the timed loop moves only the collective
        elif self.kind == "allgather":
            dist.all_gather_into_tensor(self.output, self.input)
        elif self.kind == "reducescatter":
            scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
            scatter(self.output, self.input)
        else:
            dist.all_to_all_single(self.output, self.input)

    def expected(self) -> Any:
        torch, n, r, c = self.torch, self.n, self.rank, self.chunk
        device = self.output.device
        ranks_sum = n * (n + 1) / 2
        if self.kind == "allreduce":
            index = torch.arange(self.count, device=device)
            return (index % PATTERN).float() * n + ranks_sum
        if self.kind == "allgather":
            j = torch.arange(self.count, device=device)
            return (j % c % PATTERN).float() + (j // c + 1).float()
        if self.kind == "reducescatter":
            j = torch.arange(c, device=device)
            return ((r * c + j) % PATTERN).float() * n + ranks_sum
        j = torch.arange(self.count, device=device)  # all-to-all: chunk s came from rank s
        return ((r * c + j % c) % PATTERN).float() + (j // c + 1).float()

    def wrong_elements(self, corrupt: int = 0) -> int:
        """Run once more and count the elements that are not what the collective must give;
        ``corrupt`` (self-test) changes that many received elements first."""
        if self.kind == "allreduce":
            self.output.copy_(self.pristine)
        self.run()
        for i in range(min(corrupt, self.output.numel())):
            self.output[i] += 1
        return int((self.output != self.expected()).sum())


def time_size(
    op: Collective, warmup: int, iters: int, sync: Callable[[], None]
) -> tuple[float, int]:
    """Seconds per iteration of ``iters`` back-to-back collectives after ``warmup``."""
    for _ in range(warmup):
        op.run()
    sync()
    start = time.perf_counter()
    for _ in range(iters):
        op.run()
    sync()
    return (time.perf_counter() - start) / iters, iters


def result_of(op: Collective, seconds: float, wrong: int) -> SizeResult:
    algbw = op.size_bytes / seconds / 1e9 if seconds > 0 else 0.0
    return SizeResult(op.size_bytes, seconds, algbw, algbw * bus_factor(op.kind, op.n), wrong)


def parse_sizes(raw: str) -> tuple[int, ...] | str:
    """``BURNIN_NCCL_SIZES``: comma-separated byte counts, with an optional K/M/G (binary)
    suffix; the reason it is malformed otherwise."""
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    sizes = []
    for part in raw.replace(";", ",").split(","):
        text = part.strip().lower().removesuffix("b").removesuffix("i")
        if not text:
            continue
        digits, suffix = text.rstrip("kmg"), text[len(text.rstrip("kmg")) :]
        if not digits.isdigit() or suffix not in scale or int(digits) <= 0:
            return f"{part.strip()!r} is not a positive byte count (e.g. 8, 64K, 256M)"
        sizes.append(int(digits) * scale[suffix])
    if not sizes:
        return "no size given"
    return tuple(sorted(set(sizes)))
