"""The vocabulary of adaptive fault isolation (specs/certify.md §7.4): a probe (one group test),
its outcome, the oracle that runs probes, and the diagnosis it ends with.

The oracle is the only thing that differs between the simulator and a cluster: on the simulator
it runs the category over the fleet and judges the parsed log; on a cluster it would launch one
Job per probe and read its measurement. Isolation itself never knows which.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum


class Stage(StrEnum):
    """The stages of §7.4, in the order they run."""

    SCREEN = "intra-screening"
    RETEST = "intra-screening-no-nvl"  # each domain again, NVLink off: the NICs carry it
    CROSS_RACK = "inter-screening"  # one healthy representative per domain
    BISECT = "bisection"
    PROBE = "cross-boundary"  # both halves pass under a failed parent
    CONFIRM = "confirmation"


@dataclass(frozen=True)
class Probe:
    """One group to test, as one job."""

    name: str
    nodes: tuple[str, ...]
    stage: Stage
    nvlink: bool = True  # NCCL_MNNVL_ENABLE for this job


@dataclass(frozen=True)
class Outcome:
    """What a probe's job showed: pass or fail, the measured value and, on failure, why."""

    passed: bool
    value: float | None = None
    reason: str = ""


Oracle = Callable[[Probe], Outcome]


@dataclass(frozen=True)
class Accusation:
    """A node confirmed faulty, with the evidence that convicted it."""

    node: str
    reason: str
    trail: tuple[str, ...] = ()  # the failing probes that led to it, first to last


@dataclass(frozen=True)
class InfrastructureFault:
    """Both halves pass alone but fail together: the fault is between them (a link, a leaf),
    not in a node."""

    domain: str
    group_a: tuple[str, ...]
    group_b: tuple[str, ...]
    stage: Stage


@dataclass(frozen=True)
class Tested:
    """One probe and its outcome, in the round it ran."""

    round: int
    probe: Probe
    outcome: Outcome


@dataclass
class Diagnosis:
    """Where isolation ended: who is faulty, who is healthy, and what it cost."""

    faulty: list[Accusation] = field(default_factory=list)
    healthy: list[str] = field(default_factory=list)
    infrastructure: list[InfrastructureFault] = field(default_factory=list)
    history: list[Tested] = field(default_factory=list)
    rounds: int = 0  # rounds of concurrent jobs (no two jobs of a round share a node)

    @property
    def tests(self) -> int:
        """Jobs run in all."""
        return len(self.history)

    @property
    def faulty_nodes(self) -> list[str]:
        return sorted(a.node for a in self.faulty)

    @property
    def message(self) -> str:
        """The Workflow's closing message (§7.4 step 7)."""
        if self.faulty:
            return f"Diagnosis complete: {len(self.faulty)} faulty nodes confirmed"
        if self.infrastructure:
            return f"Diagnosis complete: {len(self.infrastructure)} infrastructure faults detected"
        return "All domains healthy, no faults detected"
