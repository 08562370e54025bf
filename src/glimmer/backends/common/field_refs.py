"""``runner.env`` entries given by ``valueFrom``, answered by the substrate that runs the runner
(specs/burnin.md §8.2).

The engine hands a substrate the environment with every ``valueFrom`` entry left out: only a
substrate knows what a field of its own is (a kubelet fills a pod's fields in). Two have an
answer wherever a runner runs on a node, the rules below; every other source (a Secret, a
ConfigMap, a resourceFieldRef, any other fieldRef) stays **unset**, never ``""``, since a
runner tells an unset variable from an empty one.

- ``fieldRef spec.nodeName``: the execution's node.
- ``fieldRef status.hostIP``: the node's address, as its substrate knows it (this host's
  primary routable address on ``--backend local``, the node's ``NodeAddr`` on Slurm). A node
  with no such address makes the execution an Error attempt naming the variable
  (:class:`FieldRefError`), judged when the execution is created.

Only a name whose last ``runner.env`` entry is a ``valueFrom`` and which the spec's environment
does not set is filled in: a later plain value, or a value a half's flags set, still wins.
:func:`unanswered` words §8.2's warning for each entry left unset, for a command to print
before it runs anything.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from glimmer.api.test import BurnInTestSpec
from glimmer.engine.backend import ExecutionSpec
from glimmer.plan.env import effective_env


class FieldRefError(Exception):
    """A ``valueFrom`` the substrate knows but cannot answer: the execution cannot run as
    asked."""


@dataclass(frozen=True)
class HostFacts:
    """What a substrate says of one execution's node; ``host_address`` is looked up only when
    asked, and ``no_address`` says why it may have none."""

    node: str
    host_address: Callable[[], str | None]
    no_address: str = "the node has no address to give"


@dataclass(frozen=True)
class Rule:
    """How a fieldPath is answered, and why it may have no answer."""

    read: Callable[[HostFacts], str | None]
    missing: Callable[[HostFacts], str]


RULES: Mapping[str, Rule] = {
    "spec.nodeName": Rule(
        lambda facts: facts.node or None, lambda _: "the execution names no node"
    ),
    "status.hostIP": Rule(lambda facts: facts.host_address(), lambda facts: facts.no_address),
}


def field_path(value_from: Mapping[str, Any] | None) -> str | None:
    """The ``fieldRef.fieldPath`` of a ``valueFrom``; None for any other source."""
    ref = (value_from or {}).get("fieldRef")
    path = ref.get("fieldPath") if isinstance(ref, Mapping) else None
    return path if isinstance(path, str) else None


def resolved(spec: ExecutionSpec, facts: Callable[[], HostFacts]) -> ExecutionSpec:
    """``spec`` with the ``valueFrom`` entries the substrate answers added to its environment;
    raises :class:`FieldRefError` naming the variable when one it knows has no answer.
    ``facts`` is asked only when some entry needs an answer."""
    runner = spec.test_spec.runner
    given = {name for name, _ in spec.env}
    wanted = [
        (name, path, RULES[path])
        for name, var in effective_env(runner.env or () if runner is not None else ()).items()
        if var.value is None and name not in given
        if (path := field_path(var.value_from)) is not None and path in RULES
    ]
    if not wanted:
        return spec
    known = facts()
    added = []
    for name, path, rule in wanted:
        value = rule.read(known)
        if value is None:
            raise FieldRefError(
                f"runner.env {name}: valueFrom fieldRef {path}: {rule.missing(known)}; "
                f"set {name} by value to run it here"
            )
        added.append((name, value))
    return dataclasses.replace(spec, env=(*spec.env, *added))


def source_of(value_from: Mapping[str, Any] | None) -> str:
    """How a ``valueFrom`` names its source, for a message: ``fieldRef status.podIP``,
    ``secretKeyRef``…"""
    path = field_path(value_from)
    if path is not None:
        return f"fieldRef {path}"
    return ", ".join(sorted(value_from or {})) or "an empty valueFrom"


def unanswered(tests: Iterable[tuple[str, BurnInTestSpec]], where: str = "this host") -> list[str]:
    """One line per ``runner.env`` entry of these (name, spec) tests that a runner will find
    unset on ``where`` (§8.2: left unset and warned about); a later plain value of the name is
    no entry of this list."""
    lines = []
    answered = ", ".join(f"fieldRef {path}" for path in RULES)
    for test, spec in tests:
        runner = spec.runner
        for name, var in effective_env(runner.env or () if runner is not None else ()).items():
            asked = var.value is None and var.value_from is not None
            if asked and field_path(var.value_from) not in RULES:
                lines.append(
                    f"test {test}: runner.env {name} (valueFrom {source_of(var.value_from)}) "
                    f"is left unset on {where}, which answers only {answered}"
                )
    return lines
