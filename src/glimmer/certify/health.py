"""Node health monitoring (specs/certify.md §7.1) as pure functions over plain Node mappings.

A Job carries ``nodeHealthMonitor.cel.expression``, a CEL expression over ``node`` (the Node
object as a nested map, with the §7.1 defaults filled in); ``true`` means the node is unhealthy.
:func:`detector` compiles an expression once (cached per expression, as the controller caches
its programs), :func:`check_nodes` evaluates it on the nodes hosting a Job's pods, and
:func:`merge_failed_nodes` folds what it found into the Job's ``failedNodes``: additively —
a node that recovers is never removed — keyed by (name, reason), sorted by name then reason.

The expression subset and its refusals are in :mod:`health_parse`; evaluation in
:mod:`health_eval`. An expression that does not compile is the author's error
(:class:`HealthExpressionError`); one that fails on a node is that node's evaluation error,
reported beside the result and never fatal (§7.1).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from glimmer.certify.health_eval import HealthEvalError, evaluate
from glimmer.certify.health_parse import ROOT, Expr, HealthExpressionError, parse
from glimmer.certify.result import HARDWARE, FailedNode

__all__ = [
    "CORDON_EXPRESSION",
    "HARDWARE_MESSAGE",
    "MATCH_REASON",
    "Detector",
    "HealthCache",
    "HealthCheck",
    "HealthEvalError",
    "HealthExpressionError",
    "check_nodes",
    "detector",
    "effective_expression",
    "hardware_failed_message",
    "merge_failed_nodes",
    "node_view",
]

# The monitor every Job gets when its Workflow names none (§3.2): a cordoned node is unhealthy.
CORDON_EXPRESSION = "node.spec.unschedulable == true"
MATCH_REASON = "CELExpressionMatched"
HARDWARE_MESSAGE = "Hardware failure detected by node health check"

# §7.1 defaults: an expression may always read these, even on a Node that omits them.
_DEFAULTS: dict[str, dict[str, Any]] = {
    "metadata": {"labels": {}, "annotations": {}},
    "spec": {"taints": [], "unschedulable": False},
    "status": {"conditions": [], "addresses": [], "capacity": {}, "allocatable": {}},
}


def node_view(node: Mapping[str, Any]) -> dict[str, Any]:
    """The map an expression sees: ``node`` with ``metadata``, ``spec`` and ``status`` present
    and every §7.1 default in place (a missing or null field gets it). The three sections are
    copied and the rest shared: evaluation only reads, and copying a Node's image list and
    conditions on every check cost twenty times the evaluation (bench/cel_eval.py)."""
    out: dict[str, Any] = dict(node)
    for part, defaults in _DEFAULTS.items():
        section = out.get(part)
        section = dict(section) if isinstance(section, Mapping) else {}
        for key, empty in defaults.items():
            if section.get(key) is None:
                section[key] = copy.copy(empty)
        out[part] = section
    return out


def node_name(node: Mapping[str, Any]) -> str:
    metadata = node.get("metadata")
    return str(metadata.get("name", "")) if isinstance(metadata, Mapping) else ""


@dataclass(frozen=True)
class Detector:
    """A compiled health expression."""

    expression: str
    tree: Expr = field(repr=False, compare=False)

    def unhealthy(self, node: Mapping[str, Any]) -> bool:
        """Whether the expression holds for ``node``; HealthEvalError when it fails on it."""
        return self.unhealthy_view(node_view(node))

    def unhealthy_view(self, view: Mapping[str, Any]) -> bool:
        """:meth:`unhealthy` on a node already made a view (:func:`node_view`)."""
        got = evaluate(self.tree, {ROOT: view})
        if not isinstance(got, bool):  # the checker proved bool; a node cannot change that
            raise HealthEvalError(f"expression returned {type(got).__name__}, not bool")
        return got


@lru_cache(maxsize=64)
def detector(expression: str) -> Detector:
    """``expression`` compiled, once per distinct expression; HealthExpressionError when it
    is not a valid boolean expression of the supported subset."""
    return Detector(expression, parse(expression))


@dataclass
class HealthCache:
    """The two caches of §7.1, held by whoever evaluates (a controller keeps one for its
    lifetime; nothing here is module state): compiled detectors per expression, and node views
    per node uid, rebuilt when the node's resourceVersion moves on. A node without a uid or a
    resourceVersion (a hand-built one) is not cached."""

    detectors: dict[str, Detector] = field(default_factory=dict)
    views: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    max_detectors: int = 64

    def detector(self, expression: str) -> Detector:
        found = self.detectors.get(expression)
        if found is None:
            if len(self.detectors) >= self.max_detectors:
                self.detectors.pop(next(iter(self.detectors)))  # the oldest
            found = self.detectors[expression] = Detector(expression, parse(expression))
        return found

    def view(self, node: Mapping[str, Any]) -> dict[str, Any]:
        metadata = node.get("metadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        uid, version = str(metadata.get("uid") or ""), str(metadata.get("resourceVersion") or "")
        if not uid or not version:
            return node_view(node)
        held = self.views.get(uid)
        if held is not None and held[0] == version:
            return held[1]
        view = node_view(node)
        self.views[uid] = (version, view)
        return view

    def forget(self, uids: Iterable[str]) -> None:
        """Drop the views of nodes that are gone (a deleted Node's uid never comes back)."""
        for uid in uids:
            self.views.pop(uid, None)


@dataclass(frozen=True)
class HealthCheck:
    """One pass over a Job's nodes: the unhealthy ones (reason CELExpressionMatched) and the
    nodes whose evaluation failed, with why."""

    unhealthy: tuple[str, ...] = ()
    errors: tuple[tuple[str, str], ...] = ()


def check_nodes(
    expression: str, nodes: Iterable[Mapping[str, Any]], cache: HealthCache | None = None
) -> HealthCheck:
    """Evaluate ``expression`` on every node; names sorted. An evaluation error on one node is
    recorded and the others are still judged (§7.1: logged, not fatal). With ``cache`` the
    detector and the node views come from (and go into) it."""
    found = cache.detector(expression) if cache is not None else detector(expression)
    bad: list[str] = []
    errors: list[tuple[str, str]] = []
    for node in nodes:
        name = node_name(node)
        try:
            view = cache.view(node) if cache is not None else node_view(node)
            if found.unhealthy_view(view):
                bad.append(name)
        except HealthEvalError as e:
            errors.append((name, str(e)))
    return HealthCheck(tuple(sorted(bad)), tuple(sorted(errors)))


def merge_failed_nodes(
    existing: Sequence[FailedNode], unhealthy: Iterable[str]
) -> tuple[list[FailedNode], list[FailedNode]]:
    """``existing`` with a HardwareFailureDetected entry for every unhealthy node, and the
    entries that are new. Nothing is removed (a recovered node stays failed); a (name, reason)
    pair appears once; the list is sorted by name then reason."""
    by_key = {(f.name, f.reason): f for f in existing}
    added: list[FailedNode] = []
    for name in sorted(set(unhealthy)):
        if (name, HARDWARE) not in by_key:
            entry = FailedNode(name, HARDWARE, HARDWARE_MESSAGE)
            by_key[(name, HARDWARE)] = entry
            added.append(entry)
    return [by_key[k] for k in sorted(by_key)], added


def hardware_failed_message(failed: Iterable[FailedNode]) -> str:
    """The HardwareFailed condition's message over the hardware failures, names sorted and
    printed the way the original engine printed a Go string slice (``[a b]``)."""
    names = sorted({f.name for f in failed if f.reason == HARDWARE})
    return f"Hardware failure detected on node(s): [{' '.join(names)}]"


def effective_expression(expression: str | None, include_unschedulable: bool) -> str | None:
    """The monitor a Job runs (§3.2): none given → the cordon check; a target that keeps
    cordoned nodes on purpose drops exactly that check, since it would fail every one of them."""
    chosen = CORDON_EXPRESSION if expression is None else expression
    if include_unschedulable and chosen.strip() == CORDON_EXPRESSION:
        return None
    return chosen
