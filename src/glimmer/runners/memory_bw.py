"""memory-bw (§9.6): copy-path bandwidth of every visible GPU, the minimum cell reported.

The copy paths nvbandwidth's copy-engine testcases measure, issued through torch: host to
device (``host_to_device_memcpy_ce``, from pinned host memory), device to host, a device-local
copy (``device_local_copy``), and, with two or more GPUs, every ordered peer pair that has a
peer path. Each cell is ``BURNIN_MEMORY_BW_SAMPLES`` copies of ``BURNIN_MEMORY_BW_BUFFER_MIB``
after one warm-up copy, each timed alone with device events; a cell's figure is bytes over its
summed copy time (1 GB = 1e9 bytes, as nvbandwidth). The acceptance figure of a path is its
**minimum** cell (a slow GPU or link among fast ones is the finding), ``…MaxGBs`` its best.
After each cell the destination is compared with what was sent.

Peer copies: torch issues a copy between GPUs on the source GPU, so the peer matrix is one of
pushes and is printed as ``peerWriteBandwidthGBs``; a pull (``peerRead…``) cannot be chosen
through torch and is left out (unread, not unmeasurable). On one GPU, or with no peer path
between any pair, both peer figures are ``n/a``. Like nvbandwidth, this kind reports only
``devicesVisible`` and never claims ``deviceCount``.

Exit: 0 all three paths produced a figure and every copy arrived intact; 1 a copy arrived
corrupted (the one hardware verdict); 2 (``MEMORY_BW_SKIP``) no GPU on this host; 3 a GPU
present but unusable, any CUDA error, no figure, or the budget (``BURNIN_DURATION_SECONDS``,
default 600, 0 disables) exceeded. Unlike the other kinds, malformed ``BURNIN_MEMORY_BW_*``
values and a malformed duration fall back to their defaults with a note (§9 preamble).
``BURNIN_MEMORY_BW_DISABLE_AFFINITY=1`` leaves the process's CPU affinity alone; otherwise
host copies run on the CPUs local to the GPU (its PCI device's ``local_cpulist``).

Self-test: ``BURNIN_MEMORY_BW_INJECT_CORRUPTION=1`` changes one element of each device-local
copy's destination before it is checked. Test mode (``BURNIN_TEST_DEVICE=cpu``) copies
between cpu tensors, timed with ``perf_counter`` behind the same timer.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from glimmer.runners import devices as dv
from glimmer.runners.deadline import Deadline
from glimmer.runners.gemm_sweep import first_line
from glimmer.runners.outcome import Outcome, Stop, errored, failed, passed
from glimmer.runners.program import Context, main
from glimmer.runners.report import Report
from glimmer.runners.settings import DURATION, Settings

KIND = "memory-bw"
SAMPLES = "BURNIN_MEMORY_BW_SAMPLES"
BUFFER_MIB = "BURNIN_MEMORY_BW_BUFFER_MIB"
DISABLE_AFFINITY = "BURNIN_MEMORY_BW_DISABLE_AFFINITY"
INJECT = "BURNIN_MEMORY_BW_INJECT_CORRUPTION"
DEFAULTS = {DURATION: 600, SAMPLES: 3, BUFFER_MIB: 512, DISABLE_AFFINITY: 0, INJECT: 0}
LIMITS = {DURATION: (0, 86400), SAMPLES: (1, 1000), BUFFER_MIB: (1, 65536),
          DISABLE_AFFINITY: (0, 1), INJECT: (0, 1)}  # fmt: skip
MIB = 1024 * 1024


@dataclass(frozen=True)
class Config:
    budget_s: int
    samples: int
    buffer_bytes: int
    affinity: bool
    inject: bool


def tolerant(settings: Settings, name: str, report: Report) -> int:
    """A whole number in range, else the default with a note (§9.6: never exit 3 for these)."""
    default = DEFAULTS[name]
    raw = settings.raw(name)
    if raw is None:
        return default
    low, high = LIMITS[name]
    try:
        value = int(raw, 10)
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        report.note(f"config warning: {name}={raw!r} is not a whole number in [{low}, {high}]; "
                    f"using the default {default}")  # fmt: skip
        return default
    return value


def read_config(settings: Settings, report: Report) -> Config:
    return Config(
        budget_s=tolerant(settings, DURATION, report),
        samples=tolerant(settings, SAMPLES, report),
        buffer_bytes=tolerant(settings, BUFFER_MIB, report) * MIB,
        affinity=not tolerant(settings, DISABLE_AFFINITY, report),
        inject=bool(tolerant(settings, INJECT, report)),
    )


@dataclass
class CopyPath:
    """One copy path's cells: (label, GB/s)."""

    cells: list[tuple[str, float]] = field(default_factory=list)
    corrupted: list[str] = field(default_factory=list)

    def minimum(self) -> float | None:
        return min(v for _, v in self.cells) if self.cells else None

    def maximum(self) -> float | None:
        return max(v for _, v in self.cells) if self.cells else None


def _cpu_list(text: str) -> set[int]:
    cpus: set[int] = set()
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        if low.isdigit():
            cpus.update(range(int(low), int(high or low) + 1))
    return cpus


@contextlib.contextmanager
def near_cpus(device: dv.Device, enabled: bool, sysfs: Path) -> Iterator[None]:
    """Host copies on the CPUs local to the GPU (as nvbandwidth does), when they are known."""
    previous = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    wanted: set[int] = set()
    if enabled and previous is not None and device.pci_bus_id and not device.test:
        bus = device.pci_bus_id.lower()[-12:]  # NVML pads the domain to 8 digits; sysfs to 4
        with contextlib.suppress(OSError):
            text = (sysfs / "bus/pci/devices" / bus / "local_cpulist").read_text()
            wanted = _cpu_list(text) & previous
    if wanted and previous is not None:
        os.sched_setaffinity(0, wanted)
    try:
        yield
    finally:
        if wanted and previous is not None:
            os.sched_setaffinity(0, previous)


class Copier:
    """Times copies into ``dst`` from ``src`` and checks what arrived."""

    def __init__(self, torch: ModuleType, timer_device: dv.Device, samples: int) -> None:
        self.torch = torch
        self.timer = dv.Timer(torch, timer_device)
        self.device = timer_device
        self.samples = samples

    def cell(self, dst: Any, src: Any, on: dv.Device) -> float:
        """GB/s of ``samples`` copies issued with ``on`` current, after one warm-up copy."""
        with dv.device_scope(self.torch, on):
            dst.copy_(src, non_blocking=True)
            dv.synchronize(self.torch, on)
            self.timer = dv.Timer(self.torch, on)
            for _ in range(self.samples):
                self.timer.begin()
                dst.copy_(src, non_blocking=True)
                self.timer.end()
            ms = self.timer.total_ms()
        if ms <= 0:
            raise Stop(errored(f"a copy on {on.torch_device} took no measurable time"))
        return float(dst.numel() * dst.element_size() * self.samples / (ms / 1e3) / 1e9)


def _pattern(torch: ModuleType, count: int, device: str) -> Any:
    """Every element distinct, so a shifted, dropped or stale block shows."""
    return torch.arange(count, dtype=torch.int32, device=device)


class Run:
    def __init__(self, ctx: Context, torch: ModuleType, cfg: Config) -> None:
        self.ctx, self.torch, self.cfg = ctx, torch, cfg
        self.deadline = Deadline(cfg.budget_s) if cfg.budget_s else None
        self.count = cfg.buffer_bytes // 4
        self.h2d, self.d2h, self.d2d, self.peer = CopyPath(), CopyPath(), CopyPath(), CopyPath()

    def check_budget(self, doing: str) -> None:
        if self.deadline is not None and self.deadline.expired():
            raise Stop(errored(f"budget of {self.cfg.budget_s} s exceeded before {doing}"))

    def verify(self, path: CopyPath, label: str, got: Any, expected: Any) -> None:
        if not bool(self.torch.equal(got, expected)):
            wrong = int((got != expected).sum())
            path.corrupted.append(f"{label}: {wrong} of {got.numel()} elements")

    def host_buffer(self, device: dv.Device) -> Any:
        host = _pattern(self.torch, self.count, "cpu")
        return host if device.test else host.pin_memory()

    def device_paths(self, device: dv.Device) -> None:
        torch, where, label = self.torch, device.torch_device, f"device {device.index}"
        copier = Copier(torch, device, self.cfg.samples)
        with near_cpus(device, self.cfg.affinity, self.ctx.paths.sysfs):
            self.check_budget(f"{label} host to device")
            host = self.host_buffer(device)
            on_device = torch.empty(self.count, dtype=torch.int32, device=where)
            expected = _pattern(torch, self.count, where)
            self.h2d.cells.append((label, copier.cell(on_device, host, device)))
            self.verify(self.h2d, f"{label} host to device", on_device, expected)
            self.check_budget(f"{label} device to host")
            back = torch.zeros_like(host)
            if not device.test:
                back = back.pin_memory()
            self.d2h.cells.append((label, copier.cell(back, expected, device)))
            self.verify(self.d2h, f"{label} device to host", back, host)
        self.check_budget(f"{label} device-local copy")
        local = torch.zeros_like(expected)
        self.d2d.cells.append((label, copier.cell(local, expected, device)))
        if self.cfg.inject:
            local[len(local) // 2] += 1
        self.verify(self.d2d, f"{label} device-local copy", local, expected)

    def peer_paths(self, devices: tuple[dv.Device, ...]) -> bool:
        """Every ordered pair with a peer path; False when no pair has one."""
        torch, any_path = self.torch, False
        for src in devices:
            for dst in devices:
                if src.index == dst.index or not self.peer_access(src, dst):
                    continue
                any_path = True
                self.check_budget(f"peer copy {src.index}->{dst.index}")
                sent = _pattern(torch, self.count, src.torch_device)
                landed = torch.zeros(self.count, dtype=torch.int32, device=dst.torch_device)
                label = f"{src.index}->{dst.index}"
                self.peer.cells.append((label, Copier(torch, src, self.cfg.samples).cell(
                    landed, sent, src)))  # fmt: skip
                self.verify(self.peer, f"peer copy {label}", landed,
                            _pattern(torch, self.count, dst.torch_device))  # fmt: skip
        return any_path

    def peer_access(self, src: dv.Device, dst: dv.Device) -> bool:
        if src.test:
            return True  # the test devices share one memory: a peer path of sorts
        return bool(self.torch.cuda.can_device_access_peer(src.index, dst.index))


def report_paths(report: Report, run: Run, peers: bool | None) -> None:
    for name, path in (
        ("hostToDevice", run.h2d), ("deviceToHost", run.d2h), ("deviceToDevice", run.d2d),
    ):  # fmt: skip
        report.metric(f"{name}BandwidthGBs", path.minimum())
        report.metric(f"{name}BandwidthMaxGBs", path.maximum())
    if peers is None or not peers:
        for name in ("peerReadBandwidthGBs", "peerWriteBandwidthGBs",
                     "peerReadBandwidthMaxGBs", "peerWriteBandwidthMaxGBs"):  # fmt: skip
            report.unmeasurable(name)
    else:
        report.metric("peerWriteBandwidthGBs", run.peer.minimum())
        report.metric("peerWriteBandwidthMaxGBs", run.peer.maximum())
        report.note("peer reads are not measured: torch issues every peer copy on its source")
    figures = [v for _, v in run.h2d.cells]
    if len(figures) >= 2:
        report.metric("hostToDeviceBandwidthSpreadPct", dv.spread_pct(figures))
    else:
        report.unmeasurable("hostToDeviceBandwidthSpreadPct")
    for path in (run.h2d, run.d2h, run.d2d, run.peer):
        for label, value in path.cells:
            report.note(f"cell {label}: {value:.2f} GB/s")


def measure(ctx: Context) -> Outcome:
    report = ctx.report
    cfg = read_config(ctx.settings, report)
    torch = dv.load_torch()
    found = dv.discover(ctx.settings, torch)
    if found.visible or not found.torch_missing:
        report.metric("devicesVisible", len(found.visible))
    if not found.visible or torch is None:
        return dv.no_device_outcome(found, "no CUDA device")
    devices = dv.allocate(ctx.settings, found)
    report.metric("gpuName", devices[0].name)
    report.metric("cudaDriverVersion", None if devices[0].test else driver_version(torch))
    report.metric("transferSizeBytes", cfg.buffer_bytes)
    report.metric("testSamples", cfg.samples)
    if cfg.inject:
        report.note(f"self-test: one element of each device-local copy corrupted ({INJECT})")
    run = Run(ctx, torch, cfg)
    started = time.monotonic()
    peers: bool | None = None
    stopped: Outcome | None = None
    try:
        for device in devices:
            run.device_paths(device)
        peers = run.peer_paths(devices) if len(devices) >= 2 else None
    except Stop as stop:  # the budget: what was measured is still printed
        stopped = stop.outcome
    except RuntimeError as exc:
        stopped = errored(f"CUDA error: {first_line(exc)}")
    report.metric("elapsedS", time.monotonic() - started)
    report_paths(report, run, peers)
    return judge(run, stopped)


def driver_version(torch: ModuleType) -> str | None:
    """The CUDA driver's version (``cuDriverGetVersion``), e.g. 12.8; None when unreadable."""
    read = getattr(torch._C, "_cuda_getDriverVersion", None)
    try:
        version = int(read()) if read is not None else 0
    except (RuntimeError, TypeError, ValueError):
        return None
    return f"{version // 1000}.{version % 1000 // 10}" if version > 0 else None


def judge(run: Run, stopped: Outcome | None = None) -> Outcome:
    """Corruption is the one hardware verdict and stands even when the run was cut short."""
    corrupted = run.h2d.corrupted + run.d2h.corrupted + run.d2d.corrupted + run.peer.corrupted
    if corrupted:
        return failed("copy arrived corrupted: " + "; ".join(corrupted))
    if stopped is not None:
        return stopped
    missing = [n for n, p in (("H2D", run.h2d), ("D2H", run.d2h), ("D2D", run.d2d)) if not p.cells]
    if missing:
        return errored(f"no figure for {', '.join(missing)}")
    return passed()


if __name__ == "__main__":
    main(KIND, measure)
