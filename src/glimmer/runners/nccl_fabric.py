"""What nccl checks and sets about the fabric before and after a Pair or Group rendezvous.

* **memlock** (checked before the rendezvous): NCCL registers its buffers with the RDMA device
  and cannot shrink them to fit a small ``RLIMIT_MEMLOCK``; it would fail mid-run or be talked
  into TCP. Below ``BURNIN_NCCL_MIN_MEMLOCK_MIB`` (default: unlimited) the rank refuses, exit 3.
* **pinning**: ``NCCL_SOCKET_IFNAME`` is the interface of the route to the peer and
  ``NCCL_IB_HCA`` the RDMA device behind that interface (``<dev>:<port>``); a variable the user
  set is never replaced. ``NCCL_IB_DISABLE`` is never set here.
* **no silent TCP**: NCCL's INIT/NET log (``NCCL_DEBUG_FILE``) says which network it chose; on a
  host with RDMA devices a choice of plain sockets, unless the user disabled IB themselves, is
  an Error rather than a slow figure passed off as the fabric's. The same log names the
  transport of a Node-scope collective (nvlink | p2p | shm | net, best effort).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import resource
import socket
import struct
from collections.abc import Mapping
from pathlib import Path

MIN_MEMLOCK_MIB = "BURNIN_NCCL_MIN_MEMLOCK_MIB"
SIOCGIFADDR = 0x8915


def memlock_shortfall(min_mib: int | None) -> str | None:
    """Why the memlock limit is too small for NCCL, or None. ``min_mib`` None: unlimited."""
    soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    if soft == resource.RLIM_INFINITY:
        return None
    have = f"{soft // 1024} KiB"
    if min_mib is None:
        return f"memlock limit is {have}, NCCL needs unlimited (ulimit -l unlimited)"
    if soft < min_mib * 1024 * 1024:
        return f"memlock limit is {have}, below the {min_mib} MiB {MIN_MEMLOCK_MIB} asks"
    return None


def _interface_addresses() -> dict[str, str]:
    found: dict[str, str] = {}
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _, name in socket.if_nameindex():
            with contextlib.suppress(OSError):
                packed = struct.pack("256s", name.encode()[:15])
                addr = fcntl.ioctl(s.fileno(), SIOCGIFADDR, packed)[20:24]
                found[name] = socket.inet_ntoa(addr)
    return found


def route_interface(peer: str) -> str | None:
    """The local interface the kernel routes ``peer`` through (no packet is sent)."""
    try:
        address = socket.gethostbyname(peer)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((address, 9))
            local = s.getsockname()[0]
    except OSError:
        return None
    for name, addr in _interface_addresses().items():
        if addr == local:
            return name
    return None


def rdma_devices(sysfs: Path) -> list[str]:
    root = sysfs / "class/infiniband"
    try:
        return sorted(p.name for p in root.iterdir())
    except OSError:
        return []


def hca_of(interface: str, sysfs: Path) -> str | None:
    """``<dev>:<port>`` of the RDMA device whose netdev is ``interface`` (RoCE, IPoIB)."""
    for dev in rdma_devices(sysfs):
        if (sysfs / "class/infiniband" / dev / "device/net" / interface).exists():
            ports = sorted((sysfs / "class/infiniband" / dev / "ports").glob("*"))
            return f"{dev}:{ports[0].name if ports else 1}"
    return None


def pinned_env(environ: Mapping[str, str], peer: str | None, sysfs: Path) -> dict[str, str]:
    """The NCCL variables to add for this rank (the user's own always win)."""
    add: dict[str, str] = {}
    interface = route_interface(peer) if peer else None
    if interface and "NCCL_SOCKET_IFNAME" not in environ:
        add["NCCL_SOCKET_IFNAME"] = interface
    hca = hca_of(interface, sysfs) if interface else None
    if hca and "NCCL_IB_HCA" not in environ:
        add["NCCL_IB_HCA"] = hca
    return add


def debug_env(environ: Mapping[str, str], log_dir: Path) -> dict[str, str]:
    """NCCL's INIT and NET lines into files this rank reads back (unless the user routes
    NCCL's log elsewhere)."""
    if "NCCL_DEBUG_FILE" in environ:
        return {}
    return {
        "NCCL_DEBUG": environ.get("NCCL_DEBUG", "INFO"),
        "NCCL_DEBUG_SUBSYS": environ.get("NCCL_DEBUG_SUBSYS", "INIT,NET"),
        "NCCL_DEBUG_FILE": str(log_dir / "nccl.%h.%p.log"),
    }


def read_logs(log_dir: Path) -> str:
    parts = []
    for path in sorted(log_dir.glob("nccl.*.log")):
        with contextlib.suppress(OSError):
            parts.append(path.read_text(errors="replace"))
    return "\n".join(parts)


def chosen_network(log: str) -> str | None:
    """``IB`` or ``Socket`` (NCCL's "Using network X"), None when the log does not say."""
    found = re.search(r"Using network (\w+)", log)
    return found.group(1) if found else None


def silent_tcp(log: str, environ: Mapping[str, str], sysfs: Path) -> str | None:
    """Why the collective ran over plain TCP where RDMA was there to use, or None."""
    if chosen_network(log) != "Socket" or environ.get("NCCL_IB_DISABLE", "0") not in ("", "0"):
        return None
    devices = rdma_devices(sysfs)
    if not devices:
        return None
    return (
        f"NCCL chose TCP sockets although RDMA devices are present ({', '.join(devices)}): "
        "refusing a silent fallback (set NCCL_IB_DISABLE=1 to measure TCP on purpose)"
    )


def transport(log: str) -> str | None:
    """The Node-scope transport NCCL reported, best effort."""
    if "NVLS" in log or "via P2P/NVL" in log:
        return "nvlink"
    if "via P2P" in log:
        return "p2p"
    if "via SHM" in log:
        return "shm"
    if "via NET" in log:
        return "net"
    return None


def environ_with(extra: Mapping[str, str]) -> None:
    """Put ``extra`` into this process's environment, where NCCL reads it at init."""
    for key, value in extra.items():
        os.environ.setdefault(key, value)
