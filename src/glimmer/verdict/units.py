"""What one verdict is about, per scope: the node sets a planned test's results are judged on.

Over a run's targets, in order:

* a Node test gives one verdict per distinct target, in first-named order. A node named twice
  is one verdict: a result's identity is (test, first node), so a second unit on the same node
  could never get a result of its own;
* a Pair test gives one verdict about the link ``targets[0]`` (server) to ``targets[1]``
  (client);
* a Group test gives one verdict about the collective over every target, rank i on
  ``targets[i]``.

No targets, no verdicts. An unrecognised scope is judged as Node, as the engine runs it.

This is the rule; :mod:`glimmer.plan.units` enumerates a pinned plan's units with it for the
engine and its progress, and the reports (a layer below the plan) count with it directly.
It takes contract types only, so every layer from the plan down can read it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from glimmer.contract.vocab import Scope

PAIR_SIZE = 2  # a link has two ends: server, then client

Nodes = tuple[str, ...]


def unit_scope(scope: object) -> Scope:
    """The scope a test is run and judged at; an empty or unrecognised one is Node (a spec
    built without validation may carry the bare word)."""
    if scope == Scope.PAIR:
        return Scope.PAIR
    if scope == Scope.GROUP:
        return Scope.GROUP
    return Scope.NODE


def distinct(targets: Sequence[str]) -> Nodes:
    """The targets, each once, in first-named order."""
    return tuple(dict.fromkeys(targets))


def units_of(scope: object, targets: Sequence[str], unique: Nodes | None = None) -> list[Nodes]:
    """The node sets of one test's verdicts at ``scope`` over ``targets`` (``unique``: the
    targets' :func:`distinct` already at hand)."""
    if not targets:
        return []
    found = unit_scope(scope)
    if found is Scope.PAIR:
        return [tuple(targets[:PAIR_SIZE])]
    if found is Scope.GROUP:
        return [tuple(targets)]
    return [(node,) for node in (unique if unique is not None else distinct(targets))]


def unit_count(scope: object, targets: Sequence[str], unique: Nodes | None = None) -> int:
    """How many verdicts one test at ``scope`` gives over ``targets``, without listing them."""
    if not targets:
        return 0
    if unit_scope(scope) is Scope.NODE:
        return len(unique if unique is not None else distinct(targets))
    return 1


def count_units(scopes: Iterable[object], targets: Sequence[str]) -> int:
    """Verdicts of a plan whose tests have ``scopes``, over ``targets``: the results a finished
    run holds, synthetic ones aside."""
    unique = distinct(targets)
    return sum(unit_count(scope, targets, unique) for scope in scopes)
