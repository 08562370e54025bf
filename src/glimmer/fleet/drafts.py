"""Intermediate facts of a node while the topology is being built (before records are frozen)."""

from __future__ import annotations

from dataclasses import dataclass, field

from glimmer.api.fleet import NodeOverride, Pool


@dataclass(slots=True)
class NodeDraft:
    """Everything known about one node before its NICs and domain are settled."""

    pool_pos: int  # declaration index of the pool (for error paths)
    pool: Pool
    ordinal: int
    hostname: str
    rack: int  # index into the canonical rack list
    site: str
    rack_name: str
    slot: int
    height: int
    override: NodeOverride | None
    index: int = -1  # position in the key-sorted node list
    gpu_start: int = -1
    domain: int = -1
    tray_key: str = ""
    tray_id: str = ""
    ip: str = ""
    nic_names: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"node:{self.hostname}"

    @property
    def path(self) -> str:
        """Where this node's facts are declared (its override if any, else its pool)."""
        return f"spec.pools[{self.pool_pos}]"
