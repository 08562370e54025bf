"""gemm-sweep (§9.5): GEMM correctness and throughput, one precision per execution.

The precision is ``BURNIN_VARIANT_PRECISION`` (fp4 | fp8 | bf16 | tf32 | fp64). On each
allocated device, one after another (the window divided among them), an m×n×k GEMM
(``GEMM_SWEEP_SHAPE``, default 1024 for 1024³, or ``MxNxK``) is launched back to back for the
window and **every** result is compared on the device with a double-precision host reference
on integer-grid operands (:mod:`glimmer.runners.gemm_sweep_ops`; tolerance 1e-6, fp4 1 %).
Each GEMM is timed alone with device events: ``totalKernelMs`` is their sum and
``achievedTflops`` the work over it; the comparisons between them are not counted.

Exit, per device, then folded Fail > Error > Skip > Pass:

* 1: a non-finite element, an all-zero result, or a difference beyond the tolerance;
* 2 (``GEMM_SWEEP_SKIP``): no GPU on this host at all, or the part lacks the precision
  (fp4 below Blackwell, fp8 below CC 8.9, bf16/tf32 below 8.0);
* 3: unset or unrecognised precision, malformed configuration, a GPU present but unusable,
  unreadable compute capability (never a skip), an image that cannot run on the part (the
  baked ``BURNIN_CUDA_ARCH`` or torch's own CUDA targets do not cover it), any CUDA error, a
  window in which no GEMM completed.

Self-test: ``GEMM_SWEEP_INJECT_MISCOMPARES=N`` corrupts one element of each of the first N
results after the kernel and before the comparison; the run must then Fail. Test mode
(``BURNIN_TEST_DEVICE=cpu``, :mod:`glimmer.runners.devices`) runs all of it on torch's cpu.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import ModuleType

from glimmer.runners import devices as dv
from glimmer.runners import gemm_sweep_ops as ops
from glimmer.runners.outcome import ConfigError, Outcome, errored, failed, passed, skipped
from glimmer.runners.program import Context, main
from glimmer.runners.settings import Settings

KIND = "gemm-sweep"
PRECISION = "BURNIN_VARIANT_PRECISION"
SHAPE = "GEMM_SWEEP_SHAPE"
INJECT = "GEMM_SWEEP_INJECT_MISCOMPARES"
CUDA_ARCH = "BURNIN_CUDA_ARCH"
DEFAULT_DURATION_S = 60
DEFAULT_SHAPE = 1024
# Results compared between two reads of the device's accumulators: large enough that the
# host rarely waits, small enough that the window is kept to within a batch.
BATCH = 32


@dataclass(frozen=True)
class Config:
    precision: str
    m: int
    n: int
    k: int
    duration_s: int
    inject: int
    baked_arch: str | None

    @property
    def shape(self) -> str:
        return f"{self.m}x{self.n}x{self.k}"

    @property
    def tolerance(self) -> float:
        return ops.FP4_TOLERANCE if self.precision == "fp4" else ops.EXACT_TOLERANCE


def parse_shape(raw: str | None, variable: str = SHAPE) -> tuple[int, int, int]:
    """``N`` (N³) or ``MxNxK``; M and N multiples of 16 and K of 32 (the fp4 blocks)."""
    if raw is None:
        return DEFAULT_SHAPE, DEFAULT_SHAPE, DEFAULT_SHAPE
    parts = raw.lower().split("x")
    if len(parts) == 1:
        parts = parts * 3
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ConfigError(variable, f"{raw!r} is neither N nor MxNxK, in positive whole numbers")
    m, n, k = (int(p) for p in parts)
    if k % 32 or n % 16 or m % 16:
        raise ConfigError(variable, f"{raw!r}: M and N must be multiples of 16, K of 32")
    return m, n, k


def read_config(settings: Settings) -> Config:
    precision = settings.raw(PRECISION)
    if precision is None:
        raise ConfigError(PRECISION, f"unset: name one of {'|'.join(ops.PRECISIONS)}")
    if precision not in ops.PRECISIONS:
        raise ConfigError(PRECISION, f"unrecognised {precision!r} ({'|'.join(ops.PRECISIONS)})")
    m, n, k = parse_shape(settings.raw(SHAPE))
    return Config(
        precision, m, n, k, settings.duration(DEFAULT_DURATION_S),
        settings.integer(INJECT, 0, minimum=0), settings.raw(CUDA_ARCH),
    )  # fmt: skip


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def refuse_part(torch: ModuleType, cfg: Config, device: dv.Device) -> Outcome | None:
    """Skip or Error for a part before anything is launched on it (§9.5)."""
    cc = device.cc_tuple
    if cc is None:
        return errored(f"compute capability of {device.name} unreadable: nothing is claimed")
    if not ops.has_precision(cfg.precision, cc):
        return skipped(f"{device.name} (CC {device.compute_cap}) has no {cfg.precision} GEMM path")
    baked = cfg.baked_arch
    if baked and ops.baked_arch_covers(baked, device.compute_cap or "") is False:
        return errored(f"image built for {cfg.baked_arch} cannot run on CC {device.compute_cap}")
    if cfg.precision in ("fp8", "fp4"):
        dtype = "float8_e4m3fn" if cfg.precision == "fp8" else "float4_e2m1fn_x2"
        if not hasattr(torch, dtype) or not hasattr(torch, "_scaled_mm"):
            return errored(f"torch {torch.__version__} has no {cfg.precision} GEMM path ({dtype})")
    if not device.test and ops.build_covers(ops.arch_list(torch), cc) is False:
        archs = ",".join(ops.arch_list(torch))
        return errored(f"this torch carries {archs}, no kernel for CC {device.compute_cap}")
    return None


def measure_device(
    torch: ModuleType, cfg: Config, device: dv.Device, window_s: float
) -> dv.DeviceResult:
    result = dv.DeviceResult(device)
    refusal = refuse_part(torch, cfg, device)
    if refusal is not None:
        result.outcome = refusal
        return result
    with dv.device_scope(torch, device):
        try:
            return _run_window(torch, cfg, device, window_s, result)
        except RuntimeError as exc:  # torch raises every CUDA and cuBLAS failure as one
            result.outcome = errored(f"CUDA error on {device.torch_device}: {first_line(exc)}")
            return result


def _run_window(
    torch: ModuleType, cfg: Config, device: dv.Device, window_s: float, result: dv.DeviceResult
) -> dv.DeviceResult:
    gemm = ops.Gemm(torch, device.torch_device, cfg.precision, cfg.m, cfg.n, cfg.k)
    gemm.launch()  # warm-up: kernel selection and first-touch, neither timed nor counted
    dv.synchronize(torch, device)
    timer = dv.Timer(torch, device)
    kernel_ms = 0.0
    injected = 0
    end = time.monotonic() + window_s
    while True:
        for _ in range(BATCH):
            timer.begin()
            gemm.launch()
            timer.end()
            if injected < cfg.inject:
                gemm.corrupt(injected * 7919)
                injected += 1
            gemm.check()
        kernel_ms += timer.total_ms()
        if time.monotonic() >= end or dv.stopping():
            break
    checked = gemm.checked()
    result.put("sampleWindowS", round(window_s), 0)
    result.put("gpuName", device.name)
    result.put("computeCap", device.compute_cap)
    result.put("pciBusId", device.pci_bus_id)
    result.put("gemmShape", cfg.shape)
    result.put("iterationsCompleted", checked.iterations, 0)
    result.put("totalKernelMs", kernel_ms, 3)
    result.put("maxAbsRef", checked.max_abs_ref, 0)
    result.put("maxAbsError", checked.max_abs_error, 6)
    result.put("maxRelativeError", checked.max_relative_error, 8)
    result.put("nonfiniteCount", checked.nonfinite, 0)
    if kernel_ms > 0:
        tflops = gemm.flops() * checked.iterations / (kernel_ms / 1e3) / 1e12
        result.put("achievedTflops", tflops, 3)
    result.outcome = judge(cfg, checked, kernel_ms)
    return result


def judge(cfg: Config, checked: ops.Checked, kernel_ms: float) -> Outcome:
    """The device's verdict, in §9.5's order: wrong answers first, then what measured nothing."""
    if checked.nonfinite:
        return failed(f"{checked.nonfinite} non-finite elements in {cfg.precision} results")
    if checked.all_zero_results:
        return failed(f"{checked.all_zero_results} {cfg.precision} results were all zeros")
    if checked.max_relative_error > cfg.tolerance:
        return failed(
            f"{cfg.precision} result differs from the reference: max relative error "
            f"{checked.max_relative_error:.3g} > {cfg.tolerance:g}"
        )
    if checked.iterations == 0 or kernel_ms <= 0:
        return errored("no GEMM completed in the window: nothing was judged")
    return passed()


def measure(ctx: Context) -> Outcome:
    cfg = read_config(ctx.settings)
    report = ctx.report
    torch = dv.load_torch()
    found = dv.discover(ctx.settings, torch)
    built = cfg.baked_arch or (",".join(ops.arch_list(torch)) if torch is not None else None)
    report.metric("builtCudaArch", built or None)
    report.metric("gemmPrecision", cfg.precision)
    if not found.visible or torch is None:
        return dv.no_device_outcome(found, "no accelerator")
    allocated = dv.allocate(ctx.settings, found)
    mode = dv.concurrency(ctx.settings, dv.SEQUENTIAL)
    window = dv.device_window(cfg.duration_s, len(allocated), mode)
    if cfg.precision == "tf32":
        ops.enable_tf32(torch)
    if cfg.inject:
        report.note(f"self-test: {cfg.inject} results per device corrupted on purpose ({INJECT})")
    results = dv.for_each(allocated, mode, lambda d: measure_device(torch, cfg, d, window))
    return dv.fold(
        report, results,
        dv.Fold("achievedTflops", len(found.visible), window, mode,
                {"gemmThroughputSpreadPct": "achievedTflops"},
                mig=any("MIG" in d.name for d in allocated)),
    )  # fmt: skip


if __name__ == "__main__":
    main(KIND, measure)
