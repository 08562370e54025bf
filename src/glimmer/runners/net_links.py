"""Network links from sysfs: Ethernet/IPoIB NIC state and link-down counters
(``/sys/class/net``), and InfiniBand/RoCE ports with their error counters
(``/sys/class/infiniband``).

Only physical NICs count (an interface with a ``device`` link); ``lo``, veths, bridges and other
virtual interfaces are no NICs. A network namespace holding no physical NIC (a pod without
hostNetwork) is reported as absent with a reason, never as ``nicCount=0`` (§12 lesson 30).

Link-down events in the window are the growth of each NIC's ``carrier_down_count``, plus the
growth of ``link_downed`` on native InfiniBand ports (a RoCE port's netdev already counts its
carrier). A NIC that disappears mid-window counts one event. The node total is reported only
when every NIC answered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from glimmer.runners.hostpaths import read_int, read_text

# Width in bits of each IB PortCounters error counter (IBA PortCounters attribute): a counter at
# its maximum has stopped counting, so it says nothing about the window any more.
IB_COUNTER_BITS = {
    "symbol_error": 16,
    "link_error_recovery": 8,
    "link_downed": 8,
    "port_rcv_errors": 16,
    "port_rcv_remote_physical_errors": 16,
    "port_rcv_switch_relay_errors": 16,
    "port_xmit_discards": 16,
    "port_xmit_constraint_errors": 8,
    "port_rcv_constraint_errors": 8,
    "local_link_integrity_errors": 4,
    "excessive_buffer_overrun_errors": 4,
    "VL15_dropped": 16,
}


@dataclass(frozen=True)
class NicSnapshot:
    names: tuple[str, ...]  # physical NICs
    up: int
    carrier_down: dict[str, int | None]  # None: the counter could not be read


@dataclass(frozen=True)
class IbPort:
    name: str  # device/port
    active: bool
    link_layer: str
    counters: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class IbSnapshot:
    present: bool  # the infiniband class exists in this sysfs
    ports: tuple[IbPort, ...]


def read_nics(sysfs: Path) -> NicSnapshot:
    base = sysfs / "class" / "net"
    try:
        entries = sorted(base.iterdir())
    except OSError:
        return NicSnapshot((), 0, {})
    names = []
    up = 0
    counters: dict[str, int | None] = {}
    for entry in entries:
        if not (entry / "device").exists():
            continue  # virtual
        names.append(entry.name)
        if read_text(entry / "operstate") == "up":
            up += 1
        counters[entry.name] = read_int(entry / "carrier_down_count")
    return NicSnapshot(tuple(names), up, counters)


def read_ib(sysfs: Path) -> IbSnapshot:
    base = sysfs / "class" / "infiniband"
    if not base.is_dir():
        return IbSnapshot(False, ())
    ports = []
    for dev in sorted(base.iterdir()):
        ports_dir = dev / "ports"
        if not ports_dir.is_dir():
            continue
        for port in sorted(ports_dir.iterdir(), key=lambda p: p.name):
            state = read_text(port / "state") or ""
            counters = {}
            for name in IB_COUNTER_BITS:
                value = read_int(port / "counters" / name)
                if value is not None:
                    counters[name] = value
            ports.append(
                IbPort(
                    f"{dev.name}/{port.name}",
                    active="ACTIVE" in state.upper(),
                    link_layer=read_text(port / "link_layer") or "",
                    counters=counters,
                )
            )
    return IbSnapshot(True, tuple(ports))


def saturated(ports: tuple[IbPort, ...]) -> list[str]:
    """``device/port/counter`` for every error counter pinned at its maximum."""
    return [
        f"{p.name}/{name}"
        for p in ports
        for name, value in p.counters.items()
        if value >= (1 << IB_COUNTER_BITS[name]) - 1
    ]


def link_down_events(
    before: NicSnapshot, after: NicSnapshot, ib_before: IbSnapshot, ib_after: IbSnapshot
) -> int | None:
    """Link-down transitions during the window; None when some NIC's counter was unreadable
    (a total over the NICs that answered would understate)."""
    events = 0
    for name in before.names:
        start = before.carrier_down.get(name)
        if name not in after.carrier_down:
            events += 1  # the NIC vanished mid-window
            continue
        end = after.carrier_down[name]
        if start is None or end is None or end < start:
            return None
        events += end - start
    ib_end = {p.name: p for p in ib_after.ports}
    for port in ib_before.ports:
        if port.link_layer.lower() != "infiniband":
            continue
        later = ib_end.get(port.name)
        if later is None:
            events += 1
            continue
        start_v, end_v = port.counters.get("link_downed"), later.counters.get("link_downed")
        if start_v is None or end_v is None or end_v < start_v:
            return None
        events += end_v - start_v
    return events
