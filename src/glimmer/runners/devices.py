"""The accelerator devices a runner measures, and the one fold of their figures (§9 preamble).

Every multi-device kind (clockprobe, compute-smoke, gemm-sweep, thermal-soak, gpu-burn) uses
this module the same way::

    torch = load_torch()                        # None: torch is not installed
    found = discover(ctx.settings, torch)       # what the runtime shows, or a test device
    if not found.visible:
        raise Stop(skipped(...))                # or Error: see no_device_outcome()
    allocated = allocate(ctx.settings, found)   # the BURNIN_RESOURCE_LIMITS budget (§3.5)
    mode = concurrency(ctx.settings, SEQUENTIAL)
    results = for_each(allocated, mode, measure_one)   # measure_one(Device) -> DeviceResult
    return fold(ctx.report, KIND, results, Fold(...))  # prints; returns the Outcome

* A :class:`Device` names a torch device (``cuda:<i>``, or ``cpu`` in test mode) and its
  identity (name, compute capability, PCI bus id). ``Device.torch_device`` is what the numeric
  code passes to torch.
* :func:`fold` prints each metric once, folded to the worst device by the registry's
  Aggregation (Min for floors, Max for ceilings, Sum for counters; lifetime counters summed;
  labels and wall-clock values from the first device), then ``deviceCount``,
  ``devicesVisible``, ``deviceWindowS``, ``deviceConcurrency``, ``worstDeviceIndex``,
  ``worstDevicePciBusId``, ``deviceHomogeneous`` and the kind's spreads (``n/a`` on one device,
  under MIG, or on a heterogeneous board), and the per-device table as the artifact
  ``per-device.json``. Across devices the verdict is Fail > Error > Skip > Pass.

**Test mode** (tests only, never a user's configuration): ``BURNIN_TEST_DEVICE=cpu`` makes
:func:`discover` return ``BURNIN_TEST_DEVICE_COUNT`` (default 1) devices on torch's ``cpu``,
each claiming the compute capability ``BURNIN_TEST_COMPUTE_CAP`` (default ``9.0``) and the name
``BURNIN_TEST_GPU_NAME`` (default ``test cpu``), so the kinds' real numeric code, compare loops,
budgets and folds run in CI with no GPU. Without it, a host with no GPU shows no device and the
kind declines with its Skip marker.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from glimmer.contract.device_fold import CEILINGS, fold_devices
from glimmer.contract.registry import Aggregation, aggregation_of
from glimmer.contract.vocab import RunnerVerdict
from glimmer.runners.outcome import ConfigError, Outcome, Stop, errored, passed, skipped
from glimmer.runners.report import Report, Value, format_value
from glimmer.runners.settings import Settings

TEST_DEVICE = "BURNIN_TEST_DEVICE"
TEST_DEVICE_COUNT = "BURNIN_TEST_DEVICE_COUNT"
TEST_COMPUTE_CAP = "BURNIN_TEST_COMPUTE_CAP"
TEST_GPU_NAME = "BURNIN_TEST_GPU_NAME"
RESOURCE_LIMITS = "BURNIN_RESOURCE_LIMITS"
DEVICE_CONCURRENCY = "BURNIN_DEVICE_CONCURRENCY"

SEQUENTIAL = "sequential"
ALL = "all"
# §3.5: the count-shaped accelerator resources a budget sums; any other name under these
# vendors' domains is one the runner cannot interpret, hence exit 3.
GPU_RESOURCES = frozenset({"nvidia.com/gpu", "amd.com/gpu"})
GPU_RESOURCE_PREFIXES = ("nvidia.com/mig-",)
VENDOR_PREFIXES = ("nvidia.com/", "amd.com/")

# Wall-clock values describe the whole execution, not a device: emitted once (first device).
WALL_CLOCK = frozenset({"elapsedS", "durationRequestedS"})
# Verdict precedence across devices (§9 preamble): the opposite of Pair's Error > Fail.
PRECEDENCE = (RunnerVerdict.FAIL, RunnerVerdict.ERROR, RunnerVerdict.SKIP, RunnerVerdict.PASS)
ARTIFACT = "per-device.json"


@dataclass(frozen=True)
class Device:
    """One accelerator as torch sees it."""

    index: int
    torch_device: str  # "cuda:0", or "cpu" in test mode
    name: str
    compute_cap: str | None  # "9.0"; None when unreadable (never guessed)
    pci_bus_id: str | None
    memory_bytes: int | None = None
    test: bool = False

    @property
    def cc_tuple(self) -> tuple[int, int] | None:
        if self.compute_cap is None:
            return None
        major, _, minor = self.compute_cap.partition(".")
        try:
            return int(major), int(minor or 0)
        except ValueError:
            return None


@dataclass(frozen=True)
class Discovery:
    visible: tuple[Device, ...]
    test_mode: bool
    torch_missing: bool = False


def load_torch() -> ModuleType | None:
    """torch, or None when it is not installed (the base install and the vendor-free image)."""
    try:
        return importlib.import_module("torch")
    except ImportError:
        return None


def test_device(settings: Settings) -> str | None:
    """The test-mode device (``cpu``), or None in a real run; anything else is exit 3."""
    raw = settings.raw(TEST_DEVICE)
    if raw is None:
        return None
    if raw != "cpu":
        raise ConfigError(TEST_DEVICE, f"{raw!r}: the only test device is cpu")
    return raw


def _pci_bus_id(props: Any) -> str | None:
    try:
        return f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
    except (AttributeError, TypeError, ValueError):
        return None


def discover(settings: Settings, torch: ModuleType | None) -> Discovery:
    """The devices the runtime shows this process (``CUDA_VISIBLE_DEVICES`` applied), or the
    test-mode devices. A driver that fails to initialise shows no device."""
    if test_device(settings) is not None:
        if torch is None:
            raise Stop(errored(f"{TEST_DEVICE}=cpu needs torch installed"))
        count = settings.integer(TEST_DEVICE_COUNT, 1, minimum=1, maximum=64)
        test_cc = settings.text(TEST_COMPUTE_CAP, "9.0")
        test_name = settings.text(TEST_GPU_NAME, "test cpu")
        tests = tuple(
            Device(i, "cpu", test_name, test_cc, f"cpu:{i}", None, test=True) for i in range(count)
        )
        return Discovery(tests, test_mode=True)
    if torch is None:
        return Discovery((), test_mode=False, torch_missing=True)
    try:
        count = int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
    except RuntimeError:
        count = 0
    devices: list[Device] = []
    for i in range(count):
        props = torch.cuda.get_device_properties(i)
        cc = f"{props.major}.{props.minor}" if getattr(props, "major", None) is not None else None
        devices.append(
            Device(
                i, f"cuda:{i}", str(props.name), cc, _pci_bus_id(props),
                int(getattr(props, "total_memory", 0)) or None,
            )
        )  # fmt: skip
    return Discovery(tuple(devices), test_mode=False)


def nvidia_device_nodes(dev: Path = Path("/dev")) -> list[str]:
    """The NVIDIA GPU device nodes the container was given (``/dev/nvidia0`` ...)."""
    return sorted(p.name for p in dev.glob("nvidia[0-9]*"))


def no_device_outcome(found: Discovery, what: str = "no accelerator") -> Outcome:
    """Why there is nothing to measure: Skip when this host shows no GPU at all, Error when a
    GPU device node is there but torch is missing or cannot reach it (a broken image or
    driver is machinery, never a clean skip)."""
    nodes = nvidia_device_nodes()
    if found.torch_missing:
        if nodes:
            return errored(f"torch is not installed but {nodes[0]} is present: a broken image")
        return skipped(f"{what}: torch is not installed and no NVIDIA device is present")
    if nodes:
        return errored(f"{nodes[0]} is present but CUDA shows no usable device (driver?)")
    return skipped(f"{what}: no CUDA device visible")


def budget(settings: Settings) -> int | None:
    """The sum of the accelerator counts in ``BURNIN_RESOURCE_LIMITS``; None when it is absent
    (iterate every visible device). Set but empty, malformed, or naming an unrecognised vendor
    resource: exit 3 (§3.5)."""
    raw = settings.raw(RESOURCE_LIMITS)
    if raw is None:
        if settings.is_set(RESOURCE_LIMITS):  # set but empty: its own refusal (§3.5)
            raise ConfigError(RESOURCE_LIMITS, "set but empty")
        return None
    total = 0
    for entry in raw.split(","):
        name, sep, qty = (part.strip() for part in entry.partition("="))
        if not sep or not name:
            raise ConfigError(RESOURCE_LIMITS, f"malformed entry {entry.strip()!r}")
        if name in GPU_RESOURCES or name.startswith(GPU_RESOURCE_PREFIXES):
            try:
                count = int(qty, 10)
            except ValueError:
                why = f"{name} is not a whole count: {qty!r}"
                raise ConfigError(RESOURCE_LIMITS, why) from None
            if count < 0:
                raise ConfigError(RESOURCE_LIMITS, f"{name} is negative: {qty!r}")
            total += count
        elif name.startswith(VENDOR_PREFIXES):
            raise ConfigError(RESOURCE_LIMITS, f"unrecognised vendor resource {name}")
    return total


def allocate(settings: Settings, found: Discovery) -> tuple[Device, ...]:
    """The devices this execution may load: every visible one, after checking the budget
    agrees with what the runtime shows (a budget of 2 with 8 visible is a pod the runner
    cannot reason about, exit 3)."""
    limit = budget(settings)
    visible = found.visible
    if limit is None:
        return visible
    if limit == 0 and visible:
        raise ConfigError(RESOURCE_LIMITS, f"budget 0 but {len(visible)} devices are visible")
    if limit != len(visible):
        raise ConfigError(
            RESOURCE_LIMITS, f"budget {limit} differs from the {len(visible)} devices visible"
        )
    return visible


def concurrency(settings: Settings, default: str) -> str:
    """``BURNIN_DEVICE_CONCURRENCY`` (all | sequential), else the kind's default: soak kinds
    load every device at once, measurement kinds one after another."""
    mode = settings.text(DEVICE_CONCURRENCY, default)
    if mode not in (SEQUENTIAL, ALL):
        raise ConfigError(DEVICE_CONCURRENCY, f"{mode!r} is neither all nor sequential")
    return mode


def device_window(window_s: float, devices: int, mode: str) -> float:
    """Each device's share of the window: all of it when concurrent, a slice when sequential."""
    return window_s if mode == ALL or devices <= 1 else window_s / devices


@dataclass
class DeviceResult:
    """One device's outcome and figures (canonical names, in print order)."""

    device: Device
    outcome: Outcome = field(default_factory=passed)
    values: dict[str, Value] = field(default_factory=dict)
    decimals: dict[str, int] = field(default_factory=dict)
    unmeasurable: list[str] = field(default_factory=list)

    def put(self, name: str, value: Value, decimals: int = 2) -> None:
        self.values[name] = value
        self.decimals[name] = decimals


Measure = Callable[[Device], DeviceResult]
_STOPPING = threading.Event()


def stopping() -> bool:
    """True once the run is ending (signal or interrupt) while devices run concurrently: a
    device's loop checks it between iterations."""
    return _STOPPING.is_set()


def for_each(devices: Sequence[Device], mode: str, measure: Measure) -> list[DeviceResult]:
    """Run ``measure`` on every device, one after another or all at once (a thread each). A
    :class:`Stop` raised for one device becomes that device's outcome; any other exception is
    a runner bug and is raised again here, after every thread has ended."""

    def one(device: Device) -> DeviceResult:
        try:
            return measure(device)
        except Stop as stop:
            return DeviceResult(device, stop.outcome)

    # A process runs one kind, but tests run many in one interpreter: a stop left by an earlier
    # run must not end this one's loops before they start.
    _STOPPING.clear()
    if mode == SEQUENTIAL or len(devices) <= 1:
        return [one(d) for d in devices]
    results: list[DeviceResult | None] = [None] * len(devices)
    crashes: list[BaseException] = []

    def worker(pos: int, device: Device) -> None:
        try:
            results[pos] = one(device)
        except BaseException as exc:  # re-raised in the caller's thread below
            crashes.append(exc)

    threads = [threading.Thread(target=worker, args=(i, d)) for i, d in enumerate(devices)]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except BaseException:
        # SIGTERM (a Stop) or ^C reaches the main thread only: ask every device's loop to end
        # at its next check and wait for it, so no device loads on past the marker.
        _STOPPING.set()
        for t in threads:
            t.join()
        raise
    if crashes:
        raise crashes[0]
    return [r for r in results if r is not None]


def fold_value(name: str, values: Sequence[Value]) -> Value:
    """One figure for the node: the worst device's, by the registry's direction; wall-clock
    values once (the first device's)."""
    return fold_devices(name, values, once=WALL_CLOCK)


def combined_outcome(results: Sequence[DeviceResult]) -> Outcome:
    """Fail > Error > Skip > Pass across devices; the reason names the devices behind it."""
    if not results:
        return errored("no device was measured")
    for verdict in PRECEDENCE:
        behind = [r for r in results if r.outcome.verdict is verdict]
        if not behind:
            continue
        if verdict is RunnerVerdict.PASS:
            return passed(behind[0].outcome.reason if len(results) == 1 else "")
        if len(results) == 1:
            return behind[0].outcome
        reason = "; ".join(f"device {r.device.index}: {r.outcome.reason}" for r in behind)
        return Outcome(verdict, reason)
    raise AssertionError("unreachable: every verdict is in PRECEDENCE")


def worst_position(results: Sequence[DeviceResult], primary: str, verdict: RunnerVerdict) -> int:
    """The device behind the folded verdict and figure: among the devices with the folded
    verdict, the worst by ``primary`` (direction from the registry; ties: the first)."""
    candidates = [i for i, r in enumerate(results) if r.outcome.verdict is verdict] or [0]
    figures = [
        (results[i].values.get(primary), i)
        for i in candidates
        if isinstance(results[i].values.get(primary), int | float)
    ]
    if not figures:
        return candidates[0]
    agg = Aggregation.MAX if primary in CEILINGS else aggregation_of(primary)
    if agg is Aggregation.MIN:
        return min(figures, key=lambda p: (float(p[0] or 0), p[1]))[1]
    return max(figures, key=lambda p: (float(p[0] or 0), -p[1]))[1]


def spread_pct(values: Sequence[float]) -> float:
    """(best − worst) / best × 100."""
    best = max(values)
    return 0.0 if best <= 0 else (best - min(values)) / best * 100.0


@dataclass(frozen=True)
class Fold:
    """How a kind folds: its gated figure, its spreads (name -> source metric), and the
    fold's own account."""

    primary: str
    visible: int
    window_s: float
    concurrency: str
    spreads: dict[str, str] = field(default_factory=dict)
    mig: bool = False


def per_device_table(results: Sequence[DeviceResult]) -> str:
    rows = []
    for r in results:
        rows.append(
            {
                "index": r.device.index,
                "name": r.device.name,
                "computeCap": r.device.compute_cap,
                "pciBusId": r.device.pci_bus_id,
                "verdict": r.outcome.verdict.value,
                "reason": r.outcome.reason,
                "metrics": {
                    k: format_value(v, r.decimals.get(k, 2))
                    for k, v in r.values.items()
                    if v is not None
                },
                "unmeasurable": list(r.unmeasurable),
            }
        )
    return json.dumps({"devices": rows}, indent=1, sort_keys=True)


def fold(report: Report, results: Sequence[DeviceResult], how: Fold) -> Outcome:
    """Print the node's figures folded across ``results`` and the fold's account; return the
    combined outcome (the caller returns it, the frame prints the marker)."""
    names: list[str] = []
    for r in results:
        names.extend(k for k in r.values if k not in names)
    for name in names:
        present = [r.values[name] for r in results if r.values.get(name) is not None]
        if not present:
            continue
        decimals = next(r.decimals.get(name, 2) for r in results if name in r.values)
        report.metric(name, fold_value(name, present), decimals)
    measured_names = set(names)
    for r in results:
        for name in r.unmeasurable:
            if name not in measured_names:
                measured_names.add(name)
                report.unmeasurable(name)
    outcome = combined_outcome(results)
    worst = worst_position(results, how.primary, outcome.verdict) if results else 0
    homogeneous = len({(r.device.name, r.device.compute_cap) for r in results}) <= 1
    report.metric("deviceCount", len(results))
    report.metric("devicesVisible", how.visible)
    report.metric("deviceWindowS", float(how.window_s), 1)
    report.metric("deviceConcurrency", how.concurrency)
    if results:
        report.metric("worstDeviceIndex", results[worst].device.index)
        report.metric("worstDevicePciBusId", results[worst].device.pci_bus_id)
    report.metric("deviceHomogeneous", homogeneous)
    for name, source in how.spreads.items():
        figures = [
            float(v)
            for r in results
            if isinstance(v := r.values.get(source), int | float) and not isinstance(v, bool)
        ]
        if len(figures) < 2 or not homogeneous or how.mig:
            report.unmeasurable(name)
        else:
            report.metric(name, spread_pct(figures))
    if results:
        report.artifact(ARTIFACT, "application/json", per_device_table(results))
    return outcome


def device_scope(torch: ModuleType, device: Device) -> contextlib.AbstractContextManager[Any]:
    """Make ``device`` current for the block (each thread of a concurrent run needs this)."""
    if device.torch_device.startswith("cuda"):
        return cast("contextlib.AbstractContextManager[Any]", torch.cuda.device(device.index))
    return contextlib.nullcontext()


def synchronize(torch: ModuleType, device: Device) -> None:
    """Wait for everything queued on ``device`` (the test device runs synchronously)."""
    if device.torch_device.startswith("cuda"):
        torch.cuda.synchronize(device.index)


class Timer:
    """Time spent by the device on the work between each ``begin()`` and ``end()``: CUDA
    events on a GPU, so host-side queuing is not counted; ``perf_counter`` on the test device,
    whose operations run synchronously, behind the same interface."""

    def __init__(self, torch: ModuleType, device: Device) -> None:
        self._torch = torch
        self._cuda = device.torch_device.startswith("cuda")
        self._pairs: list[tuple[Any, Any]] = []
        self._started: Any = None
        self._cpu_ms = 0.0

    def begin(self) -> None:
        if self._cuda:
            self._started = self._torch.cuda.Event(enable_timing=True)
            self._started.record()
        else:
            self._started = time.perf_counter()

    def end(self) -> None:
        if self._cuda:
            stop = self._torch.cuda.Event(enable_timing=True)
            stop.record()
            self._pairs.append((self._started, stop))
        else:
            self._cpu_ms += (time.perf_counter() - self._started) * 1000.0

    def total_ms(self) -> float:
        """The summed intervals so far (waits for the device); the timer starts again at 0."""
        if not self._cuda:
            total, self._cpu_ms = self._cpu_ms, 0.0
            return total
        if self._pairs:
            self._pairs[-1][1].synchronize()
        total = sum(float(a.elapsed_time(b)) for a, b in self._pairs)
        self._pairs.clear()
        return total
