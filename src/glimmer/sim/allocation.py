"""The allocation plan (specs/fleet.md §5): who holds which GPU in a given minute.

Pure and deterministic in (workloads, seed, minute, captured faults). Every workload cycles
pending → running → completed → pending with a seeded phase offset and a seeded running length
per cycle; candidates are admitted atomically by descending priority then key, under project
quotas and whole-GPU ownership. Faults then act in captured order: fatal faults make GPUs
unavailable and fail the workloads touching them, preemption storms exclude the lowest-priority
matching workloads, quota exhaustion shrinks a project's limit. A second admission gives the
final plan. Failure state is per minute: when a fault ends, the baseline returns.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from glimmer.fleet.identity import execution_id, gpu_hash
from glimmer.sim.arrays import IntArray
from glimmer.sim.faults import CapturedFault
from glimmer.sim.modes import MODE_BY_NAME, Effect
from glimmer.sim.physics import HELD, IDLE, UNAVAILABLE, Holding


class Phase(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    PREEMPTED = "preempted"


@dataclass(frozen=True)
class WorkloadSpec:
    """What allocation needs of one declared workload. Durations are whole minutes."""

    key: str  # gpuworkload:<scheduler>/<workload>
    scheduler_key: str
    project_key: str
    priority: int
    cycle_min: int
    pending_min: int
    running_min: int
    running_max: int
    gpus: tuple[int, ...]  # union of its workers' GPUs (indices), ascending
    workers: tuple[tuple[str, tuple[int, ...]], ...] = ()  # (worker key, GPU indices)


@dataclass(frozen=True)
class Schedule:
    """Every workload (sorted by key) and every project's declared GPU quota."""

    seed: str
    workloads: tuple[WorkloadSpec, ...]
    quotas: dict[str, int]
    n_gpus: int
    phase_offsets: tuple[int, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if not self.phase_offsets:
            offsets = tuple(
                gpu_hash(self.seed, "allocation_phase", w.key) % w.cycle_min for w in self.workloads
            )
            object.__setattr__(self, "phase_offsets", offsets)


@dataclass(frozen=True)
class WorkloadStatus:
    key: str
    execution_id: str
    phase: Phase
    cycle_ordinal: int
    gpus: tuple[int, ...]  # GPUs held (running only)
    victim_gpus: tuple[int, ...]
    retry_pending: bool
    cause_targets: tuple[str, ...]


@dataclass(frozen=True)
class AllocationPlan:
    """The plan at one minute. ``holding`` is the per-GPU view physics reads."""

    at: float  # Unix seconds of the instant asked for
    bucket: int
    holding: Holding
    workloads: tuple[WorkloadStatus, ...]
    faults: tuple[CapturedFault, ...]
    origin: object = field(repr=False, compare=False)  # what the plan was computed from

    def status(self, key: str) -> WorkloadStatus | None:
        return next((w for w in self.workloads if w.key == key), None)


def bucket_of(t: float) -> int:
    """The minute bucket of an instant: floor division, so −1 s is bucket −1."""
    return math.floor(t / 60.0)


GpuReach = Callable[[str, str], IntArray]  # (mode, target) -> GPU indices it reaches


@dataclass
class _Cycle:
    ordinal: int
    pos: int
    running: int


def _cycle(schedule: Schedule, i: int, bucket: int) -> _Cycle:
    w = schedule.workloads[i]
    c = w.cycle_min
    offset = schedule.phase_offsets[i]
    ordinal = (bucket + offset) // c
    pos = bucket + offset - ordinal * c
    span = w.running_max - w.running_min + 1
    running = (
        w.running_min + gpu_hash(schedule.seed, "allocation_duration", w.key, str(ordinal)) % span
    )
    return _Cycle(ordinal, pos, running)


def _admit(
    schedule: Schedule,
    order: Sequence[int],
    candidates: set[int],
    excluded: set[int],
    unavailable: np.ndarray,
    limits: dict[str, int],
) -> list[int]:
    """Walk the admission order; admit a workload whole, or not at all (§5 step 5)."""
    taken = unavailable.copy()
    usage: dict[str, int] = {}
    admitted: list[int] = []
    for i in order:
        if i not in candidates or i in excluded:
            continue
        w = schedule.workloads[i]
        size = len(w.gpus)
        used = usage.get(w.project_key, 0)
        # Quota first, then availability: the spec's order, which decides what a victim is.
        if used + size > limits.get(w.project_key, 0):
            continue
        idx = list(w.gpus)
        if taken[idx].any():
            continue
        taken[idx] = True
        usage[w.project_key] = used + size
        admitted.append(i)
    return admitted


def plan(
    schedule: Schedule,
    t: float,
    faults: Iterable[CapturedFault],
    reach: GpuReach,
    origin: object = None,
) -> AllocationPlan:
    """The allocation at instant ``t`` (Unix seconds) under the captured ``faults``."""
    bucket = bucket_of(t)
    faults = tuple(faults)
    n = len(schedule.workloads)
    cycles = [_cycle(schedule, i, bucket) for i in range(n)]
    phases = [Phase.PENDING] * n
    candidates: set[int] = set()
    for i, c in enumerate(cycles):
        pending = schedule.workloads[i].pending_min
        if pending <= c.pos < pending + c.running:
            candidates.add(i)
        elif c.pos == pending + c.running:
            phases[i] = Phase.COMPLETED
    order = sorted(
        range(n), key=lambda i: (-schedule.workloads[i].priority, schedule.workloads[i].key)
    )

    none_unavailable = np.zeros(schedule.n_gpus, dtype=np.bool_)
    baseline = _admit(schedule, order, candidates, set(), none_unavailable, dict(schedule.quotas))
    baseline_set = set(baseline)

    unavailable = none_unavailable.copy()
    limits = dict(schedule.quotas)
    excluded: set[int] = set()
    victims: dict[int, set[int]] = {}
    causes: dict[int, set[str]] = {}
    retry: set[int] = set()
    quota_faults: list[CapturedFault] = []

    def blame(i: int, target: str) -> None:
        victims.setdefault(i, set()).update(schedule.workloads[i].gpus)
        causes.setdefault(i, set()).add(target)

    for fault in faults:
        effect = MODE_BY_NAME[fault.mode].effect
        if effect is Effect.UNAVAILABLE:
            hit = reach(fault.mode, fault.target)
            unavailable[hit] = True
            for i in baseline:
                if unavailable[list(schedule.workloads[i].gpus)].any():
                    phases[i] = Phase.FAILED
                    retry.add(i)
                    blame(i, fault.target)
        elif effect is Effect.PREEMPTION:
            matching = [i for i in baseline if _matches(schedule.workloads[i], fault.target)]
            count = math.ceil(fault.intensity * len(matching))
            lowest = sorted(
                matching, key=lambda i: (schedule.workloads[i].priority, schedule.workloads[i].key)
            )
            for i in lowest[:count]:
                excluded.add(i)
                if phases[i] is not Phase.FAILED:
                    phases[i] = Phase.PREEMPTED
                blame(i, fault.target)
        elif effect is Effect.QUOTA:
            quota = schedule.quotas.get(fault.target, 0)
            shrunk = math.floor(quota * (1.0 - fault.intensity))
            limits[fault.target] = min(limits.get(fault.target, 0), shrunk)
            quota_faults.append(fault)

    final = _admit(schedule, order, candidates, excluded, unavailable, limits)
    final_set = set(final)
    for i in baseline_set - final_set - excluded:
        for fault in quota_faults:
            if schedule.workloads[i].project_key == fault.target:
                blame(i, fault.target)

    state = np.full(schedule.n_gpus, IDLE, dtype=np.int64)
    state[unavailable] = UNAVAILABLE
    owner = np.full(schedule.n_gpus, -1, dtype=np.int64)
    statuses = []
    for i, w in enumerate(schedule.workloads):
        held: tuple[int, ...] = ()
        if i in final_set:
            phases[i] = Phase.RUNNING
            held = w.gpus
            state[list(held)] = HELD
            owner[list(held)] = i
        statuses.append(
            WorkloadStatus(
                key=w.key,
                execution_id=execution_id(schedule.seed, w.key, cycles[i].ordinal),
                phase=phases[i],
                cycle_ordinal=cycles[i].ordinal,
                gpus=held,
                victim_gpus=tuple(sorted(victims.get(i, ()))),
                retry_pending=i in retry,
                cause_targets=tuple(sorted(causes.get(i, ()))),
            )
        )
    return AllocationPlan(
        at=t,
        bucket=bucket,
        holding=Holding(bucket=bucket, state=state, owner=owner),
        workloads=tuple(statuses),
        faults=faults,
        origin=origin,
    )


def _matches(w: WorkloadSpec, target: str) -> bool:
    return target in (w.key, w.project_key, w.scheduler_key)
