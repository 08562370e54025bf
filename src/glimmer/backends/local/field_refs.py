"""``runner.env`` entries given by ``valueFrom`` on this host (specs/burnin.md §8.2).

The rules are every substrate's (:mod:`glimmer.backends.common.field_refs`, re-exported here):
``fieldRef spec.nodeName`` is the execution's node, the ``--node`` this host runs as; every
source but the two answered stays **unset**, never ``""``. What is this host's own is the
address:

- ``fieldRef status.hostIP``: this host's primary routable address, the IPv4 address of the
  interface the default route leaves by (lowest metric first), as a kubelet chooses a node's
  address. A host with no default route has no such address, and a runner asking for it is
  told so: the execution is an Error attempt naming the variable (:class:`FieldRefError`). It
  is judged when the execution is created, not when the run is planned: the plan is the
  substrate-neutral engine's, and this host's routes at the execution's start are what the
  runner would see.
"""

from __future__ import annotations

import fcntl
import ipaddress
import socket
import struct
from collections.abc import Callable
from pathlib import Path

from glimmer.backends.common import field_refs as common
from glimmer.backends.common.field_refs import (
    RULES,
    FieldRefError,
    HostFacts,
    Rule,
    field_path,
    source_of,
    unanswered,
)
from glimmer.engine.backend import ExecutionSpec

__all__ = [
    "RULES",
    "FieldRefError",
    "HostFacts",
    "Rule",
    "default_interface",
    "field_path",
    "interface_address",
    "primary_address",
    "resolved",
    "source_of",
    "unanswered",
]

ROUTE_TABLE = Path("/proc/net/route")
RTF_UP = 0x1
SIOCGIFADDR = 0x8915  # <linux/sockios.h>: an interface's primary IPv4 address
IFNAMSIZ = 16
NO_DEFAULT_ROUTE = "this host has no default route, so it has no primary address to give"


def resolved(
    spec: ExecutionSpec, host_address: Callable[[], str | None] | None = None
) -> ExecutionSpec:
    """``spec`` with the ``valueFrom`` entries this host answers added to its environment;
    raises :class:`FieldRefError` naming the variable when one it knows has no answer.
    ``host_address`` defaults to :func:`primary_address` (looked up at the call: tests swap
    it)."""
    address = host_address or primary_address
    return common.resolved(spec, lambda: HostFacts(spec.node, address, NO_DEFAULT_ROUTE))


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
