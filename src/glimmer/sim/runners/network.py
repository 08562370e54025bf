"""Network runners (§9.10-9.13, 9.15): ib-write-bw, gpudirect-rdma, tcp-baseline and
fabric-soak measure a link between a Pair's server and client; nccl runs a collective at
Node, Pair or Group scope.

In a Pair the server prints little and exits 0 once the client is done; the client measures
the link and decides (§2.8). In a Group only rank 0 prints the collective's figures.
"""

from __future__ import annotations

import math

from glimmer.sim.runners.call import RunnerCall, RunnerOutput
from glimmer.sim.runners.common import duration, group_refusal, peer_of, role_of
from glimmer.sim.runners.emit import Stdout
from glimmer.sim.runners.link import End, Link, end
from glimmer.sim.runners.memory import pcie_factor
from glimmer.sim.runners.node import NodeView, view
from glimmer.sim.runners.noise import Jitter, rng_for
from glimmer.sim.twin import FleetSim

RDMA_EFFICIENCY = 0.999  # ib_write_bw reaches 399.6 of 400 Gb/s per HCA (peers §4.2)
GDR_EFFICIENCY = 0.998  # GDR loopback 399.6-399.9 on NDR (peers §4.2)
# NCCL over one NIC: 46-48 GB/s per NDR 400G NIC (peers §4.2) = 0.117 GB/s per Gb/s of line.
NCCL_GBS_PER_GBPS = 0.117
TCP_SINGLE_STREAM_MAX_GBPS = 90.0  # one iperf3 stream over IPoIB saturates a core first
MESSAGE_BYTES = 1_048_576
RDMA_LATENCY_US = 1.9
NCCL_NET_LATENCY_US = 21.0
NCCL_NVLINK_LATENCY_US = 11.0


def _views(twin: FleetSim, call: RunnerCall) -> tuple[NodeView, NodeView] | str:
    here = view(twin, call.node, call.started_at)
    there = view(twin, peer_of(call), call.started_at)
    if here is None:
        return f"node {call.node} is not in the fleet"
    if there is None:
        return f"peer node {peer_of(call)} is not in the fleet"
    return here, there


def _pair_ends(twin: FleetSim, call: RunnerCall, out: Stdout) -> tuple[End, End] | RunnerOutput:
    """What every Pair-only runner checks first: not a Group rank (exit 3), half of a Pair
    (else a declared skip), both nodes in the fleet; on success (this end, the peer's end)."""
    refused = group_refusal(call, out)
    if refused is not None:
        return refused
    if not role_of(call):
        return out.skipped("not half of a Pair (no BURNIN_ROLE)", 0.2)
    got = _views(twin, call)
    if isinstance(got, str):
        return out.errored(got, 0.2)
    return end(got[0]), end(got[1])


def _pair_preamble(
    twin: FleetSim, call: RunnerCall, out: Stdout, *, gdr: bool = False
) -> tuple[End, End] | RunnerOutput:
    """The refusals every Pair-only RDMA runner makes, in the order it makes them; on success
    (this end, the peer's end)."""
    ends = _pair_ends(twin, call, out)
    if isinstance(ends, RunnerOutput):
        return ends
    here, there = ends
    if here.nic is None:
        return out.skipped("no RDMA device on this node", 0.3)
    if gdr:
        devs = here.view.visible
        if not devs or not all(d.part is not None and d.part.peer_memory for d in devs):
            return out.skipped(
                "no peer-memory provider registered (/sys/kernel/mm/memory_peers is empty; "
                "nvidia_peermem not loaded)",
                0.3,
            )
    if here.memlock:
        return out.errored(
            "RLIMIT_MEMLOCK too small: cannot register 1 MiB x 4 QPs x 2 (Couldn't create CQ)",
            0.5,
        )
    if here.down:
        return out.failed(f"RDMA hardware present but no ACTIVE port ({here.nic.name})", 1.0)
    return here, there


def _server(out: Stdout, here: End, there: End, seconds: float, what: str) -> RunnerOutput:
    out.text(f"{what} server on {here.host}: listening for {there.host}")
    return out.passed(seconds + 1.0, f"served {there.host}")


def _peer_trouble(out: Stdout, there: End) -> RunnerOutput | None:
    if there.memlock:
        return out.errored(f"peer {there.host} never appeared (its runner could not start)", 120.0)
    if there.down:
        return out.failed(f"peer {there.host} reports no ACTIVE RDMA port", 5.0)
    return None


# ---- ib-write-bw ----------------------------------------------------------------------------


def ib_write_bw(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    out = Stdout("IB_WRITE_BW")
    measurand = call.env.get("BURNIN_VARIANT_MEASURAND", "")
    got = _pair_preamble(twin, call, out)
    if isinstance(got, RunnerOutput):
        return got
    here, there = got
    if measurand not in ("", "bandwidth", "latency"):
        return out.errored(f"unknown measurand {measurand!r} (bandwidth|latency)", 0.2)
    seconds = float(duration(call, 60))
    if role_of(call) == "server":
        return _server(out, here, there, seconds, "ib_write_bw")
    trouble = _peer_trouble(out, there)
    if trouble is not None:
        return trouble
    jit = Jitter(rng_for(call))
    link = Link(here, there)
    factor = link.factor()
    if measurand in ("", "bandwidth"):
        bw = jit.rel(link.speed_gbps * RDMA_EFFICIENCY * factor, 0.0008)
        out.kv("bw_average", bw)
        out.kv("msg_rate_mpps", bw * 1e9 / 8.0 / MESSAGE_BYTES / 1e6, 6)
    if measurand in ("", "latency"):
        slow = 1.0 / max(factor, 0.05)
        lat = jit.rel(RDMA_LATENCY_US * slow**0.5, 0.02)
        out.kv("latency_us", lat)
        out.kv("latency_min_us", lat * 0.86)
        out.kv("latency_max_us", lat * jit.uniform(3.0, 6.0))
        out.kv("latency_p99_us", lat * jit.uniform(1.3, 1.5))
    return out.passed(seconds + jit.uniform(1.0, 3.0))


# ---- gpudirect-rdma -------------------------------------------------------------------------


def gpudirect_rdma(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    out = Stdout("GPUDIRECT_RDMA")
    got = _pair_preamble(twin, call, out, gdr=True)
    if isinstance(got, RunnerOutput):
        return got
    here, there = got
    seconds = float(duration(call, 60))
    if role_of(call) == "server":
        return _server(out, here, there, seconds, "ib_write_bw --use_cuda")
    trouble = _peer_trouble(out, there)
    if trouble is not None:
        return trouble
    if not there.view.visible or not all(
        d.part is not None and d.part.peer_memory for d in there.view.visible
    ):
        return out.skipped(f"peer {there.host} has no peer-memory provider", 1.0)
    jit = Jitter(rng_for(call))
    link = Link(here, there)
    # The GPU end of each side: a downtrained PCIe link caps what reaches device memory.
    caps = [
        e.view.visible[0].part.h2d_gbs * 8.0 * pcie_factor(e.view.visible[0]) / 0.88
        for e in (here, there)
        if e.view.visible and e.view.visible[0].part
    ]
    line = min([link.speed_gbps * GDR_EFFICIENCY, *caps])
    bw = jit.rel(line * link.factor(), 0.001)
    out.kv("bw_average", bw)
    out.kv("t_avg_usec", jit.rel(RDMA_LATENCY_US * 1.25 / max(link.factor(), 0.05) ** 0.5, 0.02))
    return out.passed(seconds + jit.uniform(1.0, 3.0))


# ---- tcp-baseline ---------------------------------------------------------------------------


def tcp_baseline(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    out = Stdout("TCP_BASELINE")
    ends = _pair_ends(twin, call, out)
    if isinstance(ends, RunnerOutput):
        return ends
    here, there = ends
    mgmt = next((n.name for n in here.view.node.nics if n.role == "frontend"), "eth0")
    if here.nic is None:
        return out.skipped(f"the only route to the peer is the management interface {mgmt}", 0.3)
    named = call.env.get("TCP_BASELINE_INTERFACE", "")
    if named == mgmt:
        return out.errored(f"TCP_BASELINE_INTERFACE names the default-route interface {mgmt}", 0.2)
    seconds = float(duration(call, 30))
    if role_of(call) == "server":
        if not named:
            return out.errored("TCP_BASELINE_INTERFACE is required on the server", 0.2)
        return _server(out, here, there, seconds, "iperf3")
    if here.down or there.down:
        return out.errored(f"iperf3: unable to connect to {there.host}: no route", 120.0)
    jit = Jitter(rng_for(call))
    link = Link(here, there)
    tput = jit.rel(min(link.speed_gbps * 0.2, TCP_SINGLE_STREAM_MAX_GBPS) * link.factor(), 0.01)
    lossy = 1.0 - link.factor()
    out.kv("tcpThroughputGbps", tput)
    out.kv("tcpRetransmits", jit.poisson(lossy * 2000.0))
    out.kv("tcpRttUs", jit.rel(28.0 / max(link.factor(), 0.05), 0.05))
    out.kv("elapsedS", seconds, 1)
    out.kv("tcpTestInterface", here.nic.name)
    out.kv("tcpMgmtInterface", mgmt)
    out.kv("tcpNetNamespace", "host" if call.spec.host_network else "pod")
    return out.passed(seconds + jit.uniform(0.5, 1.5))


# ---- fabric-soak ----------------------------------------------------------------------------


def fabric_soak(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    out = Stdout("FABRIC_SOAK")
    got = _pair_preamble(twin, call, out)
    if isinstance(got, RunnerOutput):
        return got
    here, there = got
    seconds = float(duration(call, 3600))
    raw = call.env.get("FABRIC_SOAK_WINDOW_SECONDS", "20")
    window = float(raw) if raw.replace(".", "", 1).isdigit() else -1.0
    if not 0 < window < seconds:
        return out.errored(f"FABRIC_SOAK_WINDOW_SECONDS {raw!r} must be > 0 and < duration", 0.2)
    if role_of(call) == "server":
        return _server(out, here, there, seconds, "fabric-soak")
    trouble = _peer_trouble(out, there)
    if trouble is not None:
        return trouble
    jit = Jitter(rng_for(call))
    link = Link(here, there)
    windows = int(seconds // window)
    # A flapping port is down for I/2 of the time: those windows fail; the rest run at rate.
    steady = (1.0 - 0.5 * here.level("nic_degraded")) * (1.0 - 0.5 * there.level("nic_degraded"))
    steady *= link.factor() / max(here.factor() * there.factor(), 1e-9)
    failed = round(windows * 0.5 * link.flapping)
    good = windows - failed
    samples = sorted(
        jit.rel(link.speed_gbps * RDMA_EFFICIENCY * steady, 0.001) for _ in range(min(good, 400))
    )
    if not samples:
        out.kv("soakIterations", windows)
        out.kv("soakFailedIterations", failed)
        return out.failed(f"all {windows} windows failed", seconds)
    mean = sum(samples) / len(samples)
    std = math.sqrt(sum((s - mean) ** 2 for s in samples) / len(samples))
    errors = 0
    for e in (here, there):
        errors += round(e.level("nic_link_flapping") * seconds / 60.0 * 40)
        errors += round(e.level("nic_degraded") * seconds / 60.0 * 5)
    out.kv("minBandwidthGbps", samples[0])
    out.kv("p1BandwidthGbps", samples[max(0, math.ceil(0.01 * len(samples)) - 1)])
    out.kv("meanBandwidthGbps", mean)
    out.kv("peakBandwidthGbps", samples[-1])
    out.kv("bandwidthStdDevGbps", std, 3)
    out.kv("soakIterations", windows)
    out.kv("soakFailedIterations", failed)
    out.kv("soakServerRestarts", 0)
    out.kv("linkErrorEvents", errors)
    elapsed = seconds + jit.uniform(1.0, 5.0)
    if failed:
        return out.failed(f"{failed} of {windows} windows failed", elapsed)
    return out.passed(elapsed)


# ---- nccl -----------------------------------------------------------------------------------

COLLECTIVES = ("allreduce", "allgather", "reducescatter", "alltoall")


def _bus_factor(collective: str, n: int) -> float:
    return 2.0 * (n - 1) / n if collective == "allreduce" else (n - 1) / n


def _nccl_report(
    out: Stdout, jit: Jitter, busbw: float, n: int, collective: str, latency: float, wrong: int
) -> None:
    out.kv("busbw", busbw)
    out.kv("algbw", busbw / _bus_factor(collective, n))
    out.kv("latency_us", jit.rel(latency, 0.03))
    out.kv("wrong_count", wrong)


def _corrupting(views: list[NodeView]) -> int:
    """Incorrect elements over every GPU of every rank's node: a collective is checked on each
    device it ran on, so a corrupting GPU anywhere on a node shows (invariant 14), not only
    when it happens to be device 0."""
    wrong = 0
    for nv in views:
        wrong += sum(4096 for d in nv.visible if d.level("gpu_silent_data_corruption") > 0)
    return wrong


def nccl(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    out = Stdout("NCCL")
    collective = call.env.get("BURNIN_VARIANT_COLLECTIVE", "allreduce") or "allreduce"
    if collective not in COLLECTIVES:
        return out.errored(f"unknown collective {collective!r}", 0.2)
    here = view(twin, call.node, call.started_at)
    if here is None:
        return out.errored(f"node {call.node} is not in the fleet", 0.2)
    if here.level("gpu_operand_unavailable") > 0:
        return out.errored("CUDA driver unusable: no NVIDIA driver is exposed to the pod", 1.0)
    if not here.visible:
        return out.skipped("no NVIDIA accelerator", 0.3)
    jit = Jitter(rng_for(call))
    seconds = float(duration(call, 120))
    role = role_of(call)
    in_group = call.rank is not None or "BURNIN_RANK" in call.env
    if not role and not in_group:
        return _nccl_node(out, here, jit, seconds, collective)
    if here.level("rdma_memlock_limit") > 0:
        return out.errored("RLIMIT_MEMLOCK below what NCCL needs to register its buffers", 0.5)
    rank = call.rank if call.rank is not None else int(call.env.get("BURNIN_RANK", "0") or 0)
    members = list(call.nodes) if in_group else [peer_of(call), call.node]
    reporter = rank == 0 if in_group else role == "client"
    if not reporter:
        what = f"rank {rank}" if in_group else "server (rank 0: serves the unique id)"
        out.text(f"nccl {what} on {here.node.hostname}: joined {len(members)} ranks")
        return out.passed(seconds + 1.0, "joined")
    views = [view(twin, m, call.started_at) for m in members]
    if any(v is None for v in views):
        return out.errored("a rank's node is not in the fleet", 0.2)
    nodes = [v for v in views if v is not None]
    ends = [end(v) for v in nodes]
    for e in ends:
        if e.nic is None or e.memlock or e.down or not e.view.visible:
            return out.errored(f"rendezvous failed: rank on {e.host} never joined", 120.0)
    n = len(ends)
    ring = [Link(ends[i], ends[(i + 1) % n]) for i in range(n)] if n > 1 else []
    line = min((lk.speed_gbps * lk.factor() for lk in ring), default=0.0)
    busbw = jit.rel(line * NCCL_GBS_PER_GBPS * (1.0 - 0.01 * math.log2(max(n, 2))), 0.004)
    wrong = _corrupting(nodes)
    _nccl_report(out, jit, busbw, n, collective, NCCL_NET_LATENCY_US, wrong)
    elapsed = seconds + jit.uniform(2.0, 6.0)
    if wrong:
        return out.failed(f"{wrong} incorrect elements in {collective}", elapsed)
    return out.passed(elapsed)


def _nccl_node(
    out: Stdout, nv: NodeView, jit: Jitter, seconds: float, collective: str
) -> RunnerOutput:
    devs = nv.visible
    if len(devs) < 2:
        return out.skipped(f"Node scope needs 2 or more GPUs; {len(devs)} visible", 0.5)
    figures = devs[0].part
    if figures is None or figures.nccl_node_busbw_gbs is None:
        return out.skipped(f"no intra-node collective path on {devs[0].name}", 0.5)
    nvlink = figures.peer_gbs is not None and figures.peer_gbs > 100.0
    level = max(
        max(d.level("gpu_nvlink_degraded"), d.level("gpu_nvswitch_tray_failure")) for d in devs
    )
    factor = 1.0 - nv.op["congestion_loss"] * level if nvlink else 1.0
    # All-reduce's NVLS figure is for the full 8-GPU board; other collectives land ~80 %.
    scale = 1.0 if collective == "allreduce" else 0.8
    busbw = jit.rel(figures.nccl_node_busbw_gbs * factor * scale, 0.004)
    wrong = _corrupting([nv])
    latency = NCCL_NVLINK_LATENCY_US if nvlink else NCCL_NET_LATENCY_US
    _nccl_report(out, jit, busbw, len(devs), collective, latency, wrong)
    out.kv("ranks", len(devs))
    out.kv("ncclTransport", "nvlink" if nvlink else "p2p")
    elapsed = seconds + jit.uniform(2.0, 5.0)
    if wrong:
        return out.failed(f"{wrong} incorrect elements in {collective}", elapsed)
    return out.passed(elapsed)
