"""The Backend protocol every substrate implements, re-exported from the engine layer, plus
helpers substrates share."""

from __future__ import annotations

from collections.abc import Mapping

from glimmer.engine.backend import (
    Backend,
    BackendError,
    Conflict,
    Delivery,
    ExecPhase,
    Execution,
    ExecutionIndex,
    ExecutionSet,
    ExecutionSpec,
    LogUnavailable,
    Mount,
    NodeView,
    NotFound,
    Privileges,
    Rendezvous,
    Resources,
    Seat,
)

__all__ = [
    "Backend",
    "BackendError",
    "Conflict",
    "Delivery",
    "ExecPhase",
    "Execution",
    "ExecutionIndex",
    "ExecutionSet",
    "ExecutionSpec",
    "LogUnavailable",
    "Mount",
    "NodeView",
    "NotFound",
    "Privileges",
    "Rendezvous",
    "Resources",
    "Seat",
    "apply_annotations",
    "selector_matches",
]


def selector_matches(labels: Mapping[str, str], selector: Mapping[str, str] | None) -> bool:
    """True when every key of ``selector`` is a label with that value (None matches all)."""
    return not selector or all(labels.get(k) == v for k, v in selector.items())


def apply_annotations(
    current: Mapping[str, str] | None, changes: Mapping[str, str | None] | None
) -> dict[str, str]:
    """``current`` with ``changes`` applied: a None value deletes the key."""
    out = dict(current or {})
    for key, value in (changes or {}).items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def updated_node(
    node: NodeView,
    unschedulable: bool | None = None,
    annotations: Mapping[str, str | None] | None = None,
) -> NodeView:
    """``node`` after one ``update_node``: schedulability set unless None, annotations applied
    (a None value deletes the key), both in the same new view.

    What :func:`dataclasses.replace` makes, copied field by field as the simulator copies its
    views (a cordon and a release per unit): ``NodeView`` is a plain frozen dataclass, no
    ``__post_init__`` and no slots, so its fields are its ``__dict__``."""
    new = object.__new__(type(node))
    fields = new.__dict__
    fields.update(node.__dict__)
    fields["unschedulable"] = node.unschedulable if unschedulable is None else unschedulable
    fields["annotations"] = apply_annotations(node.annotations, annotations)
    return new
