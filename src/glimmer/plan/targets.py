"""Target resolution (§1.3, §2.1): which nodes a run puts under test, in which order.

``nodeNames`` is taken verbatim: order kept, duplicates kept (the Pair and Group checks of the
plan refuse duplicates with a message that names them; dropping them here would hide the typo).
Otherwise ``nodeSelector`` is matched against the backend's node list, in that list's order.
"""

from __future__ import annotations

from collections.abc import Sequence

from glimmer.api.target import TargetSelector
from glimmer.errors import GlimmerError
from glimmer.plan.nodes import NodeInfo

NOTHING_SELECTED = "target selects no nodes"


class TargetError(GlimmerError):
    """A target that resolves to no node: a configuration error of the run."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _render_selector(selector: dict[str, str]) -> str:
    return ",".join(f"{key}={value}" for key, value in sorted(selector.items()))


def select_nodes(selector: dict[str, str], nodes: Sequence[NodeInfo]) -> list[str]:
    """Names of the nodes whose labels carry every pair of ``selector``, in list order."""
    return [node.name for node in nodes if node.matches(selector)]


def resolve_targets(target: TargetSelector, nodes: Sequence[NodeInfo]) -> list[str]:
    """The run's target node names. Raises TargetError when the selector selects nothing."""
    if target.node_names:
        return list(target.node_names)
    if target.node_selector:
        matched = select_nodes(target.node_selector, nodes)
        if not matched:
            raise TargetError(
                f"target nodeSelector {_render_selector(target.node_selector)} matches no nodes"
            )
        return matched
    raise TargetError(NOTHING_SELECTED)


def unknown_node_names(target: TargetSelector, nodes: Sequence[NodeInfo]) -> list[str]:
    """The ``nodeNames`` of ``target`` that are not among ``nodes``, in the order given.

    The engine would only find them unschedulable after the scheduling grace; a caller that
    knows the whole node list (a CLI over a declared fleet) refuses them at once instead.
    """
    known = {node.name for node in nodes}
    return [name for name in dict.fromkeys(target.node_names or ()) if name not in known]


def resolve_quietly(target: TargetSelector, nodes: Sequence[NodeInfo]) -> list[str]:
    """The targets, or none when they do not resolve (another run's selector that selects
    nothing overlaps nothing)."""
    try:
        return resolve_targets(target, nodes)
    except TargetError:
        return []
