"""One nccl-tests job over a group of simulated nodes, printed as nccl-tests prints it.

The bus bandwidth follows the path the collective takes:

* one node, or one NVLink domain with MNNVL on: the architecture's NVLink figure (the same
  figures the burn-in runners use), cut by NVLink faults as ``sim.runners.network`` cuts them;
  NIC faults are invisible there — which is why isolation retests with NVLink off;
* otherwise the backend fabric: every rail carries an equal share, so the slowest NIC of any
  rail on any node sets the pace (``rails × slowest port × NCCL rate``), with the runners' link
  rules for degraded, flapping and congested ports.

A port that is down, or RLIMIT_MEMLOCK too small, stops the job before the table, with the
error NCCL would print. Silent data corruption shows as ``#wrong``. Noise is seeded per job.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Sequence

import numpy as np

from glimmer.backends.sim.certify.views import NodeViews
from glimmer.certify.jobs import JobLog, NcclJob
from glimmer.certify.measure.bandwidth import Half, TableRow, bus_factor
from glimmer.certify.measure.expect import NCCL_GBS_PER_NIC_GBPS
from glimmer.certify.measure.render import BINARIES, Rank, render_log
from glimmer.sim.runners.link import congestion, end
from glimmer.sim.runners.node import NodeView
from glimmer.sim.twin import FleetSim

NVLINK_LATENCY_US = 11.0  # as sim.runners.network
NET_LATENCY_US = 21.0
TYPE_BYTES = 4  # float
RING_LOSS_PER_DOUBLING = 0.005


def _rng(job: NcclJob) -> np.random.Generator:
    key = f"{job.seed}|{job.name}|{','.join(job.nodes)}|{job.nvlink}|{job.collective}"
    words = np.frombuffer(hashlib.sha256(key.encode()).digest()[:16], dtype=np.uint32)
    return np.random.default_rng([int(w) for w in words])


def nvlink_domain(twin: FleetSim, nv: NodeView) -> int:
    """The NVL72 domain index of a node, -1 when its NVLink ends at the board."""
    if not nv.node.gpu_count:
        return -1
    dom = int(twin.topo.gpu_domain[nv.node.gpu_start])
    return dom if dom >= 0 and twin.topo.domains[dom].kind == "nvl72" else -1


def path_of(twin: FleetSim, views: Sequence[NodeView], nvlink: bool) -> str:
    """``nvlink`` when the collective stays on NVLink, else ``network``."""
    if len(views) == 1:
        return "nvlink"
    doms = {nvlink_domain(twin, v) for v in views}
    return "nvlink" if nvlink and len(doms) == 1 and -1 not in doms else "network"


def rails_of(nv: NodeView) -> dict[int, str]:
    """Backend NIC keys by rail."""
    return {n.rail: n.key for n in nv.backend_nics if n.rail >= 0}


def _nvlink_busbw(views: Sequence[NodeView], collective: str) -> float | None:
    figures = views[0].visible[0].part if views[0].visible else None
    if figures is None or figures.nccl_node_busbw_gbs is None:
        return None
    level = max(
        max(d.level("gpu_nvlink_degraded"), d.level("gpu_nvswitch_tray_failure"))
        for v in views
        for d in v.visible
    )
    factor = 1.0 - views[0].op["congestion_loss"] * level
    scale = 1.0 if collective == "all_reduce" else 0.8  # P42: other collectives ~80 %
    return figures.nccl_node_busbw_gbs * factor * scale


def _network_busbw(views: Sequence[NodeView]) -> tuple[float, str]:
    """(busbw, error): the slowest rail paces every rail; a down port is an NCCL error."""
    rails = [rails_of(v) for v in views]
    common = sorted(set.intersection(*(set(r) for r in rails))) if rails else []
    if not common:
        return 0.0, "NCCL WARN NET/IB : No device found (no common backend rail)"
    slowest = math.inf
    for v, r in zip(views, rails, strict=True):
        for rail in common:
            key = r[rail]
            nic = next(n for n in v.backend_nics if n.key == key)
            if v.nic_level(key, "nic_link_down") > 0:
                return 0.0, (
                    f"NCCL WARN NET/IB : {v.node.hostname}:{nic.name} port state DOWN "
                    "(ibv_modify_qp failed)"
                )
            speed = nic.speed_gbps
            factor = (1.0 - 0.5 * v.nic_level(key, "nic_degraded")) * (
                1.0 - 0.5 * v.nic_level(key, "nic_link_flapping")
            )
            slowest = min(slowest, speed * factor)
    ends = [end(v) for v in views]
    worst = max((congestion(a, b) for a, b in itertools.pairwise(ends)), default=0.0)
    slowest *= 1.0 - views[0].op["congestion_loss"] * worst
    # Ring efficiency falls 0.5 % per doubling of nodes: bus bandwidth is normalised for ring
    # size, so what is left is latency per step (0.95 at 1,024 nodes, clear of the 0.9 floor).
    ring = 1.0 - RING_LOSS_PER_DOUBLING * math.log2(max(len(views), 2))
    return len(common) * slowest * NCCL_GBS_PER_NIC_GBPS.value * ring, ""


def _rows(
    job: NcclJob, busbw: float, ranks: int, latency: float, wrong: int, rng: np.random.Generator
) -> list[TableRow]:
    factor = bus_factor(job.collective, ranks)
    peak_alg = busbw / factor if factor else busbw
    _, redop = BINARIES[job.collective]
    rows = []
    size = job.min_bytes
    while size <= job.max_bytes:
        per_rank = job.collective in ("all_gather", "alltoall", "reduce_scatter")
        count = size // TYPE_BYTES // (ranks if per_rank else 1)
        halves = []
        for _ in range(2):
            t = latency * (1 + 0.03 * float(rng.standard_normal())) + size / (
                max(peak_alg, 1e-6) * 1e3
            ) * (1 + 0.004 * float(rng.standard_normal()))
            t = max(t, 0.01)
            alg = size / t / 1e3
            halves.append(Half(round(t, 2), round(alg, 2), round(alg * factor, 2), 0))
        if wrong and size == job.max_bytes:
            halves[0] = Half(halves[0].time_us, halves[0].alg_bw, halves[0].bus_bw, wrong)
        rows.append(TableRow(size, count, "float", redop, -1, halves[0], halves[1]))
        size *= 2
    return rows


def run_nccl(twin: FleetSim, job: NcclJob, cache: NodeViews | None = None) -> JobLog:
    """Run ``job`` on the simulated fleet; the launcher's log, exit code and path. ``cache`` holds
    the twin's node views to reuse (a certification's substrate keeps one set for every job)."""
    views = (cache or NodeViews(twin)).many(job.nodes, job.started_at)
    missing = [n for n, v in zip(job.nodes, views, strict=True) if v is None]
    if missing:
        return JobLog(f"error: node {missing[0]} is not in the fleet\n", 1, "no node", "network")
    nvs = [v for v in views if v is not None]
    # A view's visible devices are computed on each read: read once per node for the job.
    shown = [(v.node.hostname, v.visible) for v in nvs]
    for v, (host, visible) in zip(nvs, shown, strict=True):
        if v.level("gpu_operand_unavailable") > 0 or not visible:
            msg = f"{host}: CUDA driver unusable: no NVIDIA device is exposed to the pod"
            return JobLog(msg + "\n", 1, msg, "network")
    path = path_of(twin, nvs, job.nvlink)
    latency = NVLINK_LATENCY_US if path == "nvlink" else NET_LATENCY_US
    if path == "nvlink":
        got = _nvlink_busbw(nvs, job.collective)
        busbw, error = (got, "") if got is not None else (0.0, "no intra-node collective path")
    else:
        for v in nvs:
            if v.level("rdma_memlock_limit") > 0:
                msg = (
                    f"NCCL WARN Call to ibv_reg_mr failed on {v.node.hostname}: "
                    "RLIMIT_MEMLOCK too small"
                )
                return JobLog(msg + "\n", 1, msg, path)
        busbw, error = _network_busbw(nvs)
    if error:
        return JobLog(error + "\n", 1, error, path)
    rng = _rng(job)
    busbw *= 1 + 0.004 * max(-3.0, min(3.0, float(rng.standard_normal())))
    ranks = [Rank(host, d.slot, d.pci_bus_id, d.name) for host, ds in shown for d in ds]
    wrong = sum(4096 for _, ds in shown for d in ds if d.level("gpu_silent_data_corruption") > 0)
    rows = _rows(job, busbw, len(ranks), latency, wrong, rng)
    text = render_log(job.collective, ranks, rows, min_bytes=job.min_bytes, max_bytes=job.max_bytes)
    return JobLog(text, 1 if wrong else 0, path=path)
