"""The NVML interface: the trace-replaying fake states all three of §9's states, replays in
order and holds its last sample; the real one over pynvml turns NOT_SUPPORTED into a recorded
refusal and is chosen whenever no trace is named."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest
from real_runner import FIXTURES

from glimmer.runners import nvml
from glimmer.runners.nvml import (
    PROTECTIVE,
    EccCounts,
    Opened,
    find_device,
    normal_bus_id,
    open_session,
    reason_names,
)
from glimmer.runners.settings import Settings

TRACES = FIXTURES / "nvml"


def opened(name: str) -> Opened:
    return open_session(Settings({nvml.TRACE: str(TRACES / f"{name}.json")}))


def test_a_trace_replays_its_samples_in_order_and_holds_the_last() -> None:
    session = opened("thermal_latch").session
    assert session is not None
    dev = session.devices[0]
    clocks = [dev.sample().sm_clock_mhz for _ in range(7)]
    assert clocks == [1980, 1980, 900, 885, 880, 880, 880]
    assert session.driver_version == "550.54.15"


def test_a_trace_field_marked_unsupported_is_none_and_recorded_as_refused() -> None:
    session = opened("no_rated_clock").session
    assert session is not None
    dev = session.devices[0]
    assert dev.identity().rated_sm_clock_mhz is None
    assert dev.unsupported == {"ratedSmClockMHz"}


def test_ecc_answers_the_counters_of_the_sample_last_taken() -> None:
    session = opened("ecc_delta").session
    assert session is not None
    dev = session.devices[0]
    dev.sample()
    assert dev.ecc() == EccCounts(4, 0)
    dev.sample()
    dev.sample()
    assert dev.ecc() == EccCounts(6, 2)


def test_unsupported_ecc_is_refused_not_zero() -> None:
    session = opened("ecc_unsupported").session
    assert session is not None
    dev = session.devices[0]
    assert dev.identity().ecc_mode == "unsupported"
    assert dev.ecc() is None
    assert {"eccErrors", "eccMode"} <= dev.unsupported


def test_a_trace_that_fails_to_start_reads_as_nvml_unavailable() -> None:
    got = opened("init_error")
    assert (got.session, got.status) == (None, "unavailable")
    assert "version mismatch" in got.why


def test_an_unreadable_trace_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text("[1, 2]")
    got = open_session(Settings({nvml.TRACE: str(tmp_path / "t.json")}))
    assert got.status == "unavailable"
    got = open_session(Settings({nvml.TRACE: str(tmp_path / "missing.json")}))
    assert got.status == "unavailable"


def test_devices_are_matched_by_pci_address_in_either_spelling() -> None:
    session = opened("two_devices").session
    assert session is not None
    found = find_device(session, "0000:2a:00.0", 0)
    assert found is not None and found.index == 1
    assert find_device(session, "0000:99:00.0", 0) is None
    fallback = find_device(session, None, 1)
    assert fallback is not None and fallback.index == 1
    assert normal_bus_id("00000000:19:00.0") == normal_bus_id("0000:19:00.0") == "0000:19:00.0"


def test_reason_names_and_the_protective_set() -> None:
    assert reason_names(0x40 | 0x4) == ["swPowerCap", "hwThermalSlowdown"]
    assert not PROTECTIVE & 0x4  # swPowerCap caps, it does not protect


def test_without_a_trace_the_real_nvml_is_asked_and_absent_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails as if not installed
    got = open_session(Settings({}))
    assert (got.session, got.status) == (None, "absent")
    assert "nvidia-ml-py" in got.why


class _NvmlError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


def _stand_in_pynvml(count: int = 1) -> types.ModuleType:
    """A pynvml whose answers are what a GB10 gives: no power limits, no ECC."""
    lib: Any = types.ModuleType("pynvml")

    def unsupported(*_: object) -> None:
        raise _NvmlError(nvml.NOT_SUPPORTED)

    lib.nvmlInit = lambda: None
    lib.nvmlShutdown = lambda: None
    lib.nvmlDeviceGetCount = lambda: count
    lib.nvmlDeviceGetHandleByIndex = lambda i: f"h{i}"
    lib.nvmlSystemGetDriverVersion = lambda: b"580.82.09"
    lib.nvmlDeviceGetName = lambda h: b"NVIDIA GB10"
    lib.nvmlDeviceGetPciInfo = lambda h: types.SimpleNamespace(busId=b"0000000F:01:00.0")
    lib.nvmlDeviceGetCudaComputeCapability = lambda h: (12, 1)
    lib.nvmlDeviceGetMigMode = unsupported
    lib.nvmlDeviceGetMaxClockInfo = lambda h, kind: 3003 if kind == nvml.CLOCK_SM else 0
    lib.nvmlDeviceGetEnforcedPowerLimit = unsupported
    lib.nvmlDeviceGetPowerManagementDefaultLimit = unsupported
    lib.nvmlDeviceGetEccMode = unsupported
    lib.nvmlDeviceGetClockInfo = lambda h, kind: 2080 if kind == nvml.CLOCK_SM else 4266
    lib.nvmlDeviceGetPerformanceState = lambda h: 0
    lib.nvmlDeviceGetTemperature = lambda h, sensor: 72
    lib.nvmlDeviceGetPowerUsage = lambda h: 88000
    lib.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(gpu=99, memory=20)
    lib.nvmlDeviceGetCurrentClocksThrottleReasons = lambda h: 0
    lib.nvmlDeviceGetTotalEccErrors = unsupported
    return lib  # type: ignore[no-any-return]


def test_the_real_session_turns_not_supported_into_refusals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _stand_in_pynvml())
    got = open_session(Settings({}))
    assert got.status == "ok" and got.session is not None
    dev = got.session.devices[0]
    ident = dev.identity()
    assert (ident.name, ident.compute_cap) == ("NVIDIA GB10", "12.1")
    assert ident.rated_sm_clock_mhz == 3003
    assert ident.max_mem_clock_mhz is None  # 0 MHz is no clock
    assert ident.ecc_mode == "unsupported" and ident.enforced_power_limit_w is None
    sample = dev.sample()
    assert (sample.sm_clock_mhz, sample.power_w, sample.throttle_reasons) == (2080, 88.0, 0)
    assert dev.ecc() is None
    assert {"migMode", "eccMode", "enforcedPowerLimitW", "eccErrors"} <= dev.unsupported
    assert got.session.driver_version == "580.82.09"
    got.session.close()


def test_the_real_session_with_no_gpu_says_no_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _stand_in_pynvml(count=0))
    assert open_session(Settings({})).status == "no-devices"


def test_a_rated_clock_of_zero_mhz_is_no_rated_clock(tmp_path: Path) -> None:
    trace = tmp_path / "zero.json"
    trace.write_text('{"devices": [{"ratedSmClockMHz": 0, "samples": [{}]}]}')
    session = open_session(Settings({nvml.TRACE: str(trace)})).session
    assert session is not None
    dev = session.devices[0]
    assert dev.identity().rated_sm_clock_mhz is None and "ratedSmClockMHz" in dev.unsupported
