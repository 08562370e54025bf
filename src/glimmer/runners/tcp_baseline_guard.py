"""tcp-baseline's management-path guard (§9.13): never load the interface that carries the
default route.

The interface holding the default route is taken to be the management path (how the node
reaches its control plane); saturating it costs heartbeats, and the figure would measure
contention, not the link. So before anything is started the route to the peer is looked up in
``/proc/net/route`` (longest prefix, then lowest metric: what the kernel's main table does) and:

* a separate interface reaches the peer: run, over it;
* the only route is the default-route interface: Skip (a one-NIC node), but only once this is
  positively the node's own network namespace; otherwise Error (a pod network would read the
  same and hide a missing ``hostNetwork``);
* ``TCP_BASELINE_INTERFACE`` names the default-route interface, or an interface the peer is not
  routed through: Error (the name is an assertion, and it is false);
* no route table, no default route, no route to the peer: Error (not knowing which interface is
  the management one is no permission to find out by saturating it).
"""

from __future__ import annotations

import os
import socket
import struct
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Route:
    interface: str
    destination: int  # host byte order
    mask: int
    metric: int

    @property
    def is_default(self) -> bool:
        return self.destination == 0 and self.mask == 0

    @property
    def prefix(self) -> int:
        return bin(self.mask).count("1")

    def matches(self, address: int) -> bool:
        return address & self.mask == self.destination


def _le_hex(text: str) -> int:
    """/proc/net/route prints each address's network-order bytes as one native-endian hex
    number; back to bytes, then to an integer in address order."""
    raw = struct.pack("=I", int(text, 16))
    return int.from_bytes(raw, "big")


def read_routes(text: str) -> list[Route]:
    """The IPv4 main table from ``/proc/net/route`` text (header line skipped)."""
    routes: list[Route] = []
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 8:
            continue
        try:
            flags = int(fields[3], 16)
            route = Route(fields[0], _le_hex(fields[1]), _le_hex(fields[7]), int(fields[6]))
        except ValueError:
            continue
        if flags & 0x1:  # RTF_UP
            routes.append(route)
    return routes


def default_interfaces(routes: list[Route]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(r.interface for r in routes if r.is_default))


def ipv4(address: str) -> int:
    return int.from_bytes(socket.inet_aton(address), "big")


def route_to(routes: list[Route], address: str) -> str | None:
    """The interface the main table sends ``address`` out of; None when nothing matches."""
    target = ipv4(address)
    best = min(
        (r for r in routes if r.matches(target)),
        key=lambda r: (-r.prefix, r.metric),
        default=None,
    )
    return best.interface if best else None


def _same_file(a: Path, b: Path) -> bool:
    try:
        sa, sb = a.stat(), b.stat()
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _initial_pid_namespace(proc: Path) -> bool:
    """kthreadd (pid 2, parent 0) is visible only from the initial pid namespace, where pid 1
    is the host's init and its network namespace is the host's."""
    try:
        status = (proc / "2" / "status").read_text()
    except OSError:
        return False
    return "Name:\tkthreadd" in status and "PPid:\t0" in status


def net_namespace(proc: Path, sysfs: Path, interface: str, run_netns: Path) -> str | None:
    """What this network namespace positively is: ``host`` (pid 1's, seen from the initial pid
    namespace; or one that holds ``interface`` as a physical device), the name of a namespace
    this host's administrator created with ``ip netns`` (a host stand-in; never a CNI pod's
    ``cni-*``), or None when nothing establishes it."""
    own = proc / "self" / "ns" / "net"
    if _initial_pid_namespace(proc) and _same_file(own, proc / "1" / "ns" / "net"):
        return "host"
    if interface and (sysfs / "class" / "net" / interface / "device").exists():
        return "host"
    try:
        names = sorted(os.listdir(run_netns))
    except OSError:
        names = []
    for name in names:
        if not name.startswith("cni-") and _same_file(own, run_netns / name):
            return name
    return None


@dataclass(frozen=True)
class GuardDecision:
    """What the guard decided; ``refusal`` None means run over ``test_interface``."""

    test_interface: str | None
    mgmt_interfaces: tuple[str, ...]
    refusal: str | None = None
    skip: bool = False  # a refusal that is a fact about the node, not a fault


def decide_client(
    routes: list[Route], peer: str, named: str | None, netns: str | None
) -> GuardDecision:
    """The client's decision for the resolved peer address ``peer``."""
    mgmt = default_interfaces(routes)
    if not mgmt:
        return GuardDecision(None, mgmt, "no default route: cannot tell the management path")
    iface = route_to(routes, peer)
    if iface is None:
        return GuardDecision(None, mgmt, f"no route to the peer {peer}")
    if named and named in mgmt:
        why = f"TCP_BASELINE_INTERFACE names {named}, which carries the default route"
        return GuardDecision(iface, mgmt, why)
    if iface in mgmt:
        if netns is None:
            why = (
                f"the only route to {peer} is the default-route interface {iface} and this "
                "is not established to be the host network namespace (hostNetwork: true?)"
            )
            return GuardDecision(iface, mgmt, why)
        why = f"the only route to {peer} is the management interface {iface} (a one-NIC node)"
        return GuardDecision(iface, mgmt, why, skip=True)
    if named and named != iface:
        why = f"TCP_BASELINE_INTERFACE names {named} but the route to {peer} leaves by {iface}"
        return GuardDecision(iface, mgmt, why)
    return GuardDecision(iface, mgmt)


def decide_server(routes: list[Route], named: str | None) -> GuardDecision:
    """The server has no peer address to route towards yet, so the name stands on its own:
    required, known to the route table, and not the management path."""
    mgmt = default_interfaces(routes)
    if not mgmt:
        return GuardDecision(named, mgmt, "no default route: cannot tell the management path")
    if not named:
        return GuardDecision(None, mgmt, "TCP_BASELINE_INTERFACE is required on the server")
    if named in mgmt:
        why = f"TCP_BASELINE_INTERFACE names {named}, which carries the default route"
        return GuardDecision(named, mgmt, why)
    if all(r.interface != named for r in routes):
        return GuardDecision(named, mgmt, f"TCP_BASELINE_INTERFACE {named} holds no route")
    return GuardDecision(named, mgmt)
