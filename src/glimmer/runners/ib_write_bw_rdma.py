"""The RDMA side of the perftest kinds (§9.10, 9.12, 9.15): which devices the host has, which
one carries the route to the peer, which RoCE v2 GID index matches the routed local address,
and how large a run the locked-memory limit allows.

Everything is read from sysfs (``<sysfs>/class/infiniband/<dev>/ports/<n>/...``) under a root
the caller gives, so a fixture tree stands in for a host with a NIC this machine lacks:

* ``state`` (``4: ACTIVE``) and ``link_layer`` (``Ethernet`` for RoCE, ``InfiniBand``);
* ``gids/<i>`` and ``gid_attrs/types/<i>`` (``RoCE v2``) and ``gid_attrs/ndevs/<i>`` (the
  netdev a RoCE GID belongs to);
* ``<sysfs>/class/infiniband/<dev>/device/net/<netdev>``: the netdevs of the same PCI function
  (an IPoIB interface for InfiniBand).
"""

from __future__ import annotations

import ipaddress
import resource
from dataclasses import dataclass
from pathlib import Path

ACTIVE = "ACTIVE"
ROCE_V2 = "RoCE v2"
MIN_MESSAGE_BYTES = 65536  # below this the figure measures per-message overhead, not the link


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


@dataclass(frozen=True)
class Gid:
    index: int
    address: str  # the GID as sysfs prints it
    kind: str | None  # "RoCE v2", "IB/RoCE v1"
    netdev: str | None

    def ipv4(self) -> str | None:
        """The IPv4 address an IPv4-mapped GID (``::ffff:a.b.c.d``) carries."""
        try:
            mapped = ipaddress.IPv6Address(self.address).ipv4_mapped
        except ValueError:
            return None
        return str(mapped) if mapped else None


@dataclass(frozen=True)
class Port:
    device: str
    number: int
    state: str  # "ACTIVE", "DOWN", ...
    link_layer: str
    gids: tuple[Gid, ...]
    netdevs: tuple[str, ...]  # the netdevs this port's GIDs or PCI function name

    @property
    def active(self) -> bool:
        return self.state == ACTIVE


def _port(dev_dir: Path, number: int, function_netdevs: tuple[str, ...]) -> Port:
    port_dir = dev_dir / "ports" / str(number)
    state = (_read(port_dir / "state") or "").split(":")[-1].strip()
    gids: list[Gid] = []
    try:
        indices = sorted(int(p.name) for p in (port_dir / "gids").iterdir() if p.name.isdigit())
    except OSError:
        indices = []
    for i in indices:
        address = _read(port_dir / "gids" / str(i)) or ""
        if not address or set(address.replace(":", "")) == {"0"}:
            continue  # an empty slot of the table
        kind = _read(port_dir / "gid_attrs" / "types" / str(i))
        netdev = _read(port_dir / "gid_attrs" / "ndevs" / str(i))
        gids.append(Gid(i, address, kind, netdev or None))
    netdevs = tuple(dict.fromkeys([*(g.netdev for g in gids if g.netdev), *function_netdevs]))
    return Port(
        dev_dir.name, number, state, _read(port_dir / "link_layer") or "", tuple(gids), netdevs
    )


def discover(sysfs: Path) -> list[Port]:
    """Every port of every RDMA device under ``sysfs``; empty when the host has none."""
    root = sysfs / "class" / "infiniband"
    try:
        devices = sorted(root.iterdir())
    except OSError:
        return []
    ports: list[Port] = []
    for dev_dir in devices:
        try:
            function_netdevs = tuple(sorted(p.name for p in (dev_dir / "device" / "net").iterdir()))
        except OSError:
            function_netdevs = ()
        try:
            numbers = sorted(int(p.name) for p in (dev_dir / "ports").iterdir() if p.name.isdigit())
        except OSError:
            continue
        ports.extend(_port(dev_dir, n, function_netdevs) for n in numbers)
    return ports


@dataclass(frozen=True)
class Selection:
    port: Port
    gid_index: int | None  # None on InfiniBand: perftest uses the LID


class SelectionError(ValueError):
    """No port can carry the test to the peer; the message says why."""


def select(ports: list[Port], interface: str, local_ipv4: str) -> Selection:
    """The port that carries the route to the peer. On RoCE the RoCE v2 GID whose IPv4 is the
    routed local address names both the port and the GID index; otherwise (InfiniBand) the
    port whose netdev is ``interface``, the route's interface."""
    for port in ports:
        for gid in port.gids:
            if gid.kind == ROCE_V2 and gid.ipv4() == local_ipv4:
                _require_active(port)
                return Selection(port, gid.index)
    candidates = [p for p in ports if interface and interface in p.netdevs]
    if not candidates:
        raise SelectionError(
            f"no RDMA port holds {local_ipv4} or belongs to {interface or 'the route'} to the peer"
        )
    port = candidates[0]
    _require_active(port)
    if port.link_layer == "Ethernet":
        raise SelectionError(
            f"{port.device} port {port.number} has no RoCE v2 GID for {local_ipv4}"
        )
    return Selection(port, None)


def _require_active(port: Port) -> None:
    if not port.active:
        raise SelectionError(f"{port.device} port {port.number} is {port.state or 'unknown'}")


@dataclass(frozen=True)
class Fit:
    message_bytes: int
    qps: int
    note: str  # what was shrunk, empty when nothing was


def memlock_limit() -> int | None:
    """The soft RLIMIT_MEMLOCK in bytes; None when unlimited."""
    soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def fit_memlock(message_bytes: int, qps: int, limit: int | None) -> Fit | None:
    """Shrink the run to fit half the locked-memory limit (the rest is what the verbs stack
    pins for queues): the message size first (down to 64 KiB), then the QPs. The requirement
    is message x QPs x 2 (a send and a receive buffer each). None when nothing fits."""
    if limit is None:
        return Fit(message_bytes, qps, "")
    budget = limit // 2
    size, count = message_bytes, qps
    while size * count * 2 > budget and size // 2 >= MIN_MESSAGE_BYTES:
        size //= 2
    while size * count * 2 > budget and count > 1:
        count -= 1
    if size * count * 2 > budget:
        return None
    note = ""
    if (size, count) != (message_bytes, qps):
        note = (
            f"RLIMIT_MEMLOCK {limit} B: message {message_bytes} -> {size} B, QPs {qps} -> {count}"
        )
    return Fit(size, count, note)


def peer_memory_providers(sysfs: Path) -> list[str]:
    """Registered peer-memory providers (``nvidia_peermem`` registers ``nv_mem``)."""
    try:
        return sorted(p.name for p in (sysfs / "kernel" / "mm" / "memory_peers").iterdir())
    except OSError:
        return []
