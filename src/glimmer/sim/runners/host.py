"""Host runners: host-health (passive fault counters, §9.8), dcgm-diag (DCGM diagnostics,
§9.9), fingerprint-probe (PCI inventory, §9.16) and disk-io (O_DIRECT storage, §9.14)."""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.sim.runners.call import RunnerCall, RunnerOutput
from glimmer.sim.runners.common import duration, has_kmsg, has_mount
from glimmer.sim.runners.emit import ERROR, FAIL, PASS, Stdout
from glimmer.sim.runners.gpu_common import (
    DRIVER_VERSION,
    ECC_CORRECTABLE_RATE,
    ECC_UNCORRECTABLE_RATE,
    PCIE_REPLAY_RATE,
    ROW_REMAP_RATE,
    missing_gpus,
    window_count,
    xid_events,
)
from glimmer.sim.runners.node import NodeView, view
from glimmer.sim.runners.noise import Jitter, rng_for
from glimmer.sim.twin import FleetSim

HOST_HEALTH_VERSION = 3


def _idle_temp(nv: NodeView) -> float:
    op = nv.op
    return op["ambient_c"] + op["rise_c"] * op["idle_fraction"] + op["cooling_rise_c"] * nv.cooling


def _nic_down_events(nv: NodeView, seconds: float) -> tuple[int, int, int]:
    """(NIC ports, ports up, link-down events in the window). A port found down counts one
    event (the runner reads the link state, and a port that is down was brought down); a
    flapping port goes down once a minute; a degraded port keeps retraining to a lower rate,
    and each retrain takes the link down once in the window."""
    ports = up = events = 0
    for nic in nv.node.nics:
        ports += 1
        down = nv.nic_level(nic.key, "nic_link_down") > 0
        flap = nv.nic_level(nic.key, "nic_link_flapping")
        if down:
            events += 1
        elif flap > 0:
            events += max(1, round(seconds / 60.0))
            up += 1
        elif nv.nic_level(nic.key, "nic_degraded") > 0:
            events += 1
            up += 1
        else:
            up += 1
    return ports, up, events


# ---- host-health ----------------------------------------------------------------------------


def host_health(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    out = Stdout("HOST_HEALTH")
    nv = view(twin, call.node, call.started_at)
    if nv is None:
        return out.end(f"HOST_HEALTH_ERROR: node {call.node} is not in the fleet", ERROR, 0.5)
    raw = call.env.get("BURNIN_DURATION_SECONDS", "") or str(call.duration_seconds)
    asked = int(raw) if raw.isdigit() else 0
    window = float(min(asked, 30) if asked > 0 else 15)
    jit = Jitter(rng_for(call))
    out.kv("host_health_version", HOST_HEALTH_VERSION)
    out.kv("host_health_stage", "nvml")
    faults: dict[str, int] = {}
    nvml = nv.level("gpu_operand_unavailable") <= 0
    devices = nv.visible
    if nvml and nv.devices:
        out.kv("nvml_status", "ok")
        answered = len(devices) == len(nv.devices)  # a lost GPU answers nothing
        ecc_parts = [d for d in devices if (p := d.part) is not None and p.ecc]
        if devices and not ecc_parts:
            out.kv("ecc_mode", "unsupported")
            out.na("ecc_errors")
        elif answered:
            out.kv("ecc_mode", "enabled")
            dbe = sum(
                nv.lifetime_count("gpu_ecc_uncorrectable", ECC_UNCORRECTABLE_RATE, d.gpu)
                for d in ecc_parts
            )
            sbe = sum(
                nv.lifetime_count("gpu_ecc_correctable", ECC_CORRECTABLE_RATE, d.gpu)
                for d in ecc_parts
            )
            out.kv("ecc_errors", dbe)
            out.kv("eccDbeTotal", dbe)
            out.kv("eccSbeTotal", sbe)
            faults["ecc_errors"] = dbe
        if devices and not any((p := d.part) is not None and p.row_remapper for d in devices):
            out.na("rows_remapped")
        elif answered:
            rows = sum(nv.lifetime_count("gpu_row_remap", ROW_REMAP_RATE, d.gpu) for d in devices)
            out.kv("rows_remapped", rows)
            faults["rows_remapped"] = rows
        out.kv("retiredPagesTotal", 0)
        replays = sum(
            window_count(PCIE_REPLAY_RATE, d.level("gpu_pcie_downtrained"), window) for d in devices
        )
        out.kv("pcie_replay_count", replays)
        out.kv("pcieReplaySource", "nvml")
        faults["pcie_replay_count"] = replays
        if devices:
            out.kv("gpu_temp_c", jit.abs(_idle_temp(nv), 0.5), 1)
            idle_w = sum(d.limit_w for d in devices) * nv.op["idle_fraction"]
            out.kv("power_draw_w", jit.rel(idle_w, 0.01), 1)
            out.kv("gpu_name", devices[0].name)
        out.kv("devices_visible", len(devices))
        out.kv("driver_version", DRIVER_VERSION)
    else:
        out.kv("nvml_status", "unavailable")
    out.kv("host_health_stage", "kernel-log")
    if has_kmsg(call.spec):
        xids, _ = xid_events(nv, nv.visible, window)
        for dev in nv.devices:
            if not dev.present:  # the kernel line the scan matched, as evidence
                out.text(f"kmsg: NVRM: Xid (PCI:{dev.pci_bus_id}): 79, GPU has fallen off the bus.")
        out.kv("xid_source", "kmsg")
        out.kv("xid_count", xids)
        out.kv("xid_preexisting", 0)
        out.kv("kernel_hw_errors", 0)
        faults["xid_count"] = xids
    else:
        out.kv("xid_source", "none")
        out.kv("xid_source_detail", "/dev/kmsg is not readable (mount it, privileged, uid 0)")
    out.kv("host_health_stage", "pcie-aer")
    out.kv("aer_status", "ok")
    out.kv("pcie_aer_fatal", 0)
    out.kv("pcie_aer_nonfatal", 0)
    out.kv("pcie_aer_correctable", faults.get("pcie_replay_count", 0))
    out.kv("host_health_stage", "nic")
    if call.spec.host_network:
        ports, up, events = _nic_down_events(nv, window)
        out.kv("nic_status", "ok")
        out.kv("nic_count", ports)
        out.kv("nic_up", up)
        out.kv("nic_link_down", events)
        ib = [n for n in nv.node.nics if n.role == "backend"]
        out.kv("ib_ports", len(ib))
        out.kv("ib_ports_active", sum(1 for n in ib if nv.nic_level(n.key, "nic_link_down") <= 0))
        out.kv("ib_counter_status", "ok")
        out.kv("ib_counters_saturated", 0)
        faults["nic_link_down"] = events
    else:
        out.kv("nic_absent_reason", "no hostNetwork: the pod sees its own namespace")
    elapsed = window + jit.uniform(0.5, 2.0)
    out.kv("observation_window_s", window, 1)
    out.kv("elapsed_s", elapsed, 1)
    bad = {k: v for k, v in faults.items() if v}
    out.kv("node_ready", "false" if bad else "true")
    out.kv("host_health_stage", "done")
    if bad:
        detail = " ".join(f"{k}={v}" for k, v in bad.items())
        return out.end(f"HOST_HEALTH_FAULT: {detail}", FAIL, elapsed)
    return out.end("HOST_HEALTH_OK", PASS, elapsed)


# ---- dcgm-diag ------------------------------------------------------------------------------

DCGM_VERSION = "4.2.3"
LEVEL_BUDGET_S = {1: 60, 2: 120, 3: 900, 4: 3600}  # ≈1 min, 2 min, 15 min, 1 h (§9.9)
LEVEL_TESTS: dict[int, tuple[str, ...]] = {
    1: ("software",),
    2: ("software", "pcie", "memory"),
    3: ("software", "pcie", "memory", "diagnostic", "targeted_stress", "targeted_power",
        "memory_bandwidth"),
    4: ("software", "pcie", "memory", "diagnostic", "targeted_stress", "targeted_power",
        "memory_bandwidth", "memtest", "pulse_test"),
}  # fmt: skip
# DCGM's per-SKU allowlist gates these plugins on GB10 unless BURNIN_DCGM_ALLOW names them.
GB10_GATED = ("memory", "pcie")


@dataclass(frozen=True)
class _Subtest:
    name: str
    status: str  # pass | fail | skip | not_run
    why: str = ""


def _level(call: RunnerCall) -> tuple[int, str] | str:
    raw = call.env.get("BURNIN_DCGM_LEVEL", "")
    named = {"short": 1, "medium": 2, "long": 3, "xlong": 4}
    if raw:
        level = named.get(raw) or (int(raw) if raw.isdigit() else 0)
        if level not in LEVEL_BUDGET_S:
            return f"BURNIN_DCGM_LEVEL {raw!r} is not 1-4 or short|medium|long|xlong"
        return level, "env"
    budget = duration(call, 600)
    fitting = [lv for lv, s in LEVEL_BUDGET_S.items() if s <= budget]
    return (max(fitting) if fitting else 1), "derived"


def _subtest(nv: NodeView, name: str, allowed: set[str]) -> _Subtest:
    devs = nv.visible
    if any(d.sku.key == "gb10_128gb" for d in devs) and name in GB10_GATED and name not in allowed:
        return _Subtest(name, "not_run", "gated by DCGM's per-SKU allowlist")
    for d in devs:
        if name == "pcie" and d.level("gpu_pcie_downtrained") > 0:
            return _Subtest(name, "fail", f"GPU {d.slot}: PCIe bandwidth below the SKU minimum")
        if name == "pcie" and d.level("gpu_nvlink_error_burst") > 0:
            return _Subtest(name, "fail", f"GPU {d.slot}: NVLink CRC errors above threshold")
        if name == "memory" and d.level("gpu_ecc_uncorrectable") > 0:
            return _Subtest(name, "fail", f"GPU {d.slot}: uncorrectable ECC error during test")
        if name == "memory" and d.level("gpu_row_remap") >= 1.0:
            return _Subtest(name, "fail", f"GPU {d.slot}: row remapping failed")
        if name == "diagnostic" and d.level("gpu_silent_data_corruption") > 0:
            return _Subtest(name, "fail", f"GPU {d.slot}: GEMM result mismatch")
        if name == "targeted_power" and (nv.cooling > 0 or d.level("gpu_low_pstate") > 0):
            return _Subtest(name, "fail", f"GPU {d.slot}: could not reach the target power")
    return _Subtest(name, "pass")


def dcgm_diag(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    out = Stdout("DCGM_DIAG")
    nv = view(twin, call.node, call.started_at)
    if nv is None:
        return out.errored(f"node {call.node} is not in the fleet", 0.5)
    if not has_mount(call.spec, "/usr/local/dcgm"):
        return out.errored("dcgmi not found: mount the site's DCGM at /usr/local/dcgm", 0.5)
    if nv.level("gpu_operand_unavailable") > 0:
        return out.errored("nv-hostengine could not start: no NVIDIA driver in the pod", 2.0)
    short = missing_gpus(nv, out)
    if short is not None:
        return short
    level = _level(call)
    if isinstance(level, str):
        return out.errored(level, 0.2)
    lv, source = level
    if not nv.visible:
        return out.skipped("no supported GPU for DCGM diagnostics", 2.0)
    allowed = {a.strip() for a in call.env.get("BURNIN_DCGM_ALLOW", "").split(",") if a.strip()}
    results = [_subtest(nv, name, allowed) for name in LEVEL_TESTS[lv]]
    jit = Jitter(rng_for(call))
    elapsed = LEVEL_BUDGET_S[lv] * jit.uniform(0.55, 0.8)
    failed = [r for r in results if r.status == "fail"]
    not_run = [r for r in results if r.status == "not_run"]
    window = elapsed
    replays = sum(
        window_count(PCIE_REPLAY_RATE, d.level("gpu_pcie_downtrained"), window) for d in nv.visible
    )
    rows = sum(window_count(ROW_REMAP_RATE, d.level("gpu_row_remap"), window) for d in nv.visible)
    dbe = sum(
        window_count(ECC_UNCORRECTABLE_RATE, d.level("gpu_ecc_uncorrectable"), window)
        for d in nv.visible
    )
    sbe = sum(
        window_count(ECC_CORRECTABLE_RATE, d.level("gpu_ecc_correctable"), window)
        for d in nv.visible
    )
    _, xid = xid_events(nv, nv.visible, window)
    out.kv("diagLevel", lv)
    out.kv("diagLevelSource", source)
    out.kv("diagTests", ",".join(LEVEL_TESTS[lv]))
    out.kv("diagParams", ";".join(f"{a}.is_allowed=true" for a in sorted(allowed)) or "none")
    out.kv("diagTimeoutS", max(duration(call, 600) - 15, 1))
    out.kv("dcgmVersion", DCGM_VERSION)
    out.kv("driverVersion", DRIVER_VERSION)
    out.kv("devicesVisible", len(nv.visible))
    out.kv("testsRun", sum(1 for r in results if r.status in ("pass", "fail")))
    out.kv("tests_failed", len(failed))
    out.kv("testsWarned", 0)
    out.kv("testsNotRun", len(not_run))
    out.kv("testsSkipped", sum(1 for r in results if r.status == "skip"))
    out.kv("sampleCount", int(elapsed // 5))
    out.kv("pcie_replay_count", replays)
    out.kv("rows_remapped", rows)
    out.kv("eccSbeTotal", sbe)
    out.kv("eccDbeTotal", dbe)
    out.kv("gpuTempC", jit.abs(_idle_temp(nv) + 20.0, 1.0), 1)
    out.kv("lastXidCode", xid)
    out.kv("counterBaselineReset", "false")
    out.kv("prunedObjects", 0)
    out.kv("dcgmiExitCode", 226 if failed else 0)
    out.kv("elapsedS", elapsed, 1)
    if failed:
        detail = "; ".join(f"{r.name}: {r.why}" for r in failed)
        return out.failed(f"{len(failed)} subtest(s) failed: {detail}", elapsed)
    if not_run:
        names = ", ".join(f"{r.name} ({r.why})" for r in not_run)
        return out.errored(f"subtests not run: {names}", elapsed)
    return out.passed(elapsed)


# ---- fingerprint-probe ----------------------------------------------------------------------


def fingerprint_probe(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    out = Stdout("FINGERPRINT_PROBE")
    nv = view(twin, call.node, call.started_at)
    if nv is None:
        return out.errored(f"node {call.node} is not in the fleet", 0.5)
    sysfs = call.env.get("FINGERPRINT_PROBE_SYSFS", "/host/sys")
    if not has_mount(call.spec, sysfs):
        return out.skipped(f"sysfs is not mounted at {sysfs}", 0.2)
    devices = nv.visible  # a GPU that fell off the bus is gone from the PCI tree
    out.kv("acceleratorCount", len(devices))
    if devices:
        out.kv("pciAddresses", ",".join(d.pci_bus_id for d in devices))
        out.kv("pciVendorIds", ",".join("0x10de" for _ in devices))
        # The SKU table's device id (vendor 0x10de); 0x0000 where it does not know one.
        ids = (d.sku.pci_device_id or "0x0000" for d in devices)
        out.kv("pciDeviceIds", ",".join(ids))
        out.kv("acceleratorVendors", "NVIDIA")
        if nv.level("gpu_operand_unavailable") <= 0:
            out.kv("acceleratorDrivers", "nvidia")
    return out.passed(0.4)


# ---- disk-io --------------------------------------------------------------------------------

# Decimal MB/s and µs for 1 MiB O_DIRECT blocks: local NVMe (a Gen4 data-centre drive) and a
# shared all-flash cluster over the frontend fabric. Synthetic but of the usual order.
LOCAL_DISK = {"write": 3200.0, "read": 6500.0, "latency": 160.0}
SHARED_DISK = {"write": 2100.0, "read": 3800.0, "latency": 420.0}


def disk_io(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    out = Stdout("DISK_IO")
    nv = view(twin, call.node, call.started_at)
    if nv is None:
        return out.errored(f"node {call.node} is not in the fleet", 0.5)
    path = call.env.get("DISK_IO_PATH", "")
    if not path:
        return out.skipped("no DISK_IO_PATH declared", 0.1)
    if not path.startswith("/") or not has_mount(call.spec, path):
        return out.errored(f"refused: {path} is not a writable host mount", 0.2)
    # The path is on the node's shared storage when one of its components names the cluster
    # (e.g. /mnt/storage-a/burnin); anything else is a local disk.
    cluster = nv.node.storage_cluster.removeprefix("storage:")
    shared = bool(cluster) and cluster in path.strip("/").split("/")
    figures = SHARED_DISK if shared else LOCAL_DISK
    slow = nv.level("gpu_storage_latency") if shared else 0.0
    speed = 1.0 - nv.op["storage_loss"] * slow
    jit = Jitter(rng_for(call))
    size_mb = int(call.env.get("DISK_IO_SIZE_MB", "1024") or 1024)
    write = jit.rel(figures["write"] * speed, 0.02)
    read = jit.rel(figures["read"] * speed, 0.02)
    latency = jit.rel(figures["latency"] / speed, 0.02)
    out.kv("diskIoPath", path)
    out.kv("writeBandwidthMBs", write)
    out.kv("readBandwidthMBs", read)
    out.kv("ioLatencyUs", latency)
    out.kv("p99LatencyUs", latency * jit.uniform(2.2, 3.0))
    out.kv("ioErrors", 0)
    elapsed = size_mb * 1.048576 / write + size_mb * 1.048576 / read + 0.5
    return out.passed(min(elapsed, float(duration(call, 120))))
