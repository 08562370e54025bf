"""tcp-baseline (§9.13, Pair): plain TCP throughput between the two ends with iperf3 (Debian
package ``iperf3``), every figure from the sender's summary, behind the management-path guard
(:mod:`tcp_baseline_guard`).

The server runs ``iperf3 -s -1`` and serves one completed test; a connection that brings no
test (a readiness probe, a port scan) consumes a one-off server, so it is started again until
a test completes or the deadline passes. The client waits up to 120 s for the listener by
retrying iperf3 itself on a connection error (it never probes the port: that would consume the
server), then measures for the duration.

Scope: half of a Pair (``BURNIN_ROLE`` server|client). No role is a Skip (nothing to pair
with); a Group rank (``BURNIN_RANK``/``BURNIN_NRANKS`` without a role) is an Error before
anything is inspected: a runner that cannot do a scope exits 3 (Appendix C item 5, decided for
the rebuild; the original skipped).

Configuration: ``BURNIN_DURATION_SECONDS`` (30), ``TCP_BASELINE_PORT`` (5201),
``TCP_BASELINE_INTERFACE`` (required on the server; on the client an assertion checked against
the route), ``BURNIN_PEER_HOST`` (the client's server address), ``TCP_BASELINE_PEER_WAIT_SECONDS``
(110: how long either end waits for the other).
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

from glimmer.runners.deadline import Deadline
from glimmer.runners.outcome import ConfigError, Outcome, Stop, errored, failed, passed, skipped
from glimmer.runners.program import Context, main
from glimmer.runners.tcp_baseline_guard import (
    GuardDecision,
    Route,
    decide_client,
    decide_server,
    net_namespace,
    read_routes,
    route_to,
)
from glimmer.runners.tcp_baseline_iperf import IperfRun, read_run
from glimmer.runners.tools import find_tool, run_tool

KIND = "tcp-baseline"
TOOL = "iperf3"
PACKAGE = "iperf3"
DEFAULT_DURATION_S = 30
DEFAULT_PORT = 5201
# How long the client waits for the server's listener (§9.13). A little under the 120 s of
# slack the dispatcher gives past the duration, so a late server still ends in our own marker.
PEER_WAIT_S = 110
RETRY_EVERY_S = 1.0
CONNECT_TIMEOUT_MS = 5000
RUN_NETNS = Path("/run/netns")


def _scope(ctx: Context) -> str:
    role = ctx.settings.raw("BURNIN_ROLE")
    if role is None:
        if ctx.settings.raw("BURNIN_RANK") or ctx.settings.raw("BURNIN_NRANKS"):
            raise Stop(errored("tcp-baseline is a Pair test; a Group rank cannot run it"))
        raise Stop(skipped("not half of a Pair (no BURNIN_ROLE)"))
    if role not in ("server", "client"):
        raise ConfigError("BURNIN_ROLE", f"{role!r} is neither server nor client")
    return role


def _routes(ctx: Context) -> list[Route]:
    """The main table; unreadable is an Error: the guard fails closed."""
    path = ctx.paths.proc / "net" / "route"
    try:
        text = path.read_text()
    except OSError as exc:
        raise Stop(errored(f"cannot read {path}: {exc.strerror or exc}")) from None
    return read_routes(text)


def _print_guard(ctx: Context, decision: GuardDecision, netns: str | None) -> None:
    """The guard's decision is evidence on every path, refusals included."""
    ctx.report.metric("tcpTestInterface", decision.test_interface)
    if decision.mgmt_interfaces:
        ctx.report.metric("tcpMgmtInterface", ",".join(decision.mgmt_interfaces))
    ctx.report.metric("tcpNetNamespace", netns)


def _enforce(decision: GuardDecision) -> None:
    if decision.refusal is not None:
        raise Stop(skipped(decision.refusal) if decision.skip else errored(decision.refusal))


def _peer_wait(ctx: Context) -> int:
    return ctx.settings.integer("TCP_BASELINE_PEER_WAIT_SECONDS", PEER_WAIT_S, minimum=1)


def _resolve(host: str, deadline: Deadline) -> str:
    """The peer's IPv4 address; a name that does not resolve yet (the server's DNS record may
    appear late) is retried until the deadline."""
    while True:
        try:
            infos = socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)
            return str(infos[0][4][0])
        except (socket.gaierror, IndexError) as exc:
            if deadline.expired():
                raise Stop(errored(f"peer {host} never resolved: {exc}")) from None
            time.sleep(RETRY_EVERY_S)


def _client(ctx: Context, binary: str, duration: int, port: int) -> Outcome:
    settings = ctx.settings
    peer_host = settings.raw("BURNIN_PEER_HOST")
    if peer_host is None:
        raise ConfigError("BURNIN_PEER_HOST", "the client needs the server's address")
    wait = Deadline(_peer_wait(ctx))
    peer = _resolve(peer_host, wait)
    routes = _routes(ctx)
    named = settings.raw("TCP_BASELINE_INTERFACE")
    iface = route_to(routes, peer) or ""
    netns = net_namespace(ctx.paths.proc, ctx.paths.sysfs, iface, RUN_NETNS)
    decision = decide_client(routes, peer, named, netns)
    _print_guard(ctx, decision, netns)
    _enforce(decision)
    # A bounded connect, so an absent listener is retried within the wait instead of waiting
    # out the kernel's SYN retries once.
    argv = [binary, "-c", peer, "-p", str(port), "-t", str(duration), "-J"]
    argv += ["--connect-timeout", str(CONNECT_TIMEOUT_MS)]
    ctx.report.note(f"running: iperf3 {' '.join(argv[1:])} (over {decision.test_interface})")
    while True:
        done = run_tool(argv, duration + 60.0)
        if done.timed_out:
            raise Stop(errored(f"iperf3 did not finish within {duration + 60} s"))
        run = read_run(done.stdout)
        if run.error is None:
            return _measured(ctx, run, peer)
        if not run.retryable or wait.expired():
            raise Stop(errored(f"iperf3 to {peer}:{port}: {run.error}"))
        time.sleep(RETRY_EVERY_S)


def _measured(ctx: Context, run: IperfRun, peer: str) -> Outcome:
    report = ctx.report
    report.metric("tcpThroughputGbps", run.throughput_gbps, 3)
    report.metric("tcpRetransmits", run.retransmits)  # omitted without TCP_INFO, never 0
    report.metric("tcpRttUs", run.mean_rtt_us, 1)
    report.metric("elapsedS", run.seconds, 2)
    if not run.bytes or not run.bits_per_second:
        return failed(f"iperf3 to {peer} completed and carried no traffic")
    return passed(f"{run.throughput_gbps or 0:.2f} Gb/s to {peer}")


def _server(ctx: Context, binary: str, duration: int, port: int) -> Outcome:
    routes = _routes(ctx)
    named = ctx.settings.raw("TCP_BASELINE_INTERFACE")
    netns = net_namespace(ctx.paths.proc, ctx.paths.sysfs, named or "", RUN_NETNS)
    decision = decide_server(routes, named)
    _print_guard(ctx, decision, netns)
    _enforce(decision)
    deadline = Deadline(duration + _peer_wait(ctx))
    argv = [binary, "-s", "-1", "-J", "-p", str(port)]
    ctx.report.note(f"serving: iperf3 {' '.join(argv[1:])}")
    restarts = 0
    while not deadline.expired():
        done = run_tool(argv, deadline.remaining())
        run = read_run(done.stdout)
        if run.error is None and (run.received_bytes or run.bytes):
            peer = ctx.settings.raw("BURNIN_PEER_NODE") or ctx.settings.raw("BURNIN_PEER_HOST")
            return passed(f"served {peer or 'the client'} ({restarts} listener restarts)")
        if run.error and "listener" in run.error.lower():  # e.g. the port is taken
            return errored(f"iperf3 could not listen on port {port}: {run.error}")
        restarts += 1  # a connection that brought no test consumed the one-off server
        time.sleep(0.2)
    return errored(f"the client never completed a test within {deadline.seconds:.0f} s")


def run_tcp_baseline(ctx: Context) -> Outcome:
    role = _scope(ctx)
    duration = ctx.settings.duration(DEFAULT_DURATION_S)
    port = ctx.settings.integer("TCP_BASELINE_PORT", DEFAULT_PORT, minimum=1, maximum=65535)
    binary = find_tool(TOOL, PACKAGE)
    if role == "server":
        return _server(ctx, binary, duration, port)
    return _client(ctx, binary, duration, port)


if __name__ == "__main__":
    main(KIND, run_tcp_baseline)
