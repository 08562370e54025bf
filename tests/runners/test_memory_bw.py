"""memory-bw run for real: every copy path between cpu tensors in test mode (the same copy,
timer and verification code as on a GPU), the minimum cell reported, §9.6's exit rules and its
fallback to defaults for malformed configuration, and an injected corruption found."""

from __future__ import annotations

import io

import pytest
from real_runner import Ran, assert_contract, finish, run_runner, runner_env

from glimmer.runners import memory_bw, program
from glimmer.runners.deadline import Deadline

TEST_MODE = {"BURNIN_TEST_DEVICE": "cpu", "BURNIN_MEMORY_BW_BUFFER_MIB": "2"}


def copies(**env: str) -> Ran:
    out = io.StringIO()
    code = program.run("memory-bw", memory_bw.measure, runner_env({**TEST_MODE, **env}), out)
    ran = finish("memory-bw", out.getvalue(), "", code)
    assert_contract(ran)
    return ran


def test_every_copy_path_of_two_devices_is_measured_and_the_minimum_cell_reported() -> None:
    ran = run_runner("memory-bw", {**TEST_MODE, "BURNIN_TEST_DEVICE_COUNT": "2"})
    assert_contract(ran)
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    m = ran.parsed.metrics
    for path in ("hostToDevice", "deviceToHost", "deviceToDevice", "peerWrite"):
        low, high = float(m[f"{path}BandwidthGBs"]), float(m[f"{path}BandwidthMaxGBs"])
        assert 0 < low <= high, path
    cells = [ln for ln in ran.stdout.splitlines() if ln.startswith("cell device")]
    assert len(cells) == 6  # three paths × two devices, each printed as evidence
    assert m["devicesVisible"] == "2" and "deviceCount" not in m  # never claimed
    assert m["transferSizeBytes"] == str(2 * 1024 * 1024) and m["testSamples"] == "3"
    assert "peerReadBandwidthGBs" not in m and "peerReadBandwidthGBs" not in ran.parsed.unmeasurable
    assert ran.marker == "MEMORY_BW_PASS"


def test_one_device_has_no_peer_figures() -> None:
    ran = copies()
    assert ran.exit_code == 0, ran.stdout
    assert {"peerReadBandwidthGBs", "peerWriteBandwidthGBs",
            "hostToDeviceBandwidthSpreadPct"} <= ran.parsed.unmeasurable  # fmt: skip


def test_without_a_gpu_and_without_test_mode_it_skips() -> None:
    ran = run_runner("memory-bw", {})
    assert_contract(ran)
    assert ran.exit_code == 2
    assert ran.marker.startswith("MEMORY_BW_SKIP: no CUDA device")


@pytest.mark.parametrize(
    ("name", "raw", "metric", "default"),
    [
        ("BURNIN_MEMORY_BW_SAMPLES", "three", "testSamples", "3"),
        ("BURNIN_MEMORY_BW_SAMPLES", "0", "testSamples", "3"),
        ("BURNIN_MEMORY_BW_DISABLE_AFFINITY", "yes", "testSamples", "3"),
    ],
)
def test_malformed_configuration_falls_back_to_the_default(
    name: str, raw: str, metric: str, default: str
) -> None:
    ran = copies(**{name: raw})
    assert ran.exit_code == 0, ran.stdout
    assert ran.parsed.metrics[metric] == default
    assert f"{name}={raw!r} is not a whole number" in ran.stdout


def test_a_malformed_duration_or_buffer_is_no_error_here() -> None:
    assert copies(BURNIN_DURATION_SECONDS="10m").exit_code == 0
    assert (
        memory_bw.tolerant(
            memory_bw.Settings({"BURNIN_MEMORY_BW_BUFFER_MIB": "-4"}),
            "BURNIN_MEMORY_BW_BUFFER_MIB",
            memory_bw.Report("MEMORY_BW", io.StringIO()),
        )
        == 512
    )


def test_an_injected_corruption_is_found_and_fails() -> None:
    ran = copies(BURNIN_MEMORY_BW_INJECT_CORRUPTION="1")
    assert ran.exit_code == 1
    assert ran.marker == (
        "MEMORY_BW_FAIL: copy arrived corrupted: device 0 device-local copy: 1 of "
        f"{2 * 1024 * 1024 // 4} elements"
    )
    assert "deviceToDeviceBandwidthGBs" in ran.parsed.metrics  # the figures still printed


def test_an_exceeded_budget_is_an_error_with_what_was_measured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(memory_bw, "Deadline", lambda seconds: Deadline(0))
    ran = copies()
    assert ran.exit_code == 3
    assert ran.marker.startswith("MEMORY_BW_ERROR: budget of 600 s exceeded before device 0")
    assert "elapsedS" in ran.parsed.metrics


def test_a_zero_budget_disables_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_bw, "Deadline", lambda seconds: Deadline(0))
    assert copies(BURNIN_DURATION_SECONDS="0").exit_code == 0


def test_a_device_budget_that_disagrees_is_refused() -> None:
    ran = copies(BURNIN_RESOURCE_LIMITS="nvidia.com/gpu=2")
    assert ran.exit_code == 3
    assert "BURNIN_RESOURCE_LIMITS" in ran.marker
