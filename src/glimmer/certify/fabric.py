"""The backend fabric a cluster declares through its nodes' labels (specs/certify.md §7.5).

A network-path group without thresholds of its own must reach a share of what its NICs should
carry; the simulator knows the ports from the topology, a cluster knows them only if an
inventory says so. Each node declares its backend rails (:data:`BACKEND_RAILS_LABEL`: ports on
rails 0..n-1, as on a rail-optimised fabric) and its slowest backend port
(:data:`BACKEND_GBPS_LABEL`, Gb/s). A group's fabric is then what the simulator's substrate
computes from the ports themselves: the rails every member has (the fewest, since every node's
rails start at 0) and the slowest port among the members.

A group with a member that declares nothing has no expectation (None), as a cluster without
the labels has had all along; a declared value that is not a number is refused, naming the
node and the label, rather than read as no declaration (a typo would silently drop the check).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from glimmer.certify.grouping import BACKEND_GBPS_LABEL, BACKEND_RAILS_LABEL, NodeInfo
from glimmer.certify.substrate import Fabric
from glimmer.errors import InputError, Location


def fabric_labels(rails: int, slowest_gbps: float) -> dict[str, str]:
    """The labels that declare a node's backend fabric (what an inventory, or the simulator's
    nodes, write); none for a node without backend ports."""
    if rails < 1:
        return {}
    speed = int(slowest_gbps) if float(slowest_gbps).is_integer() else slowest_gbps
    return {BACKEND_RAILS_LABEL: str(rails), BACKEND_GBPS_LABEL: str(speed)}


def fabric_from_labels(nodes: Sequence[NodeInfo]) -> Fabric | None:
    """The fabric ``nodes`` share by their labels; None when a node declares none (or no
    backend rail), or when there are no nodes."""
    declared = [_declared(n) for n in nodes]
    if not declared or any(d is None for d in declared):
        return None
    rails = min(d[0] for d in declared if d is not None)
    if rails < 1:
        return None
    return Fabric(rails, min(d[1] for d in declared if d is not None))


def fabric_over(nodes: Sequence[NodeInfo]) -> Callable[[tuple[str, ...]], Fabric | None]:
    """A substrate's ``fabric(names)`` over the labels of ``nodes`` (a Workflow's discovered
    nodes); a name not among them declares nothing."""
    by_name: Mapping[str, NodeInfo] = {n.name: n for n in nodes}

    def fabric(names: tuple[str, ...]) -> Fabric | None:
        found = [by_name.get(name) for name in names]
        if any(n is None for n in found):
            return None
        return fabric_from_labels([n for n in found if n is not None])

    return fabric


def _declared(node: NodeInfo) -> tuple[int, float] | None:
    rails_text = node.labels.get(BACKEND_RAILS_LABEL)
    gbps_text = node.labels.get(BACKEND_GBPS_LABEL)
    if rails_text is None or gbps_text is None:
        return None
    try:
        rails = int(rails_text)
    except ValueError:
        rails = -1
    if rails < 0:
        raise _refused(node, BACKEND_RAILS_LABEL, rails_text, "a whole number of rails")
    try:
        gbps = float(gbps_text)
    except ValueError:
        gbps = math.nan
    if not math.isfinite(gbps) or gbps <= 0:
        raise _refused(node, BACKEND_GBPS_LABEL, gbps_text, "a port speed in Gb/s above 0")
    return rails, gbps


def _refused(node: NodeInfo, label: str, value: str, wanted: str) -> InputError:
    return InputError(
        f"label {label} is {value!r}, not {wanted}",
        Location(obj=f"Node/{node.name}", field=f"metadata.labels[{label}]"),
    )
