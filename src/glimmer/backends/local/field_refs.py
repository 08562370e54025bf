"""``runner.env`` entries given by ``valueFrom`` on this host (specs/burnin.md §8.2).

The engine hands a substrate the environment with every ``valueFrom`` entry left out: only a
substrate knows what a field of its own is (a kubelet fills a pod's fields in). Here two have an
answer, the rules below; every other source (a Secret, a ConfigMap, a resourceFieldRef, any
other fieldRef) stays **unset**, never ``""``, since a runner tells an unset variable from an
empty one.

- ``fieldRef spec.nodeName``: the execution's node, the ``--node`` this host runs as.
- ``fieldRef status.hostIP``: this host's primary routable address, the IPv4 address of the
  interface the default route leaves by (lowest metric first), as a kubelet chooses a node's
  address. A host with no default route has no such address, and a runner asking for it is
  told so: the execution is an Error attempt naming the variable (:class:`FieldRefError`). It
  is judged when the execution is created, not when the run is planned: the plan is the
  substrate-neutral engine's, and this host's routes at the execution's start are what the
  runner would see.

Only a name whose last ``runner.env`` entry is a ``valueFrom`` and which the spec's environment
does not set is filled in: a later plain value, or a value a half's flags set, still wins.
:func:`unanswered` words §8.2's warning for each entry left unset, for a command to print
before it runs anything.
"""

from __future__ import annotations

import dataclasses
import fcntl
import ipaddress
import socket
import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glimmer.api.test import BurnInTestSpec
from glimmer.engine.backend import ExecutionSpec
from glimmer.plan.env import effective_env

ROUTE_TABLE = Path("/proc/net/route")
RTF_UP = 0x1
SIOCGIFADDR = 0x8915  # <linux/sockios.h>: an interface's primary IPv4 address
IFNAMSIZ = 16


class FieldRefError(Exception):
    """A ``valueFrom`` this host knows but cannot answer: the execution cannot run as asked."""


@dataclass(frozen=True)
class HostFacts:
    """What this host says of one execution; ``host_address`` is looked up only when asked."""

    node: str
    host_address: Callable[[], str | None]


@dataclass(frozen=True)
class Rule:
    """How a fieldPath is answered here, and why it may have no answer."""

    read: Callable[[HostFacts], str | None]
    missing: str


RULES: Mapping[str, Rule] = {
    "spec.nodeName": Rule(lambda facts: facts.node or None, "the execution names no node"),
    "status.hostIP": Rule(
        lambda facts: facts.host_address(),
        "this host has no default route, so it has no primary address to give",
    ),
}


def field_path(value_from: Mapping[str, Any] | None) -> str | None:
    """The ``fieldRef.fieldPath`` of a ``valueFrom``; None for any other source."""
    ref = (value_from or {}).get("fieldRef")
    path = ref.get("fieldPath") if isinstance(ref, Mapping) else None
    return path if isinstance(path, str) else None


def resolved(
    spec: ExecutionSpec, host_address: Callable[[], str | None] | None = None
) -> ExecutionSpec:
    """``spec`` with the ``valueFrom`` entries this host answers added to its environment;
    raises :class:`FieldRefError` naming the variable when one it knows has no answer.
    ``host_address`` defaults to :func:`primary_address` (looked up at the call: tests swap
    it)."""
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
    facts = HostFacts(spec.node, host_address or primary_address)
    added = []
    for name, path, rule in wanted:
        value = rule.read(facts)
        if value is None:
            raise FieldRefError(
                f"runner.env {name}: valueFrom fieldRef {path}: {rule.missing}; "
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


def unanswered(tests: Iterable[tuple[str, BurnInTestSpec]]) -> list[str]:
    """One line per ``runner.env`` entry of these (name, spec) tests that a runner will find
    unset here (§8.2: left unset and warned about); a later plain value of the name is no
    entry of this list."""
    lines = []
    answered = ", ".join(f"fieldRef {path}" for path in RULES)
    for test, spec in tests:
        runner = spec.runner
        for name, var in effective_env(runner.env or () if runner is not None else ()).items():
            asked = var.value is None and var.value_from is not None
            if asked and field_path(var.value_from) not in RULES:
                lines.append(
                    f"test {test}: runner.env {name} (valueFrom {source_of(var.value_from)}) "
                    f"is left unset on this host, which answers only {answered}"
                )
    return lines


def default_interface(table: str) -> str | None:
    """The interface of the default route of ``/proc/net/route``'s text (lowest metric)."""
    best: tuple[int, str] | None = None
    for line in table.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 8:
            continue
        iface, destination, _, flags, _, _, metric, mask = fields[:8]
        try:
            up, cost = int(flags, 16) & RTF_UP, int(metric)
        except ValueError:
            continue
        if destination == mask == "00000000" and up and (best is None or cost < best[0]):
            best = (cost, iface)
    return best[1] if best is not None else None


def interface_address(iface: str) -> str | None:
    """``iface``'s primary IPv4 address (None: it has none, or no such interface)."""
    request = struct.pack("256s", iface.encode()[: IFNAMSIZ - 1])
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            answer = fcntl.ioctl(s.fileno(), SIOCGIFADDR, request)
        except OSError:
            return None
    return socket.inet_ntoa(answer[20:24])  # struct ifreq: name, then sockaddr_in's address


def primary_address(
    table: Path = ROUTE_TABLE, address_of: Callable[[str], str | None] = interface_address
) -> str | None:
    """This host's primary routable address, or None when it has no default route (or the
    route's interface has no usable address)."""
    try:
        text = table.read_text()
    except OSError:
        return None  # not Linux, or no IPv4 routing at all
    iface = default_interface(text)
    address = address_of(iface) if iface is not None else None
    if address is None:
        return None
    parsed = ipaddress.ip_address(address)
    return None if parsed.is_loopback or parsed.is_unspecified else address
