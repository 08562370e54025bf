"""NVIDIA driver counters through NVML (``nvidia-ml-py``, imported only when present), each
read under a per-probe timeout so a wedged driver cannot hold host-health past its deadline.

Three states per figure: a read NVML answers is a measurement; NVML's NOT_SUPPORTED on every
GPU (GB10 has no ECC and no row remapper) is ``n/a``; anything else (a timeout, an error, ECC
switched off, a mix of answers) is omitted. Node totals are reported only when every GPU
answered.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, TypeVar

T = TypeVar("T")
PROBE_TIMEOUT_S = 8.0
# NVML constants (nvml.h), restated so a missing attribute in an old binding cannot break us.
NOT_SUPPORTED = 3
MEMORY_ERROR_CORRECTED, MEMORY_ERROR_UNCORRECTED = 0, 1
AGGREGATE_ECC = 1
TEMPERATURE_GPU = 0


class ProbeTimeout(Exception):
    pass


class Unsupported(Exception):
    pass


def with_timeout(fn: Callable[[], T], seconds: float = PROBE_TIMEOUT_S) -> T:
    """Run ``fn`` on a daemon thread; raise ProbeTimeout if it has not answered in time."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise ProbeTimeout(f"no answer in {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


@dataclass
class Nvml:
    lib: ModuleType
    handles: list[Any] = field(default_factory=list)
    # Set by the first probe that timed out: a driver that hung once is asked nothing more, so
    # eight hung probes cannot add up past host-health's own deadline.
    wedged: str = ""

    def call(self, name: str, *args: Any) -> Any:
        if self.wedged:
            raise ProbeTimeout(self.wedged)
        fn = getattr(self.lib, name)
        try:
            return with_timeout(lambda: fn(*args))
        except ProbeTimeout as exc:
            self.wedged = f"{name}: {exc}"
            raise
        except Exception as exc:
            if getattr(exc, "value", None) == NOT_SUPPORTED:
                raise Unsupported(name) from None
            raise

    def each(self, name: str, *args: Any) -> list[Any]:
        """One answer per GPU; raises on the first GPU that does not answer."""
        return [self.call(name, h, *args) for h in self.handles]


def open_nvml() -> tuple[Nvml | None, str, str]:
    """(the library with one handle per GPU, ``nvmlStatus``, why when unavailable)."""
    try:
        lib = importlib.import_module("pynvml")
    except ImportError:
        return None, "absent", "nvidia-ml-py is not installed (pip install nvidia-ml-py)"
    nvml = Nvml(lib)
    try:
        nvml.call("nvmlInit")
        count = int(nvml.call("nvmlDeviceGetCount"))
        nvml.handles = [nvml.call("nvmlDeviceGetHandleByIndex", i) for i in range(count)]
    except Exception as exc:
        return None, "unavailable", f"NVML did not start: {exc}"
    if not nvml.handles:
        return None, "no-devices", "NVML sees no GPU"
    return nvml, "ok", ""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass
class NvmlReading:
    """What host-health prints from NVML; None fields are omitted, ``na`` names are n/a."""

    values: dict[str, str | int | float] = field(default_factory=dict)
    na: list[str] = field(default_factory=list)
    gated: dict[str, int] = field(default_factory=dict)


def _ecc(nvml: Nvml, out: NvmlReading) -> None:
    modes = []
    for h in nvml.handles:
        try:
            current, _pending = nvml.call("nvmlDeviceGetEccMode", h)
            modes.append("enabled" if current else "disabled")
        except Unsupported:
            modes.append("unsupported")
        except Exception:
            return  # unreadable: omitted
    distinct = set(modes)
    if distinct == {"unsupported"}:
        out.values["eccMode"] = "unsupported"
        out.na.append("ecc_errors")
        return
    if len(distinct) > 1:
        out.values["eccMode"] = "mixed"
        return
    out.values["eccMode"] = modes[0]
    if modes[0] != "enabled":
        return
    try:
        dbe = sum(nvml.each("nvmlDeviceGetTotalEccErrors", MEMORY_ERROR_UNCORRECTED, AGGREGATE_ECC))
        sbe = sum(nvml.each("nvmlDeviceGetTotalEccErrors", MEMORY_ERROR_CORRECTED, AGGREGATE_ECC))
    except Exception:
        return
    out.values.update({"ecc_errors": dbe, "eccDbeTotal": dbe, "eccSbeTotal": sbe})
    out.gated["ecc_errors"] = dbe


def _rows(nvml: Nvml, out: NvmlReading) -> None:
    answers: list[int | None] = []
    for h in nvml.handles:
        try:
            corr, unc, _pending, _failure = nvml.call("nvmlDeviceGetRemappedRows", h)
            answers.append(int(corr) + int(unc))
        except Unsupported:
            answers.append(None)
        except Exception:
            return
    if all(a is None for a in answers):
        out.na.append("rows_remapped")
    elif all(a is not None for a in answers):
        rows = sum(a for a in answers if a is not None)
        out.values["rows_remapped"] = rows
        out.gated["rows_remapped"] = rows


def _retired_pages(nvml: Nvml, out: NvmlReading) -> None:
    """Pages retired for repeated single-bit and for double-bit errors (pre-Ampere parts;
    a part with a row remapper answers NOT_SUPPORTED, which is n/a)."""
    answers: list[int | None] = []
    for h in nvml.handles:
        try:
            answers.append(sum(len(nvml.call("nvmlDeviceGetRetiredPages", h, c)) for c in (0, 1)))
        except Unsupported:
            answers.append(None)
        except Exception:
            return
    if all(a is None for a in answers):
        out.na.append("retiredPagesTotal")
    elif all(a is not None for a in answers):
        out.values["retiredPagesTotal"] = sum(a for a in answers if a is not None)


def read_static(nvml: Nvml) -> NvmlReading:
    out = NvmlReading()
    out.values["devicesVisible"] = len(nvml.handles)
    for key, name, args in (
        ("driverVersion", "nvmlSystemGetDriverVersion", ()),
        ("gpuName", "nvmlDeviceGetName", (nvml.handles[0],)),
    ):
        with contextlib.suppress(Exception):
            out.values[key] = _text(nvml.call(name, *args))
    _ecc(nvml, out)
    _rows(nvml, out)
    _retired_pages(nvml, out)
    try:
        temps = nvml.each("nvmlDeviceGetTemperature", TEMPERATURE_GPU)
        out.values["gpu_temp_c"] = float(max(temps))
    except Exception:
        pass
    with contextlib.suppress(Exception):
        out.values["power_draw_w"] = sum(nvml.each("nvmlDeviceGetPowerUsage")) / 1000.0
    return out


def replay_counters(nvml: Nvml) -> list[int] | None:
    try:
        return [int(v) for v in nvml.each("nvmlDeviceGetPcieReplayCounter")]
    except Exception:
        return None
