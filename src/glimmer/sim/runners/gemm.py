"""GEMM runners: compute-smoke (one NVFP4 block-scaled GEMM per device, §9.1) and gemm-sweep
(one precision per execution, every iteration checked against a host reference, §9.5).

Both images are built for Blackwell workstation parts (CC 12.x): other parts either lack the
precision altogether (Skip) or have it through an instruction path the image does not carry,
which the runner detects before launching (Error, never a hardware verdict).
"""

from __future__ import annotations

from glimmer.sim.runners.call import RunnerCall, RunnerOutput
from glimmer.sim.runners.common import duration
from glimmer.sim.runners.devices import Reading, emit_fold
from glimmer.sim.runners.emit import Stdout
from glimmer.sim.runners.figures import GB10_GEMM_TFLOPS, PRECISIONS_FROM_CC
from glimmer.sim.runners.gpu_common import allocate
from glimmer.sim.runners.load import under_load
from glimmer.sim.runners.node import Device, NodeView, view
from glimmer.sim.runners.noise import Jitter, rng_for
from glimmer.sim.twin import FleetSim

SHAPE = 1024
FP4_TOLERANCE = 0.01  # max_rel_error bound of the NVFP4 cell (clean floor ~0.002)
EXACT_TOLERANCE = 1e-6  # integer-grid operands: every other precision is exact
FP4_CLEAN_REL_ERROR = 0.00195695  # conformance/gemm-sweep/fp4.stdout


def _cc(dev: Device) -> float:
    return float(dev.part.compute_cap) if dev.part is not None else 0.0


def _image_arch(nv: NodeView, call: RunnerCall) -> str:
    """The nvcc target baked into the image: arm64 images sm_121a, amd64 images sm_120a."""
    baked = call.env.get("BURNIN_CUDA_ARCH", "")
    if baked:
        return baked
    return "sm_121a" if nv.node.arch in ("arm64", "aarch64") else "sm_120a"


def _arch_covers(arch: str, cc: str) -> bool | None:
    """Whether an image built for ``arch`` runs on ``cc``; None when the arch string makes no
    claim (unknown strings are not refused)."""
    table = {"sm_120a": ("12.0",), "sm_121a": ("12.1",), "sm_120f": ("12.0", "12.1")}
    if arch in table:
        return cc in table[arch]
    if arch == "sm_120":
        return cc.startswith("12.")
    return None


def _corrupt_error(jit: Jitter, dev: Device) -> float:
    """Relative error a corrupting GPU leaves in one GEMM (0 on a healthy part)."""
    return 0.0 if dev.level("gpu_silent_data_corruption") <= 0 else jit.uniform(0.05, 0.9)


# ---- compute-smoke --------------------------------------------------------------------------


def compute_smoke(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    out = Stdout("FP4_GEMM")
    nv = view(twin, call.node, call.started_at)
    if nv is None:
        return out.errored(f"node {call.node} is not in the fleet", 0.5)
    got = allocate(nv, call, out)
    if isinstance(got, RunnerOutput):
        return got
    if not got.allocated:
        return out.errored("no usable CUDA device", 0.5)
    arch = _image_arch(nv, call)
    first = got.allocated[0]
    cc = first.part.compute_cap if first.part else "unknown"
    out.kv("built_cuda_arch", arch)
    out.kv("gpu_name", first.name)
    out.kv("compute_cap", cc)
    major = int(_cc(first))
    if major == 10:
        return out.errored(
            f"compute capability {cc}: NVFP4 exists here only via tcgen05.mma, which this "
            "image does not carry",
            1.0,
        )
    if major != 12:
        return out.skipped(f"{first.name} (CC {cc}) has no block-scaled FP4 tensor path", 1.0)
    if _arch_covers(arch, cc) is False:
        return out.errored(f"image built for {arch} cannot run on CC {cc}", 1.0)
    jit = Jitter(rng_for(call))
    readings = []
    failing = []
    for dev in got.allocated:
        rel = max(jit.rel(0.002, 0.02), _corrupt_error(jit, dev))
        ref = 511.0
        v: dict[str, float | int | str] = {
            "m": SHAPE, "n": SHAPE, "k": SHAPE, "max_abs_ref": ref,
            "max_abs_error": rel * ref, "max_rel_error": rel, "nonfinite_count": 0,
            "elapsed_ms": jit.uniform(0.08, 0.2),
        }  # fmt: skip
        lp = under_load(nv, dev)
        v["tflops"] = jit.rel(GB10_GEMM_TFLOPS["fp4"] * 0.3 * lp.clock_fraction, 0.05)
        readings.append(Reading(dev, v, {"max_rel_error": 6, "max_abs_error": 3, "tflops": 3}))
        if rel > FP4_TOLERANCE:
            failing.append(f"device {dev.slot} max_rel_error {rel:.6f} > {FP4_TOLERANCE}")
    emit_fold(
        out, "compute-smoke", readings, visible=len(got.visible), window_s=0.0,
        concurrency="sequential", primary="max_rel_error", spreads={},
    )  # fmt: skip
    elapsed = jit.uniform(3.0, 6.0)
    if failing:
        return out.failed("; ".join(failing), elapsed)
    return out.passed(elapsed)


# ---- gemm-sweep -----------------------------------------------------------------------------


def gemm_sweep(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    out = Stdout("GEMM_SWEEP")
    nv = view(twin, call.node, call.started_at)
    if nv is None:
        return out.errored(f"node {call.node} is not in the fleet", 0.5)
    precision = call.env.get("BURNIN_VARIANT_PRECISION", "")
    if precision not in PRECISIONS_FROM_CC:
        what = f"unrecognised precision {precision!r}" if precision else "precision unset"
        return out.errored(f"{what} (BURNIN_VARIANT_PRECISION: fp4|fp8|bf16|tf32|fp64)", 0.2)
    got = allocate(nv, call, out)
    if isinstance(got, RunnerOutput):
        return got
    if not got.allocated:
        return out.errored("no usable CUDA device", 0.5)
    first = got.allocated[0]
    if first.part is None:
        return out.errored("compute capability unreadable", 0.5)
    arch = _image_arch(nv, call)
    cc = first.part.compute_cap
    out.kv("built_cuda_arch", arch)
    out.kv("gemm_precision", precision)
    if _cc(first) < PRECISIONS_FROM_CC[precision]:
        return out.skipped(f"{first.name} (CC {cc}) has no {precision} GEMM path", 1.0)
    if not cc.startswith("12.") or _arch_covers(arch, cc) is False:
        return out.errored(f"image built for {arch} cannot run on CC {cc}", 1.0)
    seconds = float(duration(call, 60))
    window = seconds / len(got.allocated)
    jit = Jitter(rng_for(call))
    out.kv("window_seconds", int(window))
    out.kv("gpu_name", first.name)
    out.kv("compute_cap", cc)
    out.kv("gemm_shape", f"{SHAPE}x{SHAPE}x{SHAPE}")
    readings = []
    failing = []
    flop = 2.0 * SHAPE**3 / 1e12
    tolerance = FP4_TOLERANCE if precision == "fp4" else EXACT_TOLERANCE
    for dev in got.allocated:
        lp = under_load(nv, dev)
        tflops = jit.rel(GB10_GEMM_TFLOPS[precision] * lp.clock_fraction, 0.01)
        kernel_s = window * jit.uniform(0.025, 0.08) if precision != "fp64" else window * 0.86
        iterations = int(tflops * kernel_s / flop)
        ref = 511.0 if precision == "fp4" else 260.0
        rel = FP4_CLEAN_REL_ERROR if precision == "fp4" else 0.0
        rel = max(rel, _corrupt_error(jit, dev))
        v: dict[str, float | int | str] = {
            "gemm_iterations": iterations,
            "total_kernel_ms": kernel_s * 1000.0,
            "max_abs_ref": ref,
            "max_abs_error": round(rel * ref),
            "max_relative_error": rel,
            "nonfinite_count": 0,
            "achieved_tflops": tflops,
        }
        readings.append(Reading(dev, v, {"total_kernel_ms": 3, "max_relative_error": 8,
                                         "achieved_tflops": 3}))  # fmt: skip
        if rel > tolerance:
            failing.append(f"device {dev.slot} max_relative_error {rel:.6g} > {tolerance:g}")
    emit_fold(
        out, "gemm-sweep", readings, visible=len(got.visible), window_s=window,
        concurrency="sequential", primary="achieved_tflops",
        spreads={"gemmThroughputSpreadPct": "achieved_tflops"},
    )  # fmt: skip
    elapsed = seconds + jit.uniform(1.0, 3.0)
    if failing:
        return out.failed("; ".join(failing), elapsed)
    return out.passed(elapsed)
