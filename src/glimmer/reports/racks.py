"""Where each node of a run stands: its rack from the fleet topology, else a name-prefix group.

The rack-and-node map draws one column per rack. A run on a declared fleet knows its racks
exactly; a run on anything else still reads better grouped by the host-name stem
(``gpu-a-01``, ``gpu-a-02`` → ``gpu-a``) than as one long column.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from glimmer.fleet.topology import Topology

_TRAILING_NUMBER = re.compile(r"[-_.]?\d+$")


@dataclass(frozen=True)
class Rack:
    """One column of the map: a rack (or a name group) and its nodes in slot order."""

    name: str
    nodes: tuple[str, ...]
    from_fleet: bool


def prefix_of(node: str) -> str:
    """The host-name stem a node is grouped under when no fleet knows it."""
    stem = _TRAILING_NUMBER.sub("", node)
    return stem or node


def racks_of(nodes: Sequence[str], fleet: Topology | None) -> tuple[Rack, ...]:
    """Columns for ``nodes``: fleet racks for the nodes the fleet knows (in slot order), name
    groups for the rest (in name order). Columns are ordered by name."""
    placed: dict[str, list[tuple[int, str]]] = {}
    loose: dict[str, list[str]] = {}
    index = fleet.node_index if fleet is not None else {}
    for node in nodes:
        at = index.get(node)
        if fleet is not None and at is not None:
            record = fleet.nodes[at]
            placed.setdefault(fleet.racks[record.rack].name, []).append((record.slot, node))
        else:
            loose.setdefault(prefix_of(node), []).append(node)
    racks = [
        Rack(name, tuple(n for _, n in sorted(members)), True) for name, members in placed.items()
    ]
    racks += [Rack(name, tuple(sorted(members)), False) for name, members in loose.items()]
    return tuple(sorted(racks, key=lambda r: (not r.from_fleet, r.name)))
