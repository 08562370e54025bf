"""The NVML reads the accelerator kinds make, behind one small interface: a :class:`Session`
holds one :class:`Device` per GPU NVML sees, each answering :meth:`Device.identity` (what does
not change while a runner runs), :meth:`Device.sample` (one sample under load) and
:meth:`Device.ecc` (the volatile ECC counters).

Two implementations: the real one over ``nvidia-ml-py`` (module ``pynvml``, imported only when a
session is opened, every call under a timeout so a wedged driver cannot hold a runner past its
deadline), and the trace-replaying fake of :mod:`glimmer.runners.nvml_trace`, chosen when the
test-only variable ``BURNIN_TEST_NVML_TRACE`` names a trace file. Nothing else selects the fake.

Three states, as §9 requires: a read that answered is a value; a read NVML refused as
NOT_SUPPORTED is ``None`` *and* its name is in :attr:`Device.unsupported` (the kind prints
``n/a`` or lists it in ``nvmlUnsupported``); any other failed read is ``None`` alone (omitted).
Read names are the trace file's keys (``smClockMHz``, ``eccErrors``, ...), so a trace can refuse
exactly the read a real part refuses.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol, TypeVar

from glimmer.runners.nvml_probe import ProbeTimeout, with_timeout
from glimmer.runners.settings import Settings

T = TypeVar("T")

TRACE = "BURNIN_TEST_NVML_TRACE"  # test only: replay this trace instead of asking NVML
CALL_TIMEOUT_S = 5.0

# nvml.h constants, restated so an old binding missing one cannot break a read.
NOT_SUPPORTED = 3
CLOCK_SM, CLOCK_MEM = 1, 2
TEMPERATURE_GPU = 0
MEMORY_ERROR_CORRECTED, MEMORY_ERROR_UNCORRECTED = 0, 1
VOLATILE_ECC = 0
PSTATE_UNKNOWN = 32

# The nine clock-event (throttle) reasons of nvml.h, bit -> name, in bit order.
REASONS: dict[int, str] = {
    0x1: "gpuIdle",
    0x2: "applicationsClocks",
    0x4: "swPowerCap",
    0x8: "hwSlowdown",
    0x10: "syncBoost",
    0x20: "swThermalSlowdown",
    0x40: "hwThermalSlowdown",
    0x80: "hwPowerBrake",
    0x100: "displayClock",
}
IDLE = 0x1
APPLICATIONS_CLOCKS = 0x2
POWER_CAP = 0x4
THERMAL = 0x20 | 0x40
# Protective states (§9.3): entering one is a throttle event; swPowerCap is not one.
PROTECTIVE = 0x8 | 0x20 | 0x40 | 0x80


def reason_names(mask: int) -> list[str]:
    """The names of the reasons set in ``mask``, in bit order."""
    return [name for bit, name in REASONS.items() if mask & bit]


@dataclass(frozen=True)
class Identity:
    """What a runner reads once per device. ``None``: unreadable (or unsupported, see
    :attr:`Device.unsupported`). ``ecc_mode`` is enabled, disabled or unsupported."""

    name: str | None = None
    pci_bus_id: str | None = None
    compute_cap: str | None = None
    mig_enabled: bool | None = None
    rated_sm_clock_mhz: int | None = None
    max_mem_clock_mhz: int | None = None
    enforced_power_limit_w: float | None = None
    default_power_limit_w: float | None = None
    ecc_mode: str | None = None


@dataclass(frozen=True)
class Sample:
    """One sample under load; a field NVML did not answer is ``None``."""

    sm_clock_mhz: int | None = None
    mem_clock_mhz: int | None = None
    pstate: int | None = None
    temp_c: float | None = None
    power_w: float | None = None
    throttle_reasons: int | None = None
    gpu_util_pct: float | None = None
    mem_util_pct: float | None = None


@dataclass(frozen=True)
class EccCounts:
    corrected: int
    uncorrected: int


class Device(Protocol):
    index: int
    unsupported: set[str]  # names of the reads NVML refused as NOT_SUPPORTED

    def identity(self) -> Identity: ...

    def sample(self) -> Sample: ...

    def ecc(self) -> EccCounts | None: ...


class Session(Protocol):
    driver_version: str | None
    devices: list[Device]

    def close(self) -> None: ...


@dataclass(frozen=True)
class Opened:
    """The result of opening NVML: a session, or ``None`` with a status and why.

    ``status``: ``ok``; ``absent`` (nvidia-ml-py not installed); ``unavailable`` (NVML did not
    start or a handle failed); ``no-devices`` (NVML started and sees no GPU)."""

    session: Session | None
    status: str
    why: str = ""


def normal_bus_id(bus_id: str) -> str:
    """One spelling of a PCI address: NVML says ``00000000:19:00.0``, torch and sysfs
    ``0000:19:00.0``; both become ``0000:19:00.0`` (lower case, 4-digit domain)."""
    text = bus_id.strip().lower()
    parts = text.split(":")
    if len(parts) == 3:
        with contextlib.suppress(ValueError):
            return f"{int(parts[0], 16):04x}:{parts[1]}:{parts[2]}"
    return text


def find_device(session: Session, bus_id: str | None, index: int) -> Device | None:
    """The NVML device behind a torch device: by PCI address when torch gave one (CUDA's
    device order need not be NVML's), else by index."""
    if bus_id:
        wanted = normal_bus_id(bus_id)
        for dev in session.devices:
            found = dev.identity().pci_bus_id
            if found is not None and normal_bus_id(found) == wanted:
                return dev
        return None
    return session.devices[index] if 0 <= index < len(session.devices) else None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class _Unsupported(Exception):
    pass


class _Real:
    """Calls into pynvml under a timeout; the first call that hangs makes every later call
    fail at once (a hung driver is asked nothing more)."""

    def __init__(self, lib: ModuleType) -> None:
        self.lib = lib
        self.wedged = ""

    def call(self, name: str, *args: Any) -> Any:
        if self.wedged:
            raise ProbeTimeout(self.wedged)
        fn = getattr(self.lib, name)
        try:
            return with_timeout(lambda: fn(*args), CALL_TIMEOUT_S)
        except ProbeTimeout as exc:
            self.wedged = f"{name}: {exc}"
            raise
        except Exception as exc:
            if getattr(exc, "value", None) == NOT_SUPPORTED:
                raise _Unsupported(name) from None
            raise


class RealDevice:
    def __init__(self, nvml: _Real, index: int, handle: Any) -> None:
        self._nvml = nvml
        self.index = index
        self._handle = handle
        self.unsupported: set[str] = set()
        self._identity: Identity | None = None

    def _read(self, read: str, fn: Callable[[], T]) -> T | None:
        try:
            return fn()
        except _Unsupported:
            self.unsupported.add(read)
        except Exception:
            pass
        return None

    def _call(self, read: str, name: str, *args: Any) -> Any:
        return self._read(read, lambda: self._nvml.call(name, self._handle, *args))

    def identity(self) -> Identity:
        if self._identity is not None:
            return self._identity
        name = self._call("name", "nvmlDeviceGetName")
        pci = self._call("pciBusId", "nvmlDeviceGetPciInfo")
        cc = self._call("computeCap", "nvmlDeviceGetCudaComputeCapability")
        mig = self._call("migMode", "nvmlDeviceGetMigMode")
        rated = self._call("ratedSmClockMHz", "nvmlDeviceGetMaxClockInfo", CLOCK_SM)
        mem = self._call("maxMemClockMHz", "nvmlDeviceGetMaxClockInfo", CLOCK_MEM)
        enforced = self._call("enforcedPowerLimitW", "nvmlDeviceGetEnforcedPowerLimit")
        default = self._call("defaultPowerLimitW", "nvmlDeviceGetPowerManagementDefaultLimit")
        ecc_mode: str | None = None
        try:
            current, _pending = self._nvml.call("nvmlDeviceGetEccMode", self._handle)
            ecc_mode = "enabled" if current else "disabled"
        except _Unsupported:
            ecc_mode = "unsupported"
            self.unsupported.add("eccMode")
        except Exception:
            ecc_mode = None
        if rated == 0:  # answered, and the answer is: no rated clock
            self.unsupported.add("ratedSmClockMHz")
        self._identity = Identity(
            name=_text(name) if name is not None else None,
            pci_bus_id=_text(pci.busId) if pci is not None else None,
            compute_cap=f"{cc[0]}.{cc[1]}" if cc is not None else None,
            mig_enabled=bool(mig[0]) if mig is not None else None,
            # A part that reports 0 MHz has no rated clock to measure against.
            rated_sm_clock_mhz=int(rated) if rated else None,
            max_mem_clock_mhz=int(mem) if mem else None,
            enforced_power_limit_w=enforced / 1000.0 if enforced else None,
            default_power_limit_w=default / 1000.0 if default else None,
            ecc_mode=ecc_mode,
        )
        return self._identity

    def _reasons(self) -> int | None:
        # Newer drivers name them clock-event reasons; older bindings only have the old name.
        if hasattr(self._nvml.lib, "nvmlDeviceGetCurrentClocksEventReasons"):
            value = self._call("throttleReasons", "nvmlDeviceGetCurrentClocksEventReasons")
        else:
            value = self._call("throttleReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")
        return int(value) if value is not None else None

    def sample(self) -> Sample:
        sm = self._call("smClockMHz", "nvmlDeviceGetClockInfo", CLOCK_SM)
        mem = self._call("memClockMHz", "nvmlDeviceGetClockInfo", CLOCK_MEM)
        pstate = self._call("pstate", "nvmlDeviceGetPerformanceState")
        temp = self._call("tempC", "nvmlDeviceGetTemperature", TEMPERATURE_GPU)
        power = self._call("powerW", "nvmlDeviceGetPowerUsage")
        util = self._call("gpuUtilPct", "nvmlDeviceGetUtilizationRates")
        return Sample(
            sm_clock_mhz=int(sm) if sm is not None else None,
            mem_clock_mhz=int(mem) if mem is not None else None,
            pstate=int(pstate) if pstate is not None and pstate != PSTATE_UNKNOWN else None,
            temp_c=float(temp) if temp is not None else None,
            power_w=power / 1000.0 if power is not None else None,
            throttle_reasons=self._reasons(),
            gpu_util_pct=float(util.gpu) if util is not None else None,
            mem_util_pct=float(util.memory) if util is not None else None,
        )

    def ecc(self) -> EccCounts | None:
        def both() -> EccCounts:
            total = "nvmlDeviceGetTotalEccErrors"
            h = self._handle
            return EccCounts(
                int(self._nvml.call(total, h, MEMORY_ERROR_CORRECTED, VOLATILE_ECC)),
                int(self._nvml.call(total, h, MEMORY_ERROR_UNCORRECTED, VOLATILE_ECC)),
            )

        return self._read("eccErrors", both)


class RealSession:
    def __init__(self, nvml: _Real, devices: list[Device], driver: str | None) -> None:
        self._nvml = nvml
        self.devices = devices
        self.driver_version = driver

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._nvml.call("nvmlShutdown")


def open_real() -> Opened:
    try:
        lib = importlib.import_module("pynvml")
    except ImportError:
        return Opened(None, "absent", "nvidia-ml-py is not installed (pip install nvidia-ml-py)")
    nvml = _Real(lib)
    try:
        nvml.call("nvmlInit")
        count = int(nvml.call("nvmlDeviceGetCount"))
        handles = [nvml.call("nvmlDeviceGetHandleByIndex", i) for i in range(count)]
    except Exception as exc:
        return Opened(None, "unavailable", f"NVML did not start: {exc}")
    if not handles:
        return Opened(None, "no-devices", "NVML sees no GPU")
    driver = None
    with contextlib.suppress(Exception):
        driver = _text(nvml.call("nvmlSystemGetDriverVersion"))
    devices: list[Device] = [RealDevice(nvml, i, h) for i, h in enumerate(handles)]
    return Opened(RealSession(nvml, devices, driver), "ok")


def open_session(settings: Settings) -> Opened:
    """The fake when ``BURNIN_TEST_NVML_TRACE`` names a trace (test mode), else NVML."""
    trace = settings.raw(TRACE)
    if trace is not None:
        from glimmer.runners.nvml_trace import open_trace  # test mode only

        return open_trace(trace)
    return open_real()
