"""Memory runners: memory-bw (nvbandwidth copy paths, §9.6) and memory-stress (host DRAM via
stressapptest, §9.7)."""

from __future__ import annotations

from functools import lru_cache

from glimmer.contract.gpu_class import AXIS, AXIS_ENV, CLASSES_ENV, Choice, ClassChoice, choose
from glimmer.sim.runners.call import RunnerCall, RunnerOutput
from glimmer.sim.runners.common import duration
from glimmer.sim.runners.emit import Stdout
from glimmer.sim.runners.gpu_common import DRIVER_VERSION, missing_gpus
from glimmer.sim.runners.node import Device, NodeView, view
from glimmer.sim.runners.noise import Jitter, rng_for
from glimmer.sim.twin import FleetSim

NVBANDWIDTH_REF = "v0.7"
BUFFER_MIB = 512
SAMPLES = 3
# Host DRAM throughput under stressapptest's copy threads, MB/s per vCPU (a synthetic figure:
# ~60 GB/s on a 128-vCPU host, the order of one DDR5 socket's achievable copy rate).
HOST_COPY_MBS_PER_CPU = 470.0


@lru_cache(maxsize=1024)
def _cell(axis: str | None, classes: str | None, gpu_names: tuple[str, ...]) -> ClassChoice:
    """:func:`choose` over the only two variables it reads: a node's every memory-bw cell asks
    again with the same class table (a parse of it per call was a per cent of a fleet's run)."""
    env = {name: value for name, value in ((AXIS_ENV, axis), (CLASSES_ENV, classes)) if value}
    return choose(env, gpu_names)


def pcie_factor(dev: Device) -> float:
    """A downtrained link has half the lanes per half intensity (telemetry's width rule)."""
    level = dev.level("gpu_pcie_downtrained")
    return 1.0 / 2.0 ** round(2.0 * level)


def _peer_factor(nv: NodeView, dev: Device) -> float:
    """A degraded NVLink domain (or failed switch tray) slows peer copies like work (§4.5)."""
    level = max(dev.level("gpu_nvlink_degraded"), dev.level("gpu_nvswitch_tray_failure"))
    return 1.0 - nv.op["congestion_loss"] * level


def memory_bw(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    out = Stdout("MEMORY_BW")
    nv = view(twin, call.node, call.started_at)
    if nv is None:
        return out.errored(f"node {call.node} is not in the fleet", 0.5)
    if nv.level("gpu_operand_unavailable") > 0:
        return out.skipped("libcuda.so.1 is not present (no NVIDIA driver in the pod)", 0.5)
    # Each device with its figures, looked up once (a property that asks the figures table).
    parts = [(d, p) for d in nv.visible if (p := d.part) is not None]
    devices = [d for d, _ in parts]
    # Which cell of a per-product matrix judges these GPUs is settled before anything is
    # measured, so a GPU missing from the bus fails only the cell that judges the node.
    cell = _cell(call.env.get(AXIS_ENV), call.env.get(CLASSES_ENV), tuple(d.name for d in devices))
    if cell.home:
        out.kv(AXIS, cell.home)
    if cell.choice is Choice.SKIP:
        return out.skipped(cell.reason, 0.5)
    if cell.choice is Choice.ERROR:
        return out.errored(cell.reason, 0.5)
    short = missing_gpus(nv, out)
    if short is not None:
        return short
    if not devices:
        return out.skipped("no CUDA device", 0.5)
    jit = Jitter(rng_for(call))
    out.text(f"nvbandwidth| nvbandwidth Version: {NVBANDWIDTH_REF}")
    out.text(f"nvbandwidth| Device 0: {devices[0].name} ({devices[0].pci_bus_id})")

    def cells(figure: float, per_dev: list[float], sigma: float) -> tuple[float, float]:
        values = [jit.rel(figure * f, sigma) for f in per_dev]
        return min(values), max(values)

    h2d = [p.h2d_gbs * pcie_factor(d) for d, p in parts]
    d2d = [p.d2d_gbs for _, p in parts]
    h2d_min, h2d_max = cells(1.0, h2d, 0.006)
    d2h_min, d2h_max = cells(1.005, h2d, 0.006)
    d2d_min, d2d_max = cells(1.0, d2d, 0.004)
    out.kv("h2d_bandwidth_gbs", h2d_min)
    out.kv("hostToDeviceBandwidthMaxGBs", h2d_max)
    out.kv("d2h_bandwidth_gbs", d2h_min)
    out.kv("deviceToHostBandwidthMaxGBs", d2h_max)
    out.kv("d2d_bandwidth_gbs", d2d_min)
    out.kv("deviceToDeviceBandwidthMaxGBs", d2d_max)
    peer = parts[0][1].peer_gbs
    if len(devices) < 2 or peer is None:
        for key in ("peer_read_bandwidth_gbs", "peerReadBandwidthMaxGBs",
                    "peer_write_bandwidth_gbs", "peerWriteBandwidthMaxGBs"):  # fmt: skip
            out.na(key)
    else:
        # A cell's bandwidth is limited by the slower end of the pair.
        factors = [_peer_factor(nv, d) for d in devices]
        pairs = [min(a, b) for i, a in enumerate(factors) for b in factors[i + 1 :]]
        read_min, read_max = cells(peer, pairs, 0.004)
        write_min, write_max = cells(peer * 0.98, pairs, 0.004)
        out.kv("peer_read_bandwidth_gbs", read_min)
        out.kv("peerReadBandwidthMaxGBs", read_max)
        out.kv("peer_write_bandwidth_gbs", write_min)
        out.kv("peerWriteBandwidthMaxGBs", write_max)
    out.kv("nvbandwidthRef", NVBANDWIDTH_REF)
    out.kv("gpuName", devices[0].name)
    out.kv("devicesVisible", len(nv.visible))
    out.kv("cudaDriverVersion", DRIVER_VERSION)
    out.kv("transferSizeBytes", BUFFER_MIB * 2**20)
    out.kv("testSamples", SAMPLES)
    # Three copy testcases per device plus the all-pairs peer matrices, SAMPLES each.
    n = len(devices)
    elapsed = 8.0 + 0.6 * n + 0.35 * n * (n - 1) + jit.uniform(0.0, 2.0)
    budget = duration(call, 600, 0)
    out.kv("elapsedS", elapsed, 1)
    if budget and elapsed > budget:
        return out.errored(f"nvbandwidth did not finish within the {budget} s budget", budget)
    return out.passed(elapsed)


def memory_stress(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    out = Stdout("STRESSAPPTEST")
    nv = view(twin, call.node, call.started_at)
    if nv is None:
        return out.errored(f"node {call.node} is not in the fleet", 0.5)
    seconds = duration(call, 600)
    jit = Jitter(rng_for(call))
    cpus = max(nv.node.cpus, 1)
    for minute in range(60, seconds, 60):
        out.kv("elapsed_s", minute)
    out.kv("hardware_incidents", 0)
    out.kv("miscompares", 0)
    out.kv("sdc_count", 0)
    out.kv("read_bandwidth_mbs", jit.rel(HOST_COPY_MBS_PER_CPU * cpus, 0.01))
    out.kv("write_bandwidth_mbs", jit.rel(HOST_COPY_MBS_PER_CPU * cpus * 0.97, 0.01))
    elapsed = seconds + jit.uniform(1.0, 3.0)
    out.kv("durationRequestedS", seconds)
    out.kv("satRunS", seconds)
    out.kv("memoryCoveredPct", 70.0, 1)
    out.kv("threads", cpus)
    out.kv("tool", "stressapptest")
    out.kv("toolVersion", "1.0.11")
    out.kv("satStatus", "pass")
    out.kv("elapsed_s", elapsed, 1)
    return out.passed(elapsed)
