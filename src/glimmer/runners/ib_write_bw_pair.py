"""The Pair machinery the perftest kinds share (ib-write-bw, gpudirect-rdma, fabric-soak):
scope checks, the TCP control connection, device selection by the route to the peer, and
running one perftest phase on both ends.

Control connection (``BURNIN_HEALTH_PORT``, 18510; also what a readiness probe opens): the
server listens; a connection that does not say hello within a few seconds (a probe) is closed
and the next one awaited. On hello the server pushes its parameters (message size and QPs after
its own memlock fit, measurand); the client settles on the smaller of both ends' fits and then
drives phases: for each one it names the tool and the shared arguments, the server starts that
tool listening on the perftest port and answers ``listening``, the client runs its end against
the server and reports ``done``. perftest's own port is never probed: its listener has a
backlog of one, and a probe would take the client's place.

Each end picks its RDMA port by the route to the other: the client looks the peer's address up
in the route table, the server reads the local address the client reached it on; on RoCE the
GID index is the RoCE v2 entry whose IPv4 is that routed local address.

Shared configuration: ``BURNIN_HEALTH_PORT`` (18510), ``BURNIN_PERFTEST_PORT`` (18515),
``BURNIN_MESSAGE_BYTES`` (1048576), ``BURNIN_QPS`` (4), ``PERFTEST_PEER_WAIT_SECONDS`` (120: how
long the client waits for the server's control port, and the server for its client past the
duration).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import socket
import struct
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glimmer.runners.deadline import Deadline
from glimmer.runners.ib_write_bw_rdma import (
    Fit,
    Port,
    Selection,
    SelectionError,
    discover,
    fit_memlock,
    memlock_limit,
    select,
)
from glimmer.runners.outcome import ConfigError, Stop, errored, failed, skipped
from glimmer.runners.program import Context
from glimmer.runners.tcp_baseline_guard import read_routes, route_to
from glimmer.runners.tools import find_tool, kill_group

HEALTH_PORT = 18510
PERFTEST_PORT = 18515
PEER_WAIT_S = 120
HELLO_WAIT_S = 5.0
PACKAGE = "perftest"


def refuse_scope(ctx: Context, kind: str) -> str:
    """The role, after the scope checks every Pair-only perftest kind makes first: a Group
    rank is an Error before any hardware is looked at; no role (Node scope) is a Skip."""
    role = ctx.settings.raw("BURNIN_ROLE")
    if role is None:
        if ctx.settings.raw("BURNIN_RANK") or ctx.settings.raw("BURNIN_NRANKS"):
            raise Stop(errored(f"{kind} is a Pair test; a Group rank cannot run it"))
        raise Stop(skipped(f"{kind} is a Pair test: not half of a Pair (no BURNIN_ROLE)"))
    if role not in ("server", "client"):
        raise ConfigError("BURNIN_ROLE", f"{role!r} is neither server nor client")
    return role


def rdma_ports(ctx: Context, kind: str) -> list[Port]:
    """The host's RDMA ports; none is a Skip (nothing to test), none ACTIVE a Fail (the
    hardware is there and cannot carry a link)."""
    ports = discover(ctx.paths.sysfs)
    if not ports:
        where = ctx.paths.sysfs / "class" / "infiniband"
        raise Stop(skipped(f"no RDMA device on this host ({where} lists none)"))
    if not any(p.active for p in ports):
        states = ", ".join(f"{p.device}/{p.number}={p.state or '?'}" for p in ports)
        raise Stop(failed(f"RDMA hardware present but no ACTIVE port ({states})"))
    return ports


def peer_wait(ctx: Context) -> float:
    return float(ctx.settings.integer("PERFTEST_PEER_WAIT_SECONDS", PEER_WAIT_S, minimum=1))


def tools(names: tuple[str, ...]) -> dict[str, str]:
    return {name: find_tool(name, PACKAGE) for name in names}


def fit(ctx: Context) -> Fit:
    size = ctx.settings.integer("BURNIN_MESSAGE_BYTES", 1048576, minimum=2)
    qps = ctx.settings.integer("BURNIN_QPS", 4, minimum=1, maximum=16384)
    limit = memlock_limit()
    got = fit_memlock(size, qps, limit)
    if got is None:
        raise Stop(
            errored(
                f"RLIMIT_MEMLOCK {limit} B cannot hold even one QP of 64 KiB messages: "
                "run with an unlimited memlock (--ulimit memlock=-1:-1)"
            )
        )
    if got.note:
        ctx.report.note(got.note)
    return got


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall((json.dumps(message) + "\n").encode())


def _receive(reader: Any, what: str) -> dict[str, Any]:
    line = reader.readline()
    if not line:
        raise Stop(errored(f"the peer closed the control connection before {what}"))
    try:
        message = json.loads(line)
    except json.JSONDecodeError:
        raise Stop(errored(f"the peer sent {line[:80]!r} instead of {what}")) from None
    if not isinstance(message, dict):
        raise Stop(errored(f"the peer sent {line[:80]!r} instead of {what}"))
    return message


def interface_of(address: str) -> str | None:
    """The interface holding ``address`` (SIOCGIFADDR over every interface)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            request = struct.pack("256s", name.encode()[:15])
            try:
                reply = fcntl.ioctl(probe.fileno(), 0x8915, request)  # SIOCGIFADDR
            except OSError:
                continue
            if socket.inet_ntoa(reply[20:24]) == address:
                return name
    return None


def routed_local_address(peer: str) -> str:
    """The local address the kernel would send to ``peer`` from (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.connect((peer, 9))
        return str(udp.getsockname()[0])


def _selection(ports: list[Port], interface: str | None, local: str) -> Selection:
    try:
        return select(ports, interface or "", local)
    except SelectionError as exc:
        raise Stop(errored(str(exc))) from None


def device_args(sel: Selection) -> list[str]:
    args = ["-d", sel.port.device, "-i", str(sel.port.number)]
    if sel.gid_index is not None:
        args += ["-x", str(sel.gid_index)]
    return args


@dataclass(frozen=True)
class Phase:
    """One perftest run on both ends: the tool and the arguments both ends share."""

    name: str
    tool: str
    args: tuple[str, ...]
    seconds: float  # how long the client's end may take before it is killed


@dataclass(frozen=True)
class PhaseRun:
    exit_code: int
    output: str
    timed_out: bool


def _run_perftest(argv: list[str], timeout: float) -> PhaseRun:
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
        return PhaseRun(proc.returncode, out, False)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, _ = proc.communicate()
        return PhaseRun(-1, out, True)


def serve(ctx: Context, ports: list[Port], binaries: dict[str, str], pushed: dict[str, Any]) -> str:
    """The server's whole life: await the client's hello, push ``pushed``, run every phase the
    client asks for. Returns a note on what was served; raises Stop on a fault."""
    port = ctx.settings.integer("BURNIN_HEALTH_PORT", HEALTH_PORT, minimum=1, maximum=65535)
    perftest_port = ctx.settings.integer("BURNIN_PERFTEST_PORT", PERFTEST_PORT, minimum=1)
    duration = ctx.settings.duration(60)
    deadline = Deadline(duration + peer_wait(ctx))
    with socket.create_server(("", port), reuse_port=False) as listener:
        listener.settimeout(1.0)
        ctx.report.note(f"control: listening on port {port}")
        while True:
            if deadline.expired():
                raise Stop(errored(f"the client never said hello within {deadline.seconds:.0f} s"))
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(HELLO_WAIT_S)
                reader = conn.makefile("r")
                try:
                    line = reader.readline()
                except (TimeoutError, OSError):
                    continue  # a readiness probe: it connects and says nothing
                if not line.startswith("{"):
                    continue
                conn.settimeout(None)
                local = conn.getsockname()[0]
                sel = _selection(ports, interface_of(local), local)
                ctx.report.note(f"device: {sel.port.device} port {sel.port.number} for {local}")
                _send(conn, {"pushed": pushed})
                return _serve_phases(conn, reader, sel, binaries, perftest_port)


def _serve_phases(
    conn: socket.socket,
    reader: Any,
    sel: Selection,
    binaries: dict[str, str],
    perftest_port: int,
) -> str:
    served = 0
    restarts = 0
    while True:
        ask = _receive(reader, "a phase request")
        if ask.get("bye"):
            return f"served {served} phase(s), {restarts} server restart(s)"
        tool = str(ask.get("tool", ""))
        if tool not in binaries:
            raise Stop(errored(f"the client asked for {tool!r}, which this end does not run"))
        argv = [
            binaries[tool],
            *device_args(sel),
            *[str(a) for a in ask.get("args", [])],
            "-p",
            str(perftest_port + int(ask.get("port_offset", 0))),
        ]
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        time.sleep(0.5)  # perftest's listener comes up before the client is told
        _send(conn, {"listening": proc.poll() is None})
        _receive(reader, "the phase's end")
        try:
            proc.communicate(timeout=30.0)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            proc.communicate()
            restarts += 1
        served += 1
        if proc.returncode not in (0, None):
            restarts += 1


@dataclass
class Client:
    """The client's end of the control connection, once the server has answered hello."""

    sock: socket.socket
    reader: Any
    peer: str
    sel: Selection
    binaries: dict[str, str]
    perftest_port: int
    pushed: dict[str, Any]

    def run(self, phase: Phase, port_offset: int = 0) -> PhaseRun:
        _send(
            self.sock,
            {"tool": phase.tool, "args": list(phase.args), "port_offset": port_offset},
        )
        if not _receive(self.reader, "the server's listening").get("listening"):
            return PhaseRun(-1, f"the server's {phase.tool} did not start", False)
        argv = [
            self.binaries[phase.tool],
            *device_args(self.sel),
            *phase.args,
            "-p",
            str(self.perftest_port + port_offset),
            self.peer,
        ]
        done = _run_perftest(argv, phase.seconds)
        _send(self.sock, {"done": done.exit_code})
        return done

    def close(self) -> None:
        with contextlib.suppress(OSError):
            _send(self.sock, {"bye": True})
        self.sock.close()


def connect(ctx: Context, ports: list[Port], binaries: dict[str, str]) -> Client:
    """Reach the server's control port (retrying until it listens, up to 120 s), say hello,
    read what it pushed, pick this end's RDMA port by the route to it."""
    host = ctx.settings.raw("BURNIN_PEER_HOST")
    if host is None:
        raise ConfigError("BURNIN_PEER_HOST", "the client needs the server's address")
    port = ctx.settings.integer("BURNIN_HEALTH_PORT", HEALTH_PORT, minimum=1, maximum=65535)
    perftest_port = ctx.settings.integer("BURNIN_PERFTEST_PORT", PERFTEST_PORT, minimum=1)
    wait = Deadline(peer_wait(ctx))
    while True:
        try:
            sock = socket.create_connection((host, port), timeout=5.0)
            break
        except OSError as exc:
            if wait.expired():
                raise Stop(errored(f"peer {host}:{port} never appeared: {exc}")) from None
            time.sleep(1.0)
    sock.settimeout(None)
    peer = str(sock.getpeername()[0])
    _send(sock, {"hello": True})
    reader = sock.makefile("r")
    pushed = _receive(reader, "the server's parameters").get("pushed", {})
    local = routed_local_address(peer)
    try:
        routes = read_routes((ctx.paths.proc / "net" / "route").read_text())
    except OSError:
        routes = []
    sel = _selection(ports, route_to(routes, peer) if routes else interface_of(local), local)
    ctx.report.note(f"device: {sel.port.device} port {sel.port.number} for {local} -> {peer}")
    return Client(sock, reader, peer, sel, binaries, perftest_port, pushed)


def settle_fit(mine: Fit, pushed: dict[str, Any]) -> Fit:
    """Both ends run the same size and QPs: the smaller of the two ends' fits."""
    size = min(mine.message_bytes, int(pushed.get("message_bytes", mine.message_bytes)))
    qps = min(mine.qps, int(pushed.get("qps", mine.qps)))
    return Fit(size, qps, mine.note)


Measure = Callable[[Client, Fit], Any]


def sysfs_root(ctx: Context, variable: str) -> Path:
    return ctx.settings.path(variable, str(ctx.paths.sysfs))
