"""GPU load runners: clockprobe (sustained clock under an FMA chain) and the soak core shared
by thermal-soak and gpu-burn (back-to-back SGEMM, bitwise-checked), specs/burnin.md §9.2-9.4."""

from __future__ import annotations

from glimmer.sim.runners.call import RunnerCall, RunnerOutput
from glimmer.sim.runners.common import duration, has_kmsg
from glimmer.sim.runners.devices import Reading, emit_fold
from glimmer.sim.runners.emit import Stdout
from glimmer.sim.runners.figures import gb10_clock_pct, gb10_clockprobe_pct
from glimmer.sim.runners.gpu_common import (
    ECC_UNCORRECTABLE_RATE,
    SDC_RATE,
    Devices,
    allocate,
    identity,
    window_count,
    xid_events,
)
from glimmer.sim.runners.load import LoadPoint, under_load
from glimmer.sim.runners.node import Device, NodeView, view
from glimmer.sim.runners.noise import Jitter, rng_for
from glimmer.sim.twin import FleetSim

# NVML clock-event reason bits (nvmlClocksEventReasons): the per-reason counters' names.
REASONS: tuple[tuple[str, int], ...] = (
    ("gpuIdle", 0x1), ("applicationsClocks", 0x2), ("swPowerCap", 0x4), ("hwSlowdown", 0x8),
    ("syncBoost", 0x10), ("swThermalSlowdown", 0x20), ("hwThermalSlowdown", 0x40),
    ("hwPowerBrake", 0x80), ("displayClock", 0x100),
)  # fmt: skip
THERMAL_REASONS = ("swThermalSlowdown", "hwThermalSlowdown")
SOAK_MATRIX_N = 8192
GEMM_TFLOP = 2.0 * SOAK_MATRIX_N**3 / 1e12  # one N^3 SGEMM, in TFLOP


def _throttle(
    out: Stdout, thermal: bool, samples: int, window_s: float, per_reason: bool = True
) -> int:
    """Print the throttle evidence (clockprobe adds one sample counter per NVML reason);
    returns throttleEvents."""
    events = 1 + int(window_s // 120) if thermal else 0
    latched = int(samples * 0.6) if thermal else 0
    mask = 0
    for name, bit in REASONS:
        n = latched if name in THERMAL_REASONS else 0
        mask |= bit if n else 0
        if per_reason:
            out.kv(f"{name}Samples", n)
    out.kv("throttledSamples", latched)
    out.kv("throttleReasonsMask", mask)
    out.kv("throttleReasons", ",".join(THERMAL_REASONS) if thermal else "none")
    return events


def _load_threads(dev: Device) -> int:
    # blocks = SMs × 8 of 256 threads; SMs from the FP32 peak (128 FP32 lanes per SM, 2 flops).
    part = dev.part
    if part is None:
        return 0
    sms = round(part.fp32_tflops * 1e12 / (256.0 * part.rated_boost_mhz * 1e6))
    return sms * 8 * 256


def _float_env(call: RunnerCall, name: str, default: float) -> float | None:
    raw = call.env.get(name, "")
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        return None


# ---- clockprobe ---------------------------------------------------------------------------


def clockprobe(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    out = Stdout("CLOCKPROBE")
    nv = view(twin, call.node, call.started_at)
    if nv is None:
        return out.errored(f"node {call.node} is not in the fleet", 0.5)
    floor = _float_env(call, "CLOCKPROBE_MIN_SUSTAINED_CLOCK_PCT", 70.0)
    thermal_floor = _float_env(call, "CLOCKPROBE_MIN_THERMAL_CLOCK_PCT", 50.0)
    thermal_temp = _float_env(call, "CLOCKPROBE_THERMAL_TEMP_C", 80.0)
    if floor is None or thermal_floor is None or thermal_temp is None:
        return out.errored("unparseable CLOCKPROBE_* configuration", 0.2)
    thermal_floor = min(thermal_floor, floor)  # never stricter than the general floor
    got = allocate(nv, call, out)
    if isinstance(got, RunnerOutput):
        return got
    if not got.allocated:
        return out.skipped("no accelerator visible", 0.5)
    requested = duration(call, 60)
    window = max(requested, 10)
    if window != requested:
        out.kv("configWarnings", f"duration raised to the 10 s floor from {requested} s")
    jit = Jitter(rng_for(call))
    per_device = window / len(got.allocated)
    warmup = min(max(per_device / 5.0, 2.0), 10.0)
    sampled = max(per_device - warmup, 1.0)
    out.kv("durationRequestedS", requested)
    out.kv("warmupS", warmup, 1)
    out.kv("sampleWindowS", sampled, 1)
    identity(out, got.allocated[0])
    readings: list[Reading] = []
    labels: list[tuple[str, str, bool]] = []  # per device: floor basis, class, wedge
    failed: list[str] = []
    loads: list[LoadPoint] = []  # each GPU's, worked out once
    for dev in got.allocated:
        part = dev.part  # looked up once: a property that asks the figures table
        if part is None:
            return out.skipped(f"no rated boost clock for {dev.name}", 0.5)
        lp = under_load(nv, dev)
        loads.append(lp)
        healthy = gb10_clockprobe_pct(window) if dev.sku.key == "gb10_128gb" else part.fma_clock_pct
        pct = min(100.0, jit.rel(healthy * lp.clock_fraction, 0.004))
        lo = pct - jit.uniform(0.5, 2.5)
        hi = min(100.0, pct + jit.uniform(0.3, 1.5))
        rated = part.rated_boost_mhz
        fma = part.fp32_tflops * pct / 100.0 * 0.98
        peak_fma = part.fp32_tflops * hi / 100.0 * 0.98
        temp = jit.abs(lp.temp_c, 0.4)
        samples = int(sampled * 10)
        v: dict[str, float | int | str] = {
            "sustainedClockPct": pct,
            "sm_clock_mhz": rated * pct / 100.0,
            "minSmClockPct": lo,
            "maxSmClockPct": hi,
            "sustainedFmaThroughputTflops": fma,
            "peakFmaThroughputTflops": peak_fma,
            "throughputConsistencyPct": fma / peak_fma * 100.0,
            "gpuUtilizationPct": jit.uniform(99.0, 100.0),
            "memUtilizationPct": jit.uniform(0.5, 2.0),
            "gpuTempC": temp + jit.uniform(0.5, 2.0),
            "meanTempUnderLoadC": temp,
            "tempAtMinClockC": temp + jit.uniform(0.0, 1.0),
            "powerDrawW": min(dev.limit_w, jit.rel(lp.power_w, 0.01) * 1.02),
            "meanPowerW": min(dev.limit_w * 0.99, jit.rel(lp.power_w, 0.01)),
            "enforcedPowerLimitW": dev.limit_w,
            "samplesTaken": samples,
            "loadLaunches": int(sampled / 0.05),
        }
        if part.mem_clock_mhz is not None:
            v["mem_clock_mhz"] = part.mem_clock_mhz
        if dev.sku.max_power_w is not None:
            v["defaultPowerLimitW"] = dev.sku.max_power_w
            v["powerLimitRatioPct"] = dev.limit_w / dev.sku.max_power_w * 100.0
        v["rated_boost_clock_mhz"] = rated
        applied = thermal_floor if (lp.thermal and temp >= thermal_temp) else floor
        v["clockFloorAppliedPct"] = applied
        labels.append(
            (
                "thermal" if applied != floor else "general",
                "thermal" if lp.thermal else "none",
                lp.pinned and not lp.thermal,
            )
        )
        dec = {"sm_clock_mhz": 0, "mem_clock_mhz": 0, "rated_boost_clock_mhz": 0}
        readings.append(Reading(dev, v, dec))
        if pct < applied:
            kind = "thermal" if lp.thermal else ("pinned clock" if lp.pinned else "none")
            failed.append(
                f"device {dev.slot} sustained {pct:.2f}% of rated < {applied:g}% ({kind})"
            )
    worst = emit_fold(
        out, "clockprobe", readings, visible=len(got.visible), window_s=per_device,
        concurrency="sequential", primary="sustainedClockPct",
        spreads={"sustainedClockSpreadPct": "sustainedClockPct",
                 "fmaThroughputSpreadPct": "sustainedFmaThroughputTflops"},
    )  # fmt: skip
    wdev = got.allocated[worst]
    # Labels describe the device behind the gated figure; a wedge anywhere is worth saying.
    out.kv("clockFloorBasis", labels[worst][0])
    out.kv("throttleClassification", labels[worst][1])
    out.kv("pdWedgeSuspected", any(w for _, _, w in labels))
    thermal_any = any(lp.thermal for lp in loads)
    events = _throttle(out, thermal_any, int(sampled * 10), window)
    out.kv("throttleEvents", events)
    out.kv("clockFloorPct", floor)
    out.kv("thermalClockFloorPct", thermal_floor)
    out.kv("thermalTempThresholdC", thermal_temp)
    out.kv("loadThreads", _load_threads(wdev))
    out.kv("loadItersPerLaunch", 4096)
    out.kv("nvmlUnsupported", "none")
    out.kv("unsupportedReads", 0)
    elapsed = window + jit.uniform(2.0, 4.0)
    out.kv("elapsedS", elapsed, 1)
    if failed:
        return out.failed("; ".join(failed), elapsed)
    return out.passed(elapsed)


# ---- the soak core: thermal-soak and gpu-burn ----------------------------------------------


def _soak_reading(
    dev: Device, lp: LoadPoint, jit: Jitter, seconds: float, active: float, gpu_burn: bool
) -> Reading:
    part = dev.part  # looked up once: a property that asks the figures table
    assert part is not None
    healthy = gb10_clock_pct(seconds) if dev.sku.key == "gb10_128gb" else part.soak_clock_pct
    pct = min(100.0, jit.rel(healthy * lp.clock_fraction, 0.004))
    tflops = jit.rel(part.sgemm_tflops * pct / part.soak_clock_pct, 0.005)
    iterations = int(tflops * active / GEMM_TFLOP)
    sdc = dev.level("gpu_silent_data_corruption")
    incidents = window_count(SDC_RATE, sdc, active)
    miscompares = sum(1 + jit.poisson(512.0) for _ in range(incidents))
    temp = jit.abs(lp.temp_c, 0.4)
    v: dict[str, float | int | str] = {
        ("errors" if gpu_burn else "miscompares"): miscompares,
        "sdcDetections": incidents,
        "nonfiniteCount": 0,
        ("iterations" if gpu_burn else "iterationsCompleted"): iterations,
        ("tflops" if gpu_burn else "sustainedThroughputTflops"): tflops,
        "sustainedClockPct": pct,
        "minSmClockPct": pct - jit.uniform(0.5, 3.0),
        "maxSmClockPct": min(100.0, pct + jit.uniform(0.3, 2.0)),
        "smClockMHz": part.rated_boost_mhz * pct / 100.0,
        "ratedBoostClockMHz": part.rated_boost_mhz,
        "gpuUtilizationPct": jit.uniform(98.0, 100.0),
        "memUtilizationPct": jit.uniform(20.0, 35.0),
        ("gpuTempC" if gpu_burn else "peak_temp_c"): temp + jit.uniform(0.5, 2.0),
        "meanTempC": temp,
        ("powerDrawW" if gpu_burn else "peak_power_w"): min(
            dev.limit_w, jit.rel(lp.power_w, 0.01) * 1.03
        ),
        "meanPowerW": min(dev.limit_w * 0.99, jit.rel(lp.power_w, 0.01)),
    }
    if part.mem_clock_mhz is not None:
        v["memClockMHz"] = part.mem_clock_mhz
    if part.ecc:
        v["eccErrors"] = window_count(
            ECC_UNCORRECTABLE_RATE, dev.level("gpu_ecc_uncorrectable"), seconds
        )
    dec = {"smClockMHz": 0, "ratedBoostClockMHz": 0, "memClockMHz": 0, "tflops": 3}
    dec["sustainedThroughputTflops"] = 3
    return Reading(dev, v, dec)


def _soak(twin: FleetSim, call: RunnerCall, gpu_burn: bool) -> RunnerOutput:
    prefix = "GPU_BURN" if gpu_burn else "THERMAL_SOAK"
    out = Stdout(prefix)
    nv = view(twin, call.node, call.started_at)
    if nv is None:
        return out.errored(f"node {call.node} is not in the fleet", 0.5)
    clock_floor = _float_env(call, "THERMAL_SOAK_MIN_CLOCK_PCT", 60.0)
    ceiling = _float_env(call, "THERMAL_SOAK_MAX_TEMP_C", 0.0)
    if clock_floor is None or ceiling is None:
        return out.errored("malformed THERMAL_SOAK_* configuration", 0.2)
    got = allocate(nv, call, out)
    if isinstance(got, RunnerOutput):
        return got
    if not got.allocated:
        return out.skipped("no accelerator (cudaErrorNoDevice)", 0.5)
    seconds = float(duration(call, 900, 15))
    warmup = min(max(seconds / 10.0, 5.0), 30.0)
    active = seconds - warmup
    jit = Jitter(rng_for(call))
    loads = [under_load(nv, d) for d in got.allocated]  # each GPU's, worked out once
    readings = [
        _soak_reading(d, lp, jit, seconds, active, gpu_burn)
        for d, lp in zip(got.allocated, loads, strict=True)
    ]
    thermal = any(lp.thermal for lp in loads)
    _progress(out, readings, seconds, gpu_burn)
    return _soak_final(out, call, nv, got, readings, seconds, warmup, thermal, jit, gpu_burn,
                       clock_floor, ceiling)  # fmt: skip


def _progress(out: Stdout, readings: list[Reading], seconds: float, gpu_burn: bool) -> None:
    """Soak runners re-print their counters while running so a truncated log is a snapshot;
    a few snapshots stand for the every-15-s reprint."""
    key = "errors" if gpu_burn else "miscompares"
    it_key = "iterations" if gpu_burn else "iterationsCompleted"
    errors = [int(r.values[key]) for r in readings]  # each device's, read once for the three
    iterations = [int(r.values[it_key]) for r in readings]
    for quarter in (1, 2, 3):
        frac = quarter / 4.0
        out.kv(key, sum(int(n * frac) for n in errors))
        out.kv(it_key, sum(int(n * frac) for n in iterations))
        out.kv("elapsedS" if gpu_burn else "soak_seconds", seconds * frac, 1)


def _soak_final(
    out: Stdout,
    call: RunnerCall,
    nv: NodeView,
    got: Devices,
    readings: list[Reading],
    seconds: float,
    warmup: float,
    thermal: bool,
    jit: Jitter,
    gpu_burn: bool,
    clock_floor: float,
    ceiling: float,
) -> RunnerOutput:
    identity(out, got.allocated[0])
    out.kv("durationRequestedS", int(seconds))
    out.kv("warmupS", warmup, 1)
    out.kv("matrixN", SOAK_MATRIX_N)
    out.kv("clockFloorPct", clock_floor)
    out.kv("tempCeilingC", ceiling)
    out.kv("faultsInjected", 0)
    ecc = all((p := d.part) is not None and p.ecc for d in got.allocated)
    out.kv("eccMode", "Enabled" if ecc else "unsupported")
    worst = emit_fold(
        out, call.kind, readings, visible=len(got.visible), window_s=seconds,
        concurrency="all", primary="sustainedClockPct",
        spreads={"sustainedClockSpreadPct": "sustainedClockPct"},
    )  # fmt: skip
    if not ecc:
        out.na("eccErrors")
    events = _throttle(out, thermal, int((seconds - warmup) * 4), seconds, per_reason=False)
    out.kv("throttle_count" if not gpu_burn else "throttleEvents", events)
    out.kv("powerCapEvents", 0)
    out.kv("gemmActiveS", seconds - warmup, 1)
    out.kv("nvmlUnsupported", "none")
    out.kv("unsupportedReads", 0)
    if has_kmsg(call.spec):
        xids, code = xid_events(nv, got.allocated, seconds)
        out.kv("xidSource", "kmsg")
        out.kv("xid_count", xids)
        out.kv("lastXidCode", code)
        out.kv("xidLogDropped", 0)
        out.kv("xidWindowsWatched", 1)
    else:
        out.kv("xidSource", "none")
        out.kv("xidSourceDetail", "/dev/kmsg not mounted: Xid watch off")
        out.kv("xidWindowsWatched", 0)
    elapsed = seconds + jit.uniform(0.5, 2.0)
    out.kv("elapsedS" if gpu_burn else "soak_seconds", elapsed, 1)
    v = readings[worst].values
    miscompares = sum(int(r.values["errors" if gpu_burn else "miscompares"]) for r in readings)
    if miscompares:
        return out.failed(f"{miscompares} miscompares against the reference GEMM", elapsed)
    if gpu_burn:
        ecc_delta = sum(int(r.values.get("eccErrors", 0)) for r in readings)
        if ecc_delta:
            return out.failed(f"{ecc_delta} uncorrectable ECC errors during the burn", elapsed)
        return out.passed(elapsed)
    if events:
        return out.failed(f"{events} throttle events (thermal)", elapsed)
    pct = float(v["sustainedClockPct"])
    if pct < clock_floor:
        return out.failed(
            f"device {readings[worst].device.slot} sustained {pct:.2f}% < {clock_floor:g}%",
            elapsed,
        )
    peak = max(float(r.values["peak_temp_c"]) for r in readings)  # thermal-soak's key
    if ceiling > 0 and peak > ceiling:
        return out.failed(f"peak temperature {peak:.1f} C > {ceiling:g} C", elapsed)
    return out.passed(elapsed)


def thermal_soak(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    return _soak(twin, call, gpu_burn=False)


def gpu_burn(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    return _soak(twin, call, gpu_burn=True)
