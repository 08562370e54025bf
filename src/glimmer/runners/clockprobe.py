"""clockprobe (§9.2): does the GPU sustain its rated clock under a clock-bound load? The
PD-wedge detector: a part stuck in a low P-state passes every health check but this one.

Per device (one after another by default, the window divided among them): a warm-up of
clamp(window/5, 2 s, 10 s), unsampled; then ~1 s windows of FMA-chain launches calibrated to
~50 ms each (:mod:`glimmer.runners.clockprobe_kernel`), NVML sampled every
``CLOCKPROBE_SAMPLE_INTERVAL_MS`` only while a window is busy. ``sustainedClockPct`` is the mean
SM clock of those samples as a share of the rated boost clock (NVML's max SM clock).

Exit rules, in order: Skip (``CLOCKPROBE_SKIP``) with no accelerator, MIG enabled, or no rated
boost clock; Error with NVML missing or failing while a GPU is visible, a kernel failure, no
samples, mean utilisation under 50 %, or a malformed variable (an Error prints what it has but
never a ``sustainedClockPct``); Fail when ``sustainedClockPct`` is under the applied floor: the
thermal floor when the mean temperature reached ``CLOCKPROBE_THERMAL_TEMP_C`` and a thermal
reason latched (never stricter than the general floor; an unknown temperature buys no
leniency), else the general one. Across devices, Fail > Error > Skip > Pass.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from types import ModuleType

from glimmer.contract.vocab import RunnerVerdict
from glimmer.runners import devices as dv
from glimmer.runners.clockprobe_kernel import FmaLoad, sm_count
from glimmer.runners.gpu_session import open_gpus
from glimmer.runners.nvml import Session, find_device
from glimmer.runners.nvml_sampler import Sampler, Stats, time_scale
from glimmer.runners.outcome import Outcome, errored, failed, skipped
from glimmer.runners.program import Context, main
from glimmer.runners.settings import Settings

KIND = "clockprobe"
DEFAULT_DURATION_S = 60
MIN_DURATION_S = 10
MIN_CLOCK = "CLOCKPROBE_MIN_SUSTAINED_CLOCK_PCT"
MIN_THERMAL_CLOCK = "CLOCKPROBE_MIN_THERMAL_CLOCK_PCT"
THERMAL_TEMP = "CLOCKPROBE_THERMAL_TEMP_C"
SAMPLE_INTERVAL = "CLOCKPROBE_SAMPLE_INTERVAL_MS"
LAUNCH_S = 0.05  # one launch ~50 ms: short enough that a window ends on time
WINDOW_S = 1.0
MIN_UTILIZATION_PCT = 50.0


@dataclass(frozen=True)
class Config:
    requested_s: int
    duration_s: int
    floor_pct: int
    thermal_floor_pct: int
    thermal_temp_c: int
    sample_interval_ms: int
    scale: float
    warnings: tuple[str, ...] = ()


def read_config(settings: Settings) -> Config:
    warnings: list[str] = []
    requested = settings.duration(DEFAULT_DURATION_S)
    duration = requested
    if duration < MIN_DURATION_S:
        duration = MIN_DURATION_S
        warnings.append(f"duration {requested} s raised to the {MIN_DURATION_S} s floor")
    floor = settings.integer(MIN_CLOCK, 70, minimum=0, maximum=100)
    thermal = settings.integer(MIN_THERMAL_CLOCK, 50, minimum=0, maximum=100)
    if thermal > floor:
        warnings.append(f"thermal floor {thermal} % lowered to the general floor {floor} %")
        thermal = floor
    temp = settings.integer(THERMAL_TEMP, 80, minimum=0, maximum=200)
    interval = settings.integer(SAMPLE_INTERVAL, 100)
    if not 10 <= interval <= 5000:
        clamped = min(max(interval, 10), 5000)
        warnings.append(f"sample interval {interval} ms clamped to {clamped} ms")
        interval = clamped
    scale = time_scale(settings)
    return Config(requested, duration, floor, thermal, temp, interval, scale, tuple(warnings))


def kernel_failure(exc: Exception) -> bool:
    """An error from the device or its compiler (torch's CUDA errors are RuntimeErrors, an
    out-of-memory one too; Triton raises its own), as opposed to a bug in this runner."""
    return isinstance(exc, RuntimeError | MemoryError) or type(exc).__module__.startswith("triton")


def warmup_seconds(window_s: float) -> float:
    return min(max(window_s / 5.0, 2.0), 10.0)


@dataclass
class Load:
    """What the load did in the sampled windows."""

    launches: int = 0
    iters: int = 0
    flops: float = 0.0
    busy_s: float = 0.0
    window_tflops: list[float] = field(default_factory=list)


class _Probe:
    def __init__(
        self, cfg: Config, torch: ModuleType, session: Session, devices: int, mode: str
    ) -> None:
        self.cfg, self.torch, self.session = cfg, torch, session
        self.window_s = float(cfg.duration_s)
        self.devices, self.mode = devices, mode
        self.warnings: set[str] = set(cfg.warnings)  # added to from each device's thread
        self.stop = threading.Event()  # the run is ending early: every device stops loading

    def measure(self, device: dv.Device) -> dv.DeviceResult:
        cfg = self.cfg
        out = dv.DeviceResult(device)
        nv = find_device(self.session, None if device.test else device.pci_bus_id, device.index)
        if nv is None:
            out.outcome = errored(f"NVML has no device for {device.torch_device}")
            return out
        ident = nv.identity()
        out.put("gpuName", ident.name or device.name)
        out.put("computeCap", device.compute_cap or ident.compute_cap)
        out.put("pciBusId", ident.pci_bus_id or device.pci_bus_id)
        if ident.mig_enabled is not None:
            out.put("migMode", "enabled" if ident.mig_enabled else "disabled")
        if ident.mig_enabled:
            out.outcome = skipped("MIG is enabled: the clock of a slice is not the part's")
            return out
        rated = ident.rated_sm_clock_mhz
        if rated is None:
            if "ratedSmClockMHz" in nv.unsupported:
                out.outcome = skipped("the part reports no rated boost clock to measure against")
            else:
                out.outcome = errored("the rated boost clock could not be read from NVML")
            return out
        out.put("ratedBoostClockMHz", rated)
        out.put("enforcedPowerLimitW", ident.enforced_power_limit_w, 1)
        out.put("defaultPowerLimitW", ident.default_power_limit_w, 1)
        if ident.enforced_power_limit_w and ident.default_power_limit_w:
            ratio = ident.enforced_power_limit_w / ident.default_power_limit_w * 100
            out.put("powerLimitRatioPct", ratio, 1)

        window = dv.device_window(self.window_s, self.devices, self.mode)
        warmup = warmup_seconds(window)
        out.put("durationRequestedS", cfg.requested_s)
        out.put("warmupS", warmup, 1)
        out.put("sampleWindowS", window - warmup, 1)
        out.put("clockFloorPct", cfg.floor_pct)
        out.put("thermalClockFloorPct", cfg.thermal_floor_pct)
        out.put("thermalTempThresholdC", cfg.thermal_temp_c)
        started = time.monotonic()
        try:
            sms = sm_count(self.torch, device.torch_device)
            load = FmaLoad(self.torch, device.torch_device, sms)
            iters = load.calibrate(LAUNCH_S * cfg.scale, 64 if device.test else 4096)
            out.put("loadThreads", load.threads)
            out.put("loadItersPerLaunch", iters)
            if load.kernel != "triton" and not device.test:
                self.warnings.add("fma load: torch addcmul chain (Triton not installed)")
            sampler = Sampler(nv, cfg.sample_interval_ms / 1000.0 * cfg.scale)
            with sampler:
                ran = self._run(load, iters, sampler, warmup * cfg.scale, window * cfg.scale)
            if not load.finite():
                raise RuntimeError("the FMA chain produced a non-finite value")
        except Exception as exc:
            if not kernel_failure(exc):
                raise  # a bug in this runner: the frame prints its trace
            out.outcome = errored(f"the FMA kernel failed on {device.torch_device}: {exc}")
            return out
        out.put("elapsedS", time.monotonic() - started, 1)
        self._figures(out, ran, sampler.snapshot(), rated, nv.unsupported)
        return out

    def _run(
        self, load: FmaLoad, iters: int, sampler: Sampler, warmup_s: float, window_s: float
    ) -> Load:
        ran = Load()
        end_warmup = time.monotonic() + warmup_s
        while time.monotonic() < end_warmup and not (self.stop.is_set() or dv.stopping()):
            load.launch(iters)
            load.sync()
        end = time.monotonic() + max(0.0, window_s - warmup_s)
        while time.monotonic() < end and not (self.stop.is_set() or dv.stopping()):
            slice_s = min(WINDOW_S * self.cfg.scale, end - time.monotonic())
            sampler.counting.set()
            began = time.perf_counter()
            launches = 0
            while True:  # a window is whole launches: at least one
                load.launch(iters)
                load.sync()  # launches are asynchronous: time what ran, not what was queued
                launches += 1
                if time.perf_counter() - began >= slice_s - LAUNCH_S * self.cfg.scale / 2:
                    break
            took = time.perf_counter() - began
            if sampler.stats.samples == 0:
                sampler.sample_now()  # a window shorter than the interval still gets one
            sampler.counting.clear()
            ran.launches += launches
            ran.iters += launches * iters
            flops = load.flops(launches * iters)
            ran.flops += flops
            ran.busy_s += took
            if took > 0:
                ran.window_tflops.append(flops / took / 1e12)
        return ran

    def _figures(
        self, out: dv.DeviceResult, ran: Load, st: Stats, rated: int, unsupported: set[str]
    ) -> None:
        cfg = self.cfg
        out.put("loadLaunches", ran.launches)
        out.put("samplesTaken", st.samples)
        if ran.busy_s > 0 and ran.window_tflops:
            sustained = ran.flops / ran.busy_s / 1e12
            peak = max(ran.window_tflops)
            out.put("sustainedFmaThroughputTflops", sustained, 6)
            out.put("peakFmaThroughputTflops", peak, 6)
            if peak > 0:
                out.put("throughputConsistencyPct", sustained / peak * 100, 1)
        mean_sm = st.sm.mean
        pct = mean_sm / rated * 100 if mean_sm is not None else None
        out.put("smClockMHz", mean_sm, 0)
        out.put("memClockMHz", st.mem.mean, 0)
        if st.sm.low is not None and st.sm.high is not None:
            out.put("minSmClockPct", st.sm.low / rated * 100, 1)
            out.put("maxSmClockPct", st.sm.high / rated * 100, 1)
        out.put("gpuUtilizationPct", st.util.mean, 1)
        out.put("memUtilizationPct", st.mem_util.mean, 1)
        out.put("gpuTempC", st.temp.high, 1)
        out.put("meanTempUnderLoadC", st.temp.mean, 1)
        out.put("tempAtMinClockC", st.temp_at_min_clock, 1)
        out.put("powerDrawW", st.power.high, 1)
        out.put("meanPowerW", st.power.mean, 1)
        if st.reasons_read:
            out.put("throttleEvents", st.capping_events)
            out.put("throttledSamples", st.throttled_samples)
            out.put("throttleReasonsMask", st.reasons_mask)
            out.put("throttleReasons", st.reasons_text())
            for name, count in st.per_reason.items():
                out.put(f"{name}Samples", count)
        classification = st.classification()
        out.put("throttleClassification", classification)
        out.put("nvmlUnsupported", ",".join(sorted(unsupported)) or "none")
        out.put("unsupportedReads", len(unsupported))

        mean_temp = st.temp.mean
        thermal = mean_temp is not None and mean_temp >= cfg.thermal_temp_c and st.thermal_latched()
        floor = cfg.thermal_floor_pct if thermal else cfg.floor_pct
        out.put("clockFloorAppliedPct", floor)
        out.put("clockFloorBasis", "thermal" if thermal else "general")
        if st.samples == 0 or pct is None:
            out.outcome = errored("no SM clock sample was taken under load")
        elif st.util.mean is not None and st.util.mean < MIN_UTILIZATION_PCT:
            out.outcome = errored(
                f"mean utilisation {st.util.mean:.1f} % under load is below "
                f"{MIN_UTILIZATION_PCT:.0f} %: the load did not hold the GPU"
            )
        else:
            out.put("sustainedClockPct", pct, 2)
            below = pct < floor
            if not st.reasons_read:
                wedge = "unknown"
            else:
                wedge = "true" if below and classification == "none" else "false"
            out.put("pdWedgeSuspected", wedge)
            if below:
                basis = "thermal" if thermal else "general"
                held = f"; {st.pstate_text()}" if st.pstates else ""
                out.outcome = failed(
                    f"sustainedClockPct {pct:.2f} < {floor} % ({basis} floor; throttle "
                    f"{classification}; pdWedgeSuspected {wedge}{held})"
                )


def probe(ctx: Context) -> Outcome:
    cfg = read_config(ctx.settings)
    gpus = open_gpus(ctx.settings, dv.SEQUENTIAL)
    if isinstance(gpus, Outcome):
        return gpus
    torch, found, allocated, mode, session = (
        gpus.torch, gpus.found, gpus.allocated, gpus.mode, gpus.session,
    )  # fmt: skip
    try:
        ctx.report.metric("driverVersion", session.driver_version)
        p = _Probe(cfg, torch, session, len(allocated), mode)
        try:
            results = dv.for_each(allocated, mode, p.measure)
        except BaseException:  # SIGTERM or a crash while devices load concurrently
            p.stop.set()
            raise
    finally:
        session.close()
    if p.warnings:
        ctx.report.metric("configWarnings", "; ".join(sorted(p.warnings)))
    if dv.combined_outcome(results).verdict is RunnerVerdict.ERROR:
        for r in results:  # an Error run never prints a sustainedClockPct, not even one device's
            r.values.pop("sustainedClockPct", None)
    how = dv.Fold(
        primary="sustainedClockPct",
        visible=len(found.visible),
        window_s=dv.device_window(float(cfg.duration_s), len(allocated), mode),
        concurrency=mode,
        spreads={
            "sustainedClockSpreadPct": "sustainedClockPct",
            "fmaThroughputSpreadPct": "sustainedFmaThroughputTflops",
        },
    )
    return dv.fold(ctx.report, results, how)


if __name__ == "__main__":
    main(KIND, probe)
