"""Schedulers, projects (with their GPU quotas), workloads and workers of a Fleet (§1.10).

Durations use Go's syntax (``6h``, ``2m``, ``1h30m``) because the reference fixtures do; the
simulator reads them through :func:`parse_duration` as whole seconds.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from glimmer.api.fleet_parts import FleetModel, Name, one_of

_DURATION = re.compile(r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h)")
_UNIT_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """Seconds in a Go duration string (``-`` sign allowed); ValueError when malformed."""
    rest, sign = text, 1.0
    if rest[:1] in "+-" and rest:
        sign, rest = (-1.0 if rest[0] == "-" else 1.0), rest[1:]
    if rest == "0":
        return 0.0
    if not rest:
        raise ValueError(f"malformed duration {text!r}")
    total = 0.0
    while rest:
        m = _DURATION.match(rest)
        if m is None:
            raise ValueError(f"malformed duration {text!r}")
        total += float(m.group(1)) * _UNIT_S[m.group(2)]
        rest = rest[m.end() :]
    return sign * total


def _whole_minutes(text: str) -> str:
    try:
        seconds = parse_duration(text)
    except ValueError:
        seconds = -1.0
    if seconds <= 0 or seconds % 60 != 0:
        raise ValueError(f"durations must be positive whole multiples of 60 seconds (got {text!r})")
    return text


Minutes = Annotated[str, AfterValidator(_whole_minutes)]


class Project(FleetModel):
    """A project of a scheduler; ``gpuQuota`` caps the GPUs its workloads may hold."""

    name: Name
    department: str = ""
    partition: str = ""
    gpu_quota: int = 0

    @model_validator(mode="after")
    def _quota(self) -> Project:
        if self.gpu_quota < 0:
            raise ValueError("invalid project/quota/partition (negative quota)")
        return self


class Demand(FleetModel):
    """The utilisation envelope of a workload and how its memory follows demand."""

    utilization_base: float = 0.0
    utilization_amplitude: float = 0.0
    period: str = ""
    memory_reserved_fraction: float = 0.0
    memory_dynamic_fraction: float = 0.0
    requests_per_second_at_full_utilization: float = 0.0

    @model_validator(mode="after")
    def _bounds(self) -> Demand:
        base, amp = self.utilization_base, self.utilization_amplitude
        mem_r, mem_d = self.memory_reserved_fraction, self.memory_dynamic_fraction
        rps = self.requests_per_second_at_full_utilization
        values = (base, amp, mem_r, mem_d, rps)
        if (
            not all(math.isfinite(v) for v in values)
            or amp < 0
            or base - amp < 0
            or base + amp > 1
            or not 0 <= mem_r <= 1
            or not 0 <= mem_d <= 1
            or mem_r + mem_d > 1
            or rps < 0
        ):
            raise ValueError("demand envelope/memory accounting outside bounds")
        if self.period or amp != 0:
            try:
                seconds = parse_duration(self.period)
            except ValueError:
                seconds = 0.0
            if seconds <= 0:
                raise ValueError(
                    "demand period must be positive when supplied or amplitude nonzero"
                )
        return self

    def period_seconds(self) -> float:
        """The demand period in seconds (0 when omitted at zero amplitude)."""
        return parse_duration(self.period) if self.period else 0.0


class Worker(FleetModel):
    """Whole GPUs (by slot) of one node of a pool that a workload holds."""

    name: Name
    pool: Name
    node_ordinal: int
    gpu_slots: list[int]


Role = Literal["training", "batch", "inference"]


class Workload(FleetModel):
    """A recurring job: pending for a while, then running, once per cycle."""

    name: Name
    project: Name
    role: Annotated[
        Role, one_of("invalid/duplicate workload key/role", "training", "batch", "inference")
    ]
    priority: int = 0
    cycle: Minutes
    pending_for: Minutes
    running_min: Minutes
    running_max: Minutes
    namespace: str = ""
    container: str = ""
    demand: Demand = Demand()
    workers: list[Worker] = Field(default_factory=list)

    @model_validator(mode="after")
    def _fits(self) -> Workload:
        lo, hi = parse_duration(self.running_min), parse_duration(self.running_max)
        cycle, pending = parse_duration(self.cycle), parse_duration(self.pending_for)
        if lo > hi or pending + hi + 60 > cycle:
            raise ValueError("durations must fit cycle")
        if self.role != "inference" and self.demand.requests_per_second_at_full_utilization:
            raise ValueError("demand envelope/memory accounting outside bounds")
        if not self.workers:
            raise ValueError("workload requires workers")
        return self


class Scheduler(FleetModel):
    """A scheduler of record (Run:ai or Slurm) owning pools, projects and workloads."""

    name: Name
    kind: Annotated[
        Literal["runai", "slurm"],
        one_of("invalid/duplicate scheduler name or kind", "runai", "slurm"),
    ]
    pools: list[Name]
    projects: list[Project] = Field(default_factory=list)
    workloads: list[Workload] = Field(default_factory=list)

    @model_validator(mode="after")
    def _slurm_partition(self) -> Scheduler:
        if not self.pools or len(set(self.pools)) != len(self.pools):
            raise ValueError("duplicate/empty scheduler pools")
        if self.kind == "slurm" and any(not p.partition for p in self.projects):
            raise ValueError("invalid project/quota/partition (slurm needs a partition)")
        return self
