"""compute-smoke (§9.1, burst-only): that the block-scaled NVFP4 tensor-core path runs and
gives the right answer.

Per allocated device, one after another: one warm-up and one timed m×n×k NVFP4 GEMM
(``COMPUTE_SMOKE_SHAPE``, default 1024³) through ``torch._scaled_mm`` on e2m1 operands drawn
from the whole e2m1 grid with block-of-16 e4m3 scales, its bf16 result compared with an
independent float64 host product of the same values: ``max_rel_error`` is the largest
difference over max|ref|, tolerance 0.01 (the bf16 output's rounding leaves ~0.002).
``BURNIN_DURATION_SECONDS`` is ignored: a burst kind has no window.

Exit, per device, then folded Fail > Error > Skip > Pass:

* 1: a NaN/Inf in the output, an all-zero output, a relative error above the tolerance;
* 2 (``FP4_GEMM_SKIP``): no GPU on this host, or a part with no block-scaled FP4 at all
  (compute capability outside 10.x/12.x: H100, A100, L40S);
* 3 (``FP4_GEMM_ERROR``): a GPU present but unusable; unreadable compute capability; an image
  that cannot run on the part, checked before launching (the baked ``BURNIN_CUDA_ARCH``
  against the reported capability, and torch's own CUDA targets); a torch without the
  block-scaled path; any CUDA error; an all-zero host reference; malformed configuration.

Where §9.1 makes CC 10.x an Error, it is because the CUTLASS SM120 image lacks the
``tcgen05.mma`` path; this runner's kernel is cuBLASLt's through torch, which has it, so a
B200 is measured like a GB10 (and refused as above if its torch build cannot run there).

Self-test: ``COMPUTE_SMOKE_INJECT_MISCOMPARES=N`` corrupts N elements of the timed result
before the comparison. Test mode (``BURNIN_TEST_DEVICE=cpu``) runs it on torch's cpu, where
the fp4 product is taken from the unpacked e2m1 codes (:mod:`glimmer.runners.gemm_sweep_ops`).
"""

from __future__ import annotations

from types import ModuleType

from glimmer.runners import devices as dv
from glimmer.runners import gemm_sweep_ops as ops
from glimmer.runners.gemm_sweep import first_line, parse_shape
from glimmer.runners.outcome import Outcome, errored, failed, passed, skipped
from glimmer.runners.program import Context, main

KIND = "compute-smoke"
SHAPE = "COMPUTE_SMOKE_SHAPE"
INJECT = "COMPUTE_SMOKE_INJECT_MISCOMPARES"
CUDA_ARCH = "BURNIN_CUDA_ARCH"
TOLERANCE = ops.FP4_TOLERANCE


def refuse_part(torch: ModuleType, device: dv.Device, baked: str | None) -> Outcome | None:
    cc = device.cc_tuple
    if cc is None:
        return errored(f"compute capability of {device.name} unreadable: nothing is claimed")
    if cc[0] not in ops.FP4_MAJORS:
        return skipped(f"{device.name} (CC {device.compute_cap}) has no block-scaled FP4 path")
    if baked and ops.baked_arch_covers(baked, device.compute_cap or "") is False:
        return errored(f"image built for {baked} cannot run on CC {device.compute_cap}")
    if not device.test:
        if ops.build_covers(ops.arch_list(torch), cc) is False:
            return errored(f"this torch has no kernel for CC {device.compute_cap}")
        if not hasattr(torch, "float4_e2m1fn_x2"):
            return errored(f"torch {torch.__version__} has no block-scaled FP4 path (fp4 dtype)")
    return None


def measure_device(
    torch: ModuleType,
    device: dv.Device,
    shape: tuple[int, int, int],
    inject: int,
    baked: str | None,
) -> dv.DeviceResult:
    result = dv.DeviceResult(device)
    refusal = refuse_part(torch, device, baked)
    if refusal is not None:
        result.outcome = refusal
        return result
    m, n, k = shape
    with dv.device_scope(torch, device):
        try:
            gemm = ops.Gemm(torch, device.torch_device, "fp4", m, n, k, full_grid=True)
            gemm.launch()  # the warm-up
            dv.synchronize(torch, device)
            timer = dv.Timer(torch, device)
            timer.begin()
            gemm.launch()
            timer.end()
            elapsed_ms = timer.total_ms()
            for i in range(inject):
                gemm.corrupt(i * 7919)
            gemm.check()
            checked = gemm.checked()
        except RuntimeError as exc:  # every CUDA/cuBLASLt failure reaches here as one
            result.outcome = errored(f"CUDA error on {device.torch_device}: {first_line(exc)}")
            return result
    for name, value in (("m", m), ("n", n), ("k", k)):
        result.put(name, value, 0)
    result.put("maxAbsRef", checked.max_abs_ref, 3)
    result.put("maxAbsError", checked.max_abs_error, 3)
    result.put("maxRelError", checked.max_relative_error, 6)
    result.put("nonfiniteCount", checked.nonfinite, 0)
    result.put("elapsedMs", elapsed_ms, 3)
    if elapsed_ms > 0:
        result.put("throughputTflops", gemm.flops() / (elapsed_ms / 1e3) / 1e12, 3)
    result.outcome = judge(checked)
    return result


def judge(checked: ops.Checked) -> Outcome:
    """§9.1's order: an unusable reference is machinery; then wrong answers."""
    if checked.max_abs_ref <= 0:
        return errored("the host reference is all zeros: nothing can be compared")
    if checked.nonfinite:
        return failed(f"{checked.nonfinite} NaN/Inf elements in the NVFP4 output")
    if checked.all_zero_results:
        return failed("the NVFP4 output is all zeros")
    if checked.max_relative_error > TOLERANCE:
        return failed(f"max_rel_error {checked.max_relative_error:.6f} > {TOLERANCE}")
    return passed()


def measure(ctx: Context) -> Outcome:
    settings, report = ctx.settings, ctx.report
    shape = parse_shape(settings.raw(SHAPE), SHAPE)
    inject = settings.integer(INJECT, 0, minimum=0)
    baked = settings.raw(CUDA_ARCH)
    torch = dv.load_torch()
    found = dv.discover(settings, torch)
    if not found.visible or torch is None:
        return dv.no_device_outcome(found, "no accelerator")
    allocated = dv.allocate(settings, found)
    first = allocated[0] if allocated else found.visible[0]
    report.metric("builtCudaArch", baked or ",".join(ops.arch_list(torch)) or None)
    report.metric("gpuName", first.name)
    report.metric("computeCap", first.compute_cap)
    mode = dv.concurrency(settings, dv.SEQUENTIAL)
    if inject:
        report.note(f"self-test: {inject} output elements per device corrupted ({INJECT})")
    results = dv.for_each(allocated, mode, lambda d: measure_device(torch, d, shape, inject, baked))
    return dv.fold(report, results, dv.Fold("maxRelError", len(found.visible), 0.0, mode))


if __name__ == "__main__":
    main(KIND, measure)
