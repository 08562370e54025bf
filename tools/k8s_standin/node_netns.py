"""Where a stand-in node's pods run: its own network namespace, so that the pods of a Pair or
Group reach each other by the rendezvous Service's name at their nodes' own addresses.

Layout (as tests/tools/slurm_cluster.sh builds its cluster): a hub namespace ``<prefix>-hub``
holds a bridge with the subnet's first address; every node is a namespace ``<prefix>-<node>``
whose ``eth0`` (a veth whose peer is on the bridge) has the node's address. Each node also has a
management pair (``mgmt0``/``mgmt1``, both ends inside it) holding its default route, so
tcp-baseline's default-route guard (§9.13) lets the fabric, ``eth0``, be measured. Nothing is
added to the machine's own namespace: no address, no route, no bridge — so two clusters never
collide on a subnet, and deleting the namespaces removes every interface.

Names carry the creating process's pid (``gk<pid>x<serial>``): a cluster whose process died
without tearing down (a SIGKILLed test) is found by that pid being gone, and removed by the next
one (:func:`reap_stale`). Without root there are no namespaces: :class:`NetnsNetwork` refuses,
naming why, and :class:`HostNetwork` runs every node's pods in this machine's namespace (no
rendezvous by name there).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ipaddress
import itertools
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

NETNS_RUN = Path("/run/netns")
NETNS_ETC = Path("/etc/netns")
DEFAULT_SPACE = ipaddress.IPv4Network("10.201.0.0/16")  # /24s are carved from it
_STALE = re.compile(r"^(gk(\d+)x\d+)-")
_CLONE_NEWNET = 0x40000000
_serial = itertools.count()


class NetworkUnavailable(RuntimeError):
    """The namespaces cannot be made here (not root, no ``ip``, or ``ip`` refused)."""


class NodeNetworks(Protocol):
    """Where each node's pods run and how they are reached."""

    def address(self, node: str) -> str: ...
    def wrap(self, node: str) -> list[str]: ...
    def hosts_path(self, node: str) -> Path | None: ...
    async def connect(self, node: str, host: str, port: int, timeout: float) -> bool: ...
    def down(self) -> None: ...


async def _tcp(host: str, port: int, timeout: float) -> bool:
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except (OSError, TimeoutError):
        return False
    writer.close()
    return True


class HostNetwork:
    """Every node's pods in this machine's own namespace at 127.0.0.1: no root needed, no
    per-node address, no hosts file (a rendezvous by name does not resolve here)."""

    def __init__(self, nodes: Sequence[str]) -> None:
        self.nodes = list(nodes)

    def address(self, node: str) -> str:
        return "127.0.0.1"

    def wrap(self, node: str) -> list[str]:
        return []

    def hosts_path(self, node: str) -> Path | None:
        return None

    async def connect(self, node: str, host: str, port: int, timeout: float) -> bool:
        return await _tcp(host, port, timeout)

    def down(self) -> None:
        return None


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise NetworkUnavailable(f"`ip {' '.join(args)}` was refused: {done.stderr.strip()}")


def namespaces() -> list[str]:
    """Every named network namespace on this machine."""
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    return [line.split()[0] for line in done.stdout.splitlines() if line.strip()]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_namespace(name: str) -> None:
    """Kill whatever still runs in namespace ``name``, then delete it and its /etc/netns."""
    done = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True)
    for pid in done.stdout.split():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)
    subprocess.run(["ip", "netns", "delete", name], capture_output=True, check=False)
    shutil.rmtree(NETNS_ETC / name, ignore_errors=True)


def remove_prefix(prefix: str) -> list[str]:
    """Remove every namespace named ``<prefix>-...``; the names removed."""
    gone = [n for n in namespaces() if n.startswith(f"{prefix}-")]
    for name in gone:
        remove_namespace(name)
    return gone


def reap_stale() -> list[str]:
    """Remove the namespaces of stand-in clusters whose creating process is gone."""
    dead: set[str] = set()
    for name in namespaces():
        m = _STALE.match(name)
        if m and not _pid_alive(int(m.group(2))):
            dead.add(m.group(1))
    return [n for prefix in sorted(dead) for n in remove_prefix(prefix)]


def _root_networks() -> list[ipaddress.IPv4Network]:
    done = subprocess.run(["ip", "-4", "-br", "addr"], capture_output=True, text=True)
    nets: list[ipaddress.IPv4Network] = []
    for word in done.stdout.split():
        if "/" in word:
            try:
                nets.append(ipaddress.IPv4Interface(word).network)
            except ValueError:
                continue
    return nets


def _pick_subnet(prefix: str) -> ipaddress.IPv4Network:
    """A /24 of :data:`DEFAULT_SPACE` chosen by the prefix, skipping any this machine's own
    namespace already routes (the cluster would still work — its subnet lives only in its own
    namespaces — but an address seen twice misleads whoever reads a log)."""
    taken = _root_networks()
    subnets = list(DEFAULT_SPACE.subnets(new_prefix=24))
    start = sum(prefix.encode()) * 31 % len(subnets)
    for i in range(len(subnets)):
        net = subnets[(start + i) % len(subnets)]
        if not any(net.overlaps(t) for t in taken):
            return net
    raise NetworkUnavailable(f"no free /24 left in {DEFAULT_SPACE}")


def _connect_in(ns_path: Path, host: str, port: int, timeout: float) -> bool:
    """Connect from inside a network namespace: setns(2) changes only the calling thread's
    namespace, so it is done on a thread of its own that ends with the probe."""
    result = [False]

    def probe() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(ns_path, os.O_RDONLY)
        try:
            if libc.setns(fd, _CLONE_NEWNET) != 0:
                return
        finally:
            os.close(fd)
        try:
            with socket.create_connection((host, port), timeout=timeout):
                result[0] = True
        except OSError:
            pass

    thread = threading.Thread(target=probe, name=f"probe-{ns_path.name}", daemon=True)
    thread.start()
    thread.join(timeout + 5)
    return result[0]


class NetnsNetwork:
    """One namespace per node behind a hub's bridge (see the module's docstring)."""

    def __init__(
        self, nodes: Sequence[str], *, prefix: str | None = None, subnet: str | None = None
    ) -> None:
        if os.geteuid() != 0:
            raise NetworkUnavailable(
                "the stand-in kubelet's per-node network namespaces need root (`ip netns add`);"
                " CI runs as root. Without root, network='host' runs every node's pods in this"
                " machine's namespace, with no rendezvous by Service name"
            )
        if shutil.which("ip") is None:
            raise NetworkUnavailable("the stand-in kubelet's network namespaces need `ip`")
        reap_stale()
        self.nodes = list(nodes)
        self.prefix = prefix or self._free_prefix()
        self.subnet = ipaddress.IPv4Network(subnet) if subnet else _pick_subnet(self.prefix)
        hosts = list(self.subnet.hosts())
        if len(hosts) < len(self.nodes) + 1:
            raise NetworkUnavailable(f"{self.subnet} is too small for {len(self.nodes)} nodes")
        self.bridge_address = str(hosts[0])
        self._addresses = {n: str(hosts[i + 1]) for i, n in enumerate(self.nodes)}
        self._made: list[str] = []
        try:
            self._up()
        except BaseException:
            self.down()
            raise

    @staticmethod
    def _free_prefix() -> str:
        existing = namespaces()
        while True:
            prefix = f"gk{os.getpid()}x{next(_serial)}"
            if not any(n.startswith(f"{prefix}-") for n in existing):
                return prefix

    def namespace(self, node: str) -> str:
        return f"{self.prefix}-{node}"

    @property
    def hub(self) -> str:
        return f"{self.prefix}-hub"

    def _add(self, name: str) -> None:
        _ip("netns", "add", name)
        self._made.append(name)
        _ip("-n", name, "link", "set", "lo", "up")

    def _up(self) -> None:
        bits = self.subnet.prefixlen
        self._add(self.hub)
        _ip("-n", self.hub, "link", "add", "fabric0", "type", "bridge")
        _ip("-n", self.hub, "addr", "add", f"{self.bridge_address}/{bits}", "dev", "fabric0")
        _ip("-n", self.hub, "link", "set", "fabric0", "up")
        for i, node in enumerate(self.nodes, start=1):
            ns = self.namespace(node)
            self._add(ns)
            # Created inside the namespaces at once: the names need only be unique there.
            _ip(
                "link",
                "add",
                f"v{i}",
                "netns",
                self.hub,
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                ns,
            )
            _ip("-n", self.hub, "link", "set", f"v{i}", "master", "fabric0", "up")
            _ip("-n", ns, "addr", "add", f"{self._addresses[node]}/{bits}", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            # The management path: both ends in the node, the default route through it.
            _ip("-n", ns, "link", "add", "mgmt0", "type", "veth", "peer", "name", "mgmt1")
            _ip("-n", ns, "addr", "add", "169.254.77.1/30", "dev", "mgmt0")
            _ip("-n", ns, "addr", "add", "169.254.77.2/30", "dev", "mgmt1")
            _ip("-n", ns, "link", "set", "mgmt0", "up")
            _ip("-n", ns, "link", "set", "mgmt1", "up")
            _ip("-n", ns, "route", "add", "default", "via", "169.254.77.2", "dev", "mgmt0")
            (NETNS_ETC / ns).mkdir(parents=True, exist_ok=True)
            (NETNS_ETC / ns / "hosts").touch()

    def address(self, node: str) -> str:
        return self._addresses[node]

    def wrap(self, node: str) -> list[str]:
        return ["ip", "netns", "exec", self.namespace(node)]

    def hosts_path(self, node: str) -> Path:
        return NETNS_ETC / self.namespace(node) / "hosts"

    async def connect(self, node: str, host: str, port: int, timeout: float) -> bool:
        path = NETNS_RUN / self.namespace(node)
        return await asyncio.to_thread(_connect_in, path, host, port, timeout)

    def down(self) -> None:
        """Every namespace this network made, and whatever still runs in one, gone."""
        for name in reversed(self._made):
            remove_namespace(name)
        self._made.clear()
