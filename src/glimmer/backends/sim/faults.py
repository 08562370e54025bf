"""Faults of the machinery (not of the hardware) the simulator can inject into executions: an
execution deleted or evicted mid-run, never scheduled, stuck pulling its image, hung, or whose
log cannot be read. Each names which executions it hits; unset fields match anything."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from glimmer.engine.backend import ExecutionSpec

FaultMode = Literal[
    "deleted", "evicted", "unschedulable", "image-pull", "hang", "log-unreadable", "early-exit"
]

INSUFFICIENT_GPU = "0/1 nodes are available: Insufficient nvidia.com/gpu"
EVICTED_MESSAGE = "The node was low on resource: memory."


@dataclass(frozen=True)
class ExecutionFault:
    """One machinery fault. ``after`` is seconds after the execution started (deleted, evicted,
    early-exit: the runner ends then, whatever its role or duration).
    ``message`` overrides the scheduler's (unschedulable) or kubelet's (image-pull) words."""

    mode: FaultMode
    node: str | None = None
    test: str | None = None
    attempt: int | None = None
    role: str | None = None
    after: float = 60.0
    message: str = ""

    def hits(self, spec: ExecutionSpec) -> bool:
        return (
            (self.node is None or self.node == spec.node)
            and (self.test is None or self.test == spec.test)
            and (self.attempt is None or self.attempt == spec.attempt)
            and (self.role is None or self.role == spec.role)
        )


def first_fault(
    faults: tuple[ExecutionFault, ...], spec: ExecutionSpec, modes: tuple[FaultMode, ...]
) -> ExecutionFault | None:
    for fault in faults:
        if fault.mode in modes and fault.hits(spec):
            return fault
    return None
