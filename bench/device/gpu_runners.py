"""The device check of issue 14 (item 5): every accelerator kind for a short window on this
GPU, and in the same run the reference each is judged against.

References, measured here first: ``torch.matmul`` in bf16 at 8192³ (device events over 50
launches after a warm-up) and a device-to-device copy of 8 GiB (five copies). Each runner then
runs as a user's would (``python -m glimmer.runners.<kind>``, only the contract beside it: no
pydantic), its stdout read by ``glimmer.contract.parse``, and one table is printed: the
runner's figure, the same-run reference, their ratio, the datasheet peak (peers.md §4.1) and
the ratio to it, with the issue's targets on an H200 marked ok/MISS:

* gemm-sweep bf16 ≥ 90 % of the same-run matmul and ≥ 75 % of the dense datasheet peak;
* memory-bw device-to-device ≥ 90 % of the same-run copy;
* clockprobe's sustainedClockPct, reported with its throttle reasons;
* gpu-burn and thermal-soak: 0 miscompares, and their injected miscompares found;
* nccl at Node scope runs (one GPU: it must Skip as §9.11 says).

Nothing is fetched; the whole check ends within ``GPU_RUNNERS_BUDGET_S`` (450 s). Each
runner's stdout is kept under ``$OUT/gpu_runners/`` when ``$OUT`` is set.
``GPU_RUNNERS_TEST_DEVICE=cpu`` runs the plumbing on a host without a GPU (the runners' test
mode, tiny sizes): a dry run of this script, not a measurement.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

import torch  # noqa: E402

from glimmer.contract.parse import parse  # noqa: E402 (after the path is set)

CPU = os.environ.get("GPU_RUNNERS_TEST_DEVICE") == "cpu"
BUDGET_S = float(os.environ.get("GPU_RUNNERS_BUDGET_S", "450"))
START = time.monotonic()
OUT = Path(os.environ["OUT"]) / "gpu_runners" if os.environ.get("OUT") else None
GIB = 1 << 30

# peers.md §4.1, dense (no sparsity): TFLOPS per precision and HBM TB/s.
DATASHEET: dict[str, dict[str, float]] = {
    "H200": {"bf16": 989, "fp8": 1979, "tf32": 495, "fp64": 67, "hbm_tbs": 4.8},
    "H100 PCIe": {"bf16": 756, "fp8": 1513, "tf32": 378, "fp64": 51, "hbm_tbs": 2.0},
    "H100": {"bf16": 989, "fp8": 1979, "tf32": 495, "fp64": 67, "hbm_tbs": 3.35},
    "B200": {"bf16": 2250, "fp8": 4500, "tf32": 1100, "fp64": 37, "hbm_tbs": 7.7},
    "GB200": {"bf16": 2500, "fp8": 5000, "tf32": 1250, "fp64": 40, "hbm_tbs": 8.0},
}


def datasheet(name: str) -> tuple[str, dict[str, float]] | None:
    for part in ("GB200", "B200", "H200", "H100 PCIe", "H100"):
        if part in name:
            return part, DATASHEET[part]
    return None


def left() -> float:
    return BUDGET_S - (time.monotonic() - START)


def timed(call: Callable[[], object], iters: int) -> float:
    """Seconds per call of ``fn`` over ``iters`` calls, by device events (perf_counter on
    the cpu dry run)."""
    if CPU:
        start = time.perf_counter()
        for _ in range(iters):
            call()
        return (time.perf_counter() - start) / iters
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for _ in range(iters):
        call()
    end.record()
    end.synchronize()
    return begin.elapsed_time(end) / 1e3 / iters


def reference_matmul(n: int) -> float:
    dev = "cpu" if CPU else "cuda"
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    for _ in range(5):
        torch.matmul(a, b)
    seconds = timed(lambda: torch.matmul(a, b), 5 if CPU else 50)
    return 2.0 * n**3 / seconds / 1e12


def reference_copy(nbytes: int) -> float:
    dev = "cpu" if CPU else "cuda"
    src = torch.empty(nbytes, dtype=torch.uint8, device=dev).fill_(7)
    dst = torch.empty_like(src)
    dst.copy_(src)
    seconds = timed(lambda: dst.copy_(src), 5)
    return nbytes / seconds / 1e9


@dataclass
class Case:
    label: str
    kind: str
    env: dict[str, str]
    timeout: float
    figures: list[str] = field(default_factory=list)


@dataclass
class Ran:
    case: Case
    code: int | None
    marker: str
    metrics: dict[str, str]
    seconds: float


def run(case: Case) -> Ran | None:
    if left() < case.timeout:
        print(f"-- {case.label}: not run, {left():.0f} s of the budget left", flush=True)
        return None
    env = {k: v for k, v in os.environ.items() if not k.startswith("BURNIN_")}
    env.update({"PYTHONPATH": str(REPO / "src"), **case.env})
    if CPU:
        env["BURNIN_TEST_DEVICE"] = "cpu"
    began = time.monotonic()
    argv = [sys.executable, "-m", f"glimmer.runners.{case.kind.replace('-', '_')}"]
    try:
        proc = subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=case.timeout, check=False
        )
        stdout, code = proc.stdout, proc.returncode
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        code = None
    seconds = time.monotonic() - began
    if OUT is not None:
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / f"{case.label.replace(' ', '_')}.stdout").write_text(stdout)
    parsed = parse(case.kind, stdout, code if code is not None else 3)
    lines = stdout.rstrip("\n").splitlines()
    marker = lines[-1] if lines else "(nothing printed)"
    shown = " ".join(f"{k}={parsed.metrics[k]}" for k in case.figures if k in parsed.metrics)
    print(f"-- {case.label}: exit {code} in {seconds:.0f} s: {marker}", flush=True)
    if shown:
        print(f"   {shown}", flush=True)
    return Ran(case, code, marker, parsed.metrics, seconds)


def number(ran: Ran | None, key: str) -> float | None:
    if ran is None or key not in ran.metrics:
        return None
    try:
        return float(ran.metrics[key])
    except ValueError:
        return None


def cases(window: int, shape: int, copy_mib: int) -> list[Case]:
    gemm = ["achievedTflops", "iterationsCompleted", "maxRelativeError", "nonfiniteCount"]
    soak = ["miscompares", "sustainedClockPct", "throttleEvents", "gpuTempC", "eccErrors"]
    clock = [
        "sustainedClockPct",
        "smClockMHz",
        "ratedBoostClockMHz",
        "throttleReasons",
        "throttleClassification",
        "pdWedgeSuspected",
    ]
    small = str(max(shape // 2, 64))
    return [
        Case(
            "gemm-sweep bf16",
            "gemm-sweep",
            {
                "BURNIN_VARIANT_PRECISION": "bf16",
                "GEMM_SWEEP_SHAPE": str(shape),
                "BURNIN_DURATION_SECONDS": str(2 * window),
            },
            2 * window + 90,
            gemm,
        ),
        Case(
            "gemm-sweep fp8",
            "gemm-sweep",
            {
                "BURNIN_VARIANT_PRECISION": "fp8",
                "GEMM_SWEEP_SHAPE": str(shape),
                "BURNIN_DURATION_SECONDS": str(window),
            },
            window + 90,
            gemm,
        ),
        Case(
            "gemm-sweep tf32",
            "gemm-sweep",
            {
                "BURNIN_VARIANT_PRECISION": "tf32",
                "GEMM_SWEEP_SHAPE": str(shape),
                "BURNIN_DURATION_SECONDS": str(window),
            },
            window + 90,
            gemm,
        ),
        Case(
            "gemm-sweep fp64",
            "gemm-sweep",
            {
                "BURNIN_VARIANT_PRECISION": "fp64",
                "GEMM_SWEEP_SHAPE": small,
                "BURNIN_DURATION_SECONDS": str(window),
            },
            window + 90,
            gemm,
        ),
        Case(
            "gemm-sweep fp4",
            "gemm-sweep",
            {"BURNIN_VARIANT_PRECISION": "fp4", "BURNIN_DURATION_SECONDS": str(window)},
            window + 60,
            gemm,
        ),
        Case(
            "gemm-sweep bf16 injected",
            "gemm-sweep",
            {
                "BURNIN_VARIANT_PRECISION": "bf16",
                "BURNIN_DURATION_SECONDS": "2",
                "GEMM_SWEEP_INJECT_MISCOMPARES": "3",
            },
            60,
            ["maxRelativeError"],
        ),
        Case("compute-smoke", "compute-smoke", {}, 60, ["maxRelError", "throughputTflops"]),
        Case(
            "memory-bw",
            "memory-bw",
            {"BURNIN_MEMORY_BW_BUFFER_MIB": str(copy_mib), "BURNIN_MEMORY_BW_SAMPLES": "3"},
            150,
            [
                "hostToDeviceBandwidthGBs",
                "deviceToHostBandwidthGBs",
                "deviceToDeviceBandwidthGBs",
                "deviceToDeviceBandwidthMaxGBs",
            ],
        ),
        Case(
            "nccl node",
            "nccl",
            {"BURNIN_NCCL_SIZES": "8,1M,64M,256M", "BURNIN_DURATION_SECONDS": "60"},
            120,
            ["busBandwidthGBs", "algBandwidthGBs", "latencyUs", "miscompares", "ranks"],
        ),
        Case(
            "clockprobe",
            "clockprobe",
            {"BURNIN_DURATION_SECONDS": str(2 * window)},
            2 * window + 90,
            clock,
        ),
        Case(
            "thermal-soak",
            "thermal-soak",
            {"BURNIN_DURATION_SECONDS": str(window + 5)},
            window + 100,
            soak,
        ),
        Case(
            "thermal-soak injected",
            "thermal-soak",
            {"BURNIN_DURATION_SECONDS": "15", "BURNIN_SOAK_INJECT_MISCOMPARES": "3"},
            110,
            soak,
        ),
        Case(
            "gpu-burn", "gpu-burn", {"BURNIN_DURATION_SECONDS": str(window + 5)}, window + 100, soak
        ),
        Case(
            "gpu-burn injected",
            "gpu-burn",
            {"BURNIN_DURATION_SECONDS": "15", "BURNIN_SOAK_INJECT_MISCOMPARES": "3"},
            110,
            soak,
        ),
    ]


def verdict_word(ran: Ran | None) -> str:
    if ran is None:
        return "not run"
    if ran.code is None:
        return "timed out"
    return {0: "Pass", 1: "Fail", 2: "Skip", 3: "Error"}.get(ran.code, f"exit {ran.code}")


def row(
    name: str, figure: float | None, ref: float | None, sheet: float | None, target: str = ""
) -> str:
    def f(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f}"

    ratio = f"{figure / ref:.3f}" if figure is not None and ref else "-"
    of_sheet = f"{figure / sheet:.3f}" if figure is not None and sheet else "-"
    return (
        f"{name:<34} {f(figure):>10} {f(ref):>10} {ratio:>7} {f(sheet):>9} {of_sheet:>7}  {target}"
    )


def mark(ok: bool | None) -> str:
    return "-" if ok is None else ("ok" if ok else "MISS")


def main() -> int:
    if not CPU and not torch.cuda.is_available():
        print(
            "no CUDA device: this device check needs a GPU (GPU_RUNNERS_TEST_DEVICE=cpu for "
            "a dry run)"
        )
        return 2
    name = "cpu (dry run)" if CPU else torch.cuda.get_device_name(0)
    count = 1 if CPU else torch.cuda.device_count()
    sheet_of = datasheet(name)
    part, sheet = sheet_of if sheet_of else ("unknown", {})
    print(f"device: {name} x{count}; datasheet row: {part}; torch {torch.__version__}", flush=True)
    shape, copy_bytes, window = (256, 64 << 20, 3) if CPU else (8192, 8 * GIB, 10)
    ref_tf = reference_matmul(shape)
    ref_copy = reference_copy(copy_bytes)
    print(
        f"reference: torch.matmul bf16 {shape}^3 {ref_tf:.2f} TFLOPS; "
        f"device-to-device copy of {copy_bytes / GIB:g} GiB {ref_copy:.2f} GB/s",
        flush=True,
    )
    if not CPU:
        torch.cuda.empty_cache()
    got = {c.label: run(c) for c in cases(window, shape, copy_bytes >> 20)}

    print()
    print(
        f"{'runner / figure':<34} {'figure':>10} {'same-run':>10} {'ratio':>7} "
        f"{'datasheet':>9} {'of peak':>7}  target"
    )
    bf16 = number(got["gemm-sweep bf16"], "achievedTflops")
    peak = sheet.get("bf16")
    of_ref = None if bf16 is None else bf16 >= 0.9 * ref_tf
    of_peak = None if bf16 is None or peak is None else bf16 >= 0.75 * peak
    print(
        row(
            "gemm-sweep bf16 achievedTflops",
            bf16,
            ref_tf,
            sheet.get("bf16"),
            f">=0.90 ref {mark(of_ref)}, >=0.75 peak {mark(of_peak)}",
        )
    )
    for p in ("fp8", "tf32", "fp64"):
        ran = got[f"gemm-sweep {p}"]
        print(
            row(
                f"gemm-sweep {p} achievedTflops",
                number(ran, "achievedTflops"),
                None,
                sheet.get(p),
                verdict_word(ran),
            )
        )
    print(row("gemm-sweep fp4", None, None, None, verdict_word(got["gemm-sweep fp4"])))
    inj = got["gemm-sweep bf16 injected"]
    print(
        row(
            "gemm-sweep injected miscompares",
            number(inj, "maxRelativeError"),
            None,
            None,
            f"found: {mark(inj is not None and inj.code == 1)}",
        )
    )
    print(
        row(
            "compute-smoke",
            number(got["compute-smoke"], "throughputTflops"),
            None,
            None,
            verdict_word(got["compute-smoke"]),
        )
    )
    mbw = got["memory-bw"]
    d2d = number(mbw, "deviceToDeviceBandwidthGBs")
    hbm = sheet.get("hbm_tbs")
    print(
        row(
            "memory-bw deviceToDevice GB/s",
            d2d,
            ref_copy,
            hbm * 1000 if hbm else None,
            f">=0.90 ref {mark(None if d2d is None else d2d >= 0.9 * ref_copy)} "
            "(a copy reads and writes: HBM traffic is twice the figure)",
        )
    )
    for key in ("hostToDeviceBandwidthGBs", "deviceToHostBandwidthGBs"):
        print(
            row(
                f"memory-bw {key.removesuffix('BandwidthGBs')} GB/s",
                number(mbw, key),
                None,
                None,
                verdict_word(mbw),
            )
        )
    nccl = got["nccl node"]
    expect = "Skip (1 GPU)" if count < 2 else "Pass"
    print(
        row(
            "nccl node busBandwidthGBs",
            number(nccl, "busBandwidthGBs"),
            None,
            None,
            f"{verdict_word(nccl)}; expected {expect}: "
            f"{mark(nccl is not None and verdict_word(nccl) == expect.split()[0])}",
        )
    )
    cp = got["clockprobe"]
    reasons = cp.metrics.get("throttleReasons", "-") if cp else "-"
    print(
        row(
            "clockprobe sustainedClockPct",
            number(cp, "sustainedClockPct"),
            None,
            None,
            f"{verdict_word(cp)}; throttleReasons={reasons}",
        )
    )
    for kind in ("thermal-soak", "gpu-burn"):
        clean, hurt = got[kind], got[f"{kind} injected"]
        print(
            row(
                f"{kind} miscompares",
                number(clean, "miscompares"),
                None,
                None,
                f"{verdict_word(clean)}; 0: {mark(number(clean, 'miscompares') == 0)}",
            )
        )
        print(
            row(
                f"{kind} injected miscompares",
                number(hurt, "miscompares"),
                None,
                None,
                f"found: {mark(hurt is not None and hurt.code == 1)}",
            )
        )
    print(f"\nwall: {time.monotonic() - START:.0f} s of a {BUDGET_S:.0f} s budget")
    return 0


if __name__ == "__main__":
    sys.exit(main())
