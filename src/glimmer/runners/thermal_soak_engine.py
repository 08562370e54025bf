"""The soak engine thermal-soak (§9.3) and gpu-burn (§9.4) share: a square FP32 GEMM held back
to back for the duration on every allocated device at once, the first result kept on the
device as the reference and every later result compared with it **bitwise** on the device
(``miscompares`` counts differing elements, ``sdcDetections`` the iterations with any), NVML
sampled alongside, the figures re-printed every ``BURNIN_SOAK_PROGRESS_INTERVAL_S`` so a
truncated log is still a valid snapshot. The two kinds differ only in what they judge.

The GEMM is ``torch.matmul`` in FP32 with TF32 switched off (cuBLAS SGEMM on a GPU; on the
test-mode ``cpu`` device, torch's CPU GEMM on one thread, so its answer is as repeatable as
cuBLAS's). ``BURNIN_SOAK_MATRIX_N`` (8192) sets N, clamped to at least 512 and shrunk to fit
the device's free memory. A warm-up of clamp(duration/10, 5 s, 30 s) is left out of the clock,
temperature and throughput figures; correctness is checked from the first compare on.

``BURNIN_SOAK_INJECT_MISCOMPARES=k`` (self-test, on a GPU as in CI) flips one bit of one result
element in each of the first k compared iterations, inside the compared loop: a run that does
not then report ``miscompares >= k`` and Fail has a blind compare. ``faultsInjected`` is always
printed. ECC: the volatile uncorrected count's delta over the soak (``n/a`` when the part has
no ECC, and when a counter went backwards: a reset is never a clean zero, §12 lesson 28).
An in-process Xid watch reads ``/dev/kmsg`` when it may (it never changes the exit code).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType

from glimmer.runners import devices as dv
from glimmer.runners.gpu_session import open_gpus
from glimmer.runners.nvml import Device as NvmlDevice
from glimmer.runners.nvml import EccCounts, Session, find_device
from glimmer.runners.nvml_sampler import Sampler, Stats
from glimmer.runners.outcome import Outcome, errored, failed, skipped
from glimmer.runners.program import Context
from glimmer.runners.thermal_soak_config import MIN_N, SoakConfig, read_config
from glimmer.runners.thermal_soak_watch import Progress, XidWatch

BUFFERS = 5  # A, B, the reference, the result, and the compare's temporaries
MEMORY_SHARE = 0.9
MIN_UTILIZATION_PCT = 50.0
STOP_WAIT_S = 60.0  # what one device's last iteration may take to end after a stop


@dataclass
class Live:
    """One device's soak so far (written by its thread, read by the progress printer)."""

    device: dv.Device
    nv: NvmlDevice
    sampler: Sampler
    n: int = 0
    iterations: int = 0
    miscompares: int = 0
    sdc: int = 0
    nonfinite: int = 0
    injected: int = 0
    measured_iterations: int = 0  # after warm-up: the throughput window
    measured_s: float = 0.0
    elapsed_s: float = 0.0
    ecc_start: EccCounts | None = None
    ecc_end: EccCounts | None = None
    outcome: Outcome | None = None
    notes: list[str] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class Figures:
    """What a kind judges, read off one device's soak."""

    iterations: int
    miscompares: int
    nonfinite: int
    samples: int
    utilization_pct: float | None
    throttle_events: int | None
    sustained_clock_pct: float | None
    peak_temp_c: float | None
    ecc_delta: int | None


Judge = Callable[[Figures], Outcome]
Echo = Callable[[dv.DeviceResult], None]


def ieee_fp32(torch: ModuleType) -> None:
    """FP32 matmuls in full FP32 (SGEMM), never TF32: newer torch spells it fp32_precision
    and warns on the old allow_tf32."""
    matmul = torch.backends.cuda.matmul
    if hasattr(matmul, "fp32_precision"):
        matmul.fp32_precision = "ieee"
    else:
        matmul.allow_tf32 = False


def fit_n(torch: ModuleType, device: dv.Device, n: int) -> tuple[int, str]:
    """N shrunk (in steps of 64) until the soak's buffers fit in the device's free memory."""
    if device.test:
        return n, ""
    free, _total = torch.cuda.mem_get_info(torch.device(device.torch_device))
    fitted = n
    while fitted > MIN_N and BUFFERS * 4 * fitted * fitted > free * MEMORY_SHARE:
        fitted = max(MIN_N, (fitted - max(64, fitted // 8)) // 64 * 64)
    if BUFFERS * 4 * fitted * fitted > free * MEMORY_SHARE:
        raise MemoryError(f"{free // 2**20} MiB free: not enough for N={MIN_N}")
    return fitted, f"N shrunk from {n} to {fitted} to fit" if fitted != n else ""


class Soak:
    def __init__(
        self, cfg: SoakConfig, torch: ModuleType, session: Session, judge: Judge, echo: Echo
    ) -> None:
        self.cfg, self.torch, self.session = cfg, torch, session
        self.judge, self.echo = judge, echo
        self.lives: list[Live] = []
        self.warnings: set[str] = set(cfg.warnings)
        # Set when the run is ending early (SIGTERM, a crash): every device's loop stops at its
        # next iteration instead of soaking on after the marker was printed. The loop also
        # heeds devices.stopping(): a concurrent run's SIGTERM is raised in the thread waiting
        # for the devices, which waits for their loops to end before it returns here.
        self.stop = threading.Event()
        self._lock = threading.Lock()

    def lives_now(self) -> list[Live]:
        """The devices soaking so far (each device's thread adds its own)."""
        with self._lock:
            return list(self.lives)

    def measure(self, device: dv.Device) -> dv.DeviceResult:
        nv = find_device(self.session, None if device.test else device.pci_bus_id, device.index)
        if nv is None:
            return dv.DeviceResult(device, errored(f"NVML has no device for {device.torch_device}"))
        ident = nv.identity()
        if ident.mig_enabled:
            out = dv.DeviceResult(device, skipped("MIG is enabled: a slice is not the part"))
            out.put("gpuName", ident.name or device.name)
            out.put("pciBusId", ident.pci_bus_id or device.pci_bus_id)
            out.put("migMode", "enabled")
            return out
        cfg = self.cfg
        live = Live(device, nv, Sampler(nv, cfg.sample_interval_ms / 1000.0 * cfg.scale))
        with self._lock:
            self.lives.append(live)
        try:
            self._soak(live)
        except (RuntimeError, MemoryError) as exc:  # torch's CUDA errors are RuntimeErrors
            live.outcome = errored(f"the GEMM failed on {device.torch_device}: {exc}")
        finally:
            live.done.set()
        out = self.figures_of(live)
        out.outcome = live.outcome or self.judge(self.judged(live))
        return out

    def _soak(self, live: Live) -> None:
        torch, cfg = self.torch, self.cfg
        device = live.device
        dev = torch.device(device.torch_device)
        if not device.test:
            torch.cuda.set_device(dev)
            ieee_fp32(torch)
        live.n, note = fit_n(torch, device, cfg.matrix_n)
        if note:
            live.notes.append(note)
        n = live.n
        gen = torch.Generator(device=dev).manual_seed(20_000 + device.index)
        a = torch.rand((n, n), generator=gen, device=dev, dtype=torch.float32)
        b = torch.rand((n, n), generator=gen, device=dev, dtype=torch.float32)
        reference = torch.matmul(a, b)
        result = torch.empty_like(reference)
        ref_bits, bits = reference.view(torch.int32), result.view(torch.int32)
        flat = bits.view(-1)
        live.ecc_start = live.nv.ecc()
        started = time.monotonic()
        warm_end = started + cfg.warmup_s * cfg.scale
        end = started + cfg.duration_s * cfg.scale
        measuring_since: float | None = None
        with live.sampler:
            while (now := time.monotonic()) < end and not (self.stop.is_set() or dv.stopping()):
                if measuring_since is None and now >= warm_end:
                    measuring_since = now
                    live.sampler.counting.set()
                torch.matmul(a, b, out=result)
                if live.injected < cfg.inject:  # self-test: one flipped bit in the result
                    pos = (live.injected * 7919 + 1) % (n * n)
                    flat[pos] ^= 1
                    live.injected += 1
                wrong = int((bits != ref_bits).sum().item())
                bad = int((~torch.isfinite(result)).sum().item())
                live.iterations += 1
                live.miscompares += wrong
                live.sdc += wrong > 0
                live.nonfinite += bad
                if measuring_since is not None:
                    live.measured_iterations += 1
                    live.measured_s = time.monotonic() - measuring_since
                live.elapsed_s = time.monotonic() - started
            if live.measured_iterations and live.sampler.stats.samples == 0:
                live.sampler.sample_now()  # a window shorter than the interval gets one
            live.sampler.counting.clear()
        live.ecc_end = live.nv.ecc()

    def ecc(self, live: Live, out: dv.DeviceResult) -> int | None:
        mode = live.nv.identity().ecc_mode
        if mode is not None:
            out.put("eccMode", mode)
        if mode == "unsupported" or "eccErrors" in live.nv.unsupported:
            out.unmeasurable.append("eccErrors")  # the part has no ECC counters to read
            return None
        start, end = live.ecc_start, live.ecc_end
        if mode != "enabled" or start is None or end is None:
            return None  # off, or unreadable: omitted
        if end.uncorrected < start.uncorrected or end.corrected < start.corrected:
            out.unmeasurable.append("eccErrors")
            self.warnings.add("an ECC counter went backwards (driver reload?): no delta")
            return None
        delta = end.uncorrected - start.uncorrected
        out.put("eccErrors", delta)
        return delta

    def judged(self, live: Live) -> Figures:
        st = live.sampler.snapshot()
        rated = live.nv.identity().rated_sm_clock_mhz
        pct = st.sm.mean / rated * 100 if rated and st.sm.mean is not None else None
        ecc = self.ecc(live, dv.DeviceResult(live.device))
        return Figures(
            live.iterations, live.miscompares, live.nonfinite, st.samples, st.util.mean,
            st.protective_events if st.reasons_read else None, pct, st.temp.high, ecc,
        )  # fmt: skip

    def figures_of(self, live: Live) -> dv.DeviceResult:
        """Every figure of one device so far, canonical names in print order."""
        cfg = self.cfg
        out = dv.DeviceResult(live.device)
        ident = live.nv.identity()
        out.put("gpuName", ident.name or live.device.name)
        out.put("computeCap", live.device.compute_cap or ident.compute_cap)
        out.put("pciBusId", ident.pci_bus_id or live.device.pci_bus_id)
        if ident.mig_enabled is not None:
            out.put("migMode", "enabled" if ident.mig_enabled else "disabled")
        out.put("durationRequestedS", cfg.requested_s)
        out.put("warmupS", cfg.warmup_s, 1)
        out.put("matrixN", live.n or cfg.matrix_n)
        out.put("faultsInjected", live.injected)
        self.echo(out)
        if live.iterations:  # a count over no iteration would be a made-up clean zero
            out.put("miscompares", live.miscompares)
            out.put("sdcDetections", live.sdc)
            out.put("nonfiniteCount", live.nonfinite)
        out.put("iterationsCompleted", live.iterations)
        out.put("elapsedS", live.elapsed_s, 1)
        out.put("gemmActiveS", live.measured_s, 1)
        if live.measured_s > 0 and live.measured_iterations:
            flops = 2.0 * live.n**3 * live.measured_iterations
            out.put("sustainedThroughputTflops", flops / live.measured_s / 1e12, 6)
        st: Stats = live.sampler.snapshot()
        rated = ident.rated_sm_clock_mhz
        if rated:
            out.put("ratedBoostClockMHz", rated)
            if st.sm.mean is not None:
                out.put("sustainedClockPct", st.sm.mean / rated * 100, 2)
            if st.sm.low is not None and st.sm.high is not None:
                out.put("minSmClockPct", st.sm.low / rated * 100, 1)
                out.put("maxSmClockPct", st.sm.high / rated * 100, 1)
        elif "ratedSmClockMHz" in live.nv.unsupported:
            out.unmeasurable.append("sustainedClockPct")
        out.put("smClockMHz", st.sm.mean, 0)
        out.put("memClockMHz", st.mem.mean, 0)
        out.put("gpuUtilizationPct", st.util.mean, 1)
        out.put("memUtilizationPct", st.mem_util.mean, 1)
        out.put("gpuTempC", st.temp.high, 1)
        out.put("meanTempC", st.temp.mean, 1)
        out.put("powerDrawW", st.power.high, 1)
        out.put("meanPowerW", st.power.mean, 1)
        if st.reasons_read:
            out.put("throttleEvents", st.protective_events)
            out.put("powerCapEvents", st.power_cap_events)
            out.put("throttledSamples", st.throttled_samples)
            out.put("throttleReasonsMask", st.reasons_mask)
            out.put("throttleReasons", st.reasons_text())
        if live.done.is_set():  # the ECC delta exists once the soak has ended
            self.ecc(live, out)
        unsupported = sorted(live.nv.unsupported)
        out.put("nvmlUnsupported", ",".join(unsupported) or "none")
        out.put("unsupportedReads", len(unsupported))
        return out


def run_soak(ctx: Context, judge: Judge, echo: Echo) -> Outcome:
    """One soak kind's whole body: config, devices, NVML, the soak, the fold."""
    cfg = read_config(ctx.settings)
    gpus = open_gpus(ctx.settings, dv.ALL)
    if isinstance(gpus, Outcome):
        return gpus
    torch, found, allocated, mode, session = (
        gpus.torch, gpus.found, gpus.allocated, gpus.mode, gpus.session,
    )  # fmt: skip
    report = ctx.report
    report.metric("driverVersion", session.driver_version)
    xid = XidWatch(ctx)
    soak = Soak(cfg, torch, session, judge, echo)
    threads = torch.get_num_threads()
    if found.test_mode:
        torch.set_num_threads(1)  # one thread: the CPU GEMM's answer repeats bitwise
    try:
        with Progress(report, soak, cfg.progress_interval_s * cfg.scale):
            results = dv.for_each(allocated, mode, soak.measure)
    except BaseException:
        soak.stop.set()
        for live in list(soak.lives):  # torch must not be reconfigured under a running GEMM
            live.done.wait(STOP_WAIT_S)
        raise
    finally:
        torch.set_num_threads(threads)  # a caller in this process keeps its own
        session.close()
    xid.finish()
    for live in soak.lives:
        soak.warnings.update(live.notes)
    if soak.warnings:
        report.metric("configWarnings", "; ".join(sorted(soak.warnings)))
    how = dv.Fold(
        primary="sustainedClockPct",
        visible=len(found.visible),
        window_s=float(cfg.duration_s),
        concurrency=mode,
        spreads={"sustainedClockSpreadPct": "sustainedClockPct"},
    )
    return dv.fold(report, results, how)


def common_errors(f: Figures) -> Outcome | None:
    """The Errors both soak kinds share, in the order they are judged: nothing ran."""
    if f.iterations == 0:
        return errored("zero GEMM iterations completed")
    return None


def wrong_answers(f: Figures) -> Outcome | None:
    """The Fails both soak kinds judge first once something ran: results that differ from the
    reference, then results that are not numbers."""
    if f.miscompares:
        return failed(f"miscompares={f.miscompares}: results differ from the reference")
    if f.nonfinite:
        return failed(f"nonfiniteCount={f.nonfinite}: NaN/Inf in the results")
    return None


def load_errors(f: Figures) -> Outcome | None:
    """The load was not measured as a load: no NVML sample, or the GPU mostly idle."""
    if f.samples == 0:
        return errored("no NVML sample was taken under load")
    if f.utilization_pct is not None and f.utilization_pct < MIN_UTILIZATION_PCT:
        return errored(
            f"mean utilisation {f.utilization_pct:.1f} % under load is below "
            f"{MIN_UTILIZATION_PCT:.0f} %: the load did not hold the GPU"
        )
    return None
