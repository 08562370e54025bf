"""The fake NVML: a JSON trace of sampled readings, replayed in order (test mode only, named by
``BURNIN_TEST_NVML_TRACE``). Each ``sample()`` returns the device's next recorded sample and
the last one holds once the trace runs out, so a short trace describes a steady state and a long
one a story: a P-state pinned low, a thermal slowdown that latches, ECC counters that move or go
backwards, MIG on, no rated clock.

A trace::

    {"driverVersion": "550.54.15",
     "initError": "...",                 # optional: NVML fails to start
     "devices": [{"name": "NVIDIA H200", "pciBusId": "00000000:19:00.0", "computeCap": "9.0",
                  "migMode": false, "ratedSmClockMHz": 1980, "maxMemClockMHz": 3201,
                  "enforcedPowerLimitW": 700, "defaultPowerLimitW": 700, "eccMode": "enabled",
                  "samples": [{"smClockMHz": 1980, "memClockMHz": 3201, "pstate": 0,
                               "tempC": 60, "powerW": 550, "throttleReasons": 0,
                               "gpuUtilPct": 100, "memUtilPct": 40,
                               "eccCorrected": 0, "eccUncorrected": 0}]}]}

Any field may be ``"unsupported"`` (NVML's NOT_SUPPORTED: the read's name is recorded in
``unsupported``) or ``null``/absent (the read failed: ``None``), so a trace states all three of
§9's states. ``ecc()`` answers the counters of the sample last returned.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from glimmer.runners.nvml import Device, EccCounts, Identity, Opened, Sample

UNSUPPORTED = "unsupported"


class TraceDevice:
    def __init__(self, index: int, spec: dict[str, Any]) -> None:
        self.index = index
        self.unsupported: set[str] = set()
        self._spec = spec
        samples = spec.get("samples") or [{}]
        self._samples: list[dict[str, Any]] = [dict(s) for s in samples]
        self._next = 0
        self._current = self._samples[0]

    def _get(self, source: dict[str, Any], key: str) -> Any:
        value = source.get(key)
        if value == UNSUPPORTED:
            self.unsupported.add(key)
            return None
        return value

    def _number(self, source: dict[str, Any], key: str) -> float | None:
        value = self._get(source, key)
        return float(value) if isinstance(value, int | float) else None

    def _whole(self, source: dict[str, Any], key: str) -> int | None:
        value = self._number(source, key)
        return int(value) if value is not None else None

    def identity(self) -> Identity:
        s = self._spec
        name, bus, cc, mig = (
            self._get(s, key) for key in ("name", "pciBusId", "computeCap", "migMode")
        )
        if s.get("ratedSmClockMHz") == 0:  # as NVML: a 0 MHz answer is no rated clock
            self.unsupported.add("ratedSmClockMHz")
        ecc_mode = s.get("eccMode")
        if ecc_mode == UNSUPPORTED:
            self.unsupported.add("eccMode")
        return Identity(
            name=str(name) if name is not None else None,
            pci_bus_id=str(bus) if bus is not None else None,
            compute_cap=str(cc) if cc is not None else None,
            mig_enabled=bool(mig) if mig is not None else None,
            rated_sm_clock_mhz=self._whole(s, "ratedSmClockMHz") or None,
            max_mem_clock_mhz=self._whole(s, "maxMemClockMHz") or None,
            enforced_power_limit_w=self._number(s, "enforcedPowerLimitW"),
            default_power_limit_w=self._number(s, "defaultPowerLimitW"),
            ecc_mode=str(ecc_mode) if ecc_mode is not None else None,
        )

    def sample(self) -> Sample:
        self._current = self._samples[min(self._next, len(self._samples) - 1)]
        self._next += 1
        c = self._current
        pstate = self._whole(c, "pstate")
        return Sample(
            sm_clock_mhz=self._whole(c, "smClockMHz"),
            mem_clock_mhz=self._whole(c, "memClockMHz"),
            pstate=pstate,
            temp_c=self._number(c, "tempC"),
            power_w=self._number(c, "powerW"),
            throttle_reasons=self._whole(c, "throttleReasons"),
            gpu_util_pct=self._number(c, "gpuUtilPct"),
            mem_util_pct=self._number(c, "memUtilPct"),
        )

    def ecc(self) -> EccCounts | None:
        c = self._current
        if UNSUPPORTED in (c.get("eccCorrected"), c.get("eccUncorrected")):
            self.unsupported.add("eccErrors")
            return None
        corrected, uncorrected = c.get("eccCorrected"), c.get("eccUncorrected")
        if not isinstance(corrected, int) or not isinstance(uncorrected, int):
            return None
        return EccCounts(corrected, uncorrected)


class TraceSession:
    def __init__(self, devices: list[Device], driver: str | None) -> None:
        self.devices = devices
        self.driver_version = driver

    def close(self) -> None:
        pass


def load_trace(path: str) -> dict[str, Any]:
    data = json.loads(Path(path).read_text())
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a trace is a JSON object")
    return data


def open_trace(path: str) -> Opened:
    """Open a trace file as an NVML session, with the statuses the real one can give."""
    try:
        data = load_trace(path)
    except (OSError, ValueError) as exc:
        return Opened(None, "unavailable", f"NVML trace {path} unreadable: {exc}")
    if data.get("initError"):
        return Opened(None, "unavailable", f"NVML did not start: {data['initError']}")
    specs = data.get("devices") or []
    if not specs:
        return Opened(None, "no-devices", "NVML sees no GPU")
    devices: list[Device] = [TraceDevice(i, dict(spec)) for i, spec in enumerate(specs)]
    driver = data.get("driverVersion")
    return Opened(TraceSession(devices, str(driver) if driver else None), "ok")
