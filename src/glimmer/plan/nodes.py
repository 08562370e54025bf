"""What the planner knows of a node: the facts a backend reports when it lists its nodes.

The engine's backend (simulator, this host, Kubernetes, Slurm) returns these; target resolution
matches selectors against ``labels`` and admission reads nothing else. Schedulability and
annotations ride along for the engine (prior state, cordon stamps), not for the plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


def _frozen(mapping: Mapping[str, str]) -> Mapping[str, str]:
    # A read-only copy, so a NodeInfo handed around cannot be changed behind a reader's back.
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class NodeInfo:
    """One node as a backend sees it now."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    unschedulable: bool = False
    annotations: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "labels", _frozen(self.labels))
        object.__setattr__(self, "annotations", _frozen(self.annotations))

    def matches(self, selector: Mapping[str, str]) -> bool:
        """True when every ``key: value`` of ``selector`` is among the node's labels."""
        return all(self.labels.get(key) == value for key, value in selector.items())
