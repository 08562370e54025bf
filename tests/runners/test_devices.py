"""The shared device module of the accelerator kinds: discovery (test mode on cpu), the
BURNIN_RESOURCE_LIMITS budget, iteration, and the fold of the §9 preamble."""

from __future__ import annotations

import io
import json

import pytest
import torch  # the test install has a CPU torch (Makefile); a missing one fails, never skips

from glimmer.contract.parse import parse
from glimmer.contract.vocab import RunnerVerdict
from glimmer.runners import devices as dv
from glimmer.runners.outcome import ConfigError, Stop, errored, failed, passed, skipped
from glimmer.runners.report import Report
from glimmer.runners.settings import Settings


def test_mode_shows_the_requested_number_of_cpu_devices() -> None:
    env = {dv.TEST_DEVICE: "cpu", dv.TEST_DEVICE_COUNT: "3", dv.TEST_COMPUTE_CAP: "12.1"}
    found = dv.discover(Settings(env), torch)
    assert found.test_mode
    assert [d.index for d in found.visible] == [0, 1, 2]
    assert {d.torch_device for d in found.visible} == {"cpu"}
    assert found.visible[0].cc_tuple == (12, 1)


def test_a_test_device_other_than_cpu_is_refused() -> None:
    with pytest.raises(ConfigError):
        dv.discover(Settings({dv.TEST_DEVICE: "cuda"}), torch)


def test_without_test_mode_a_host_without_cuda_shows_no_device() -> None:
    found = dv.discover(Settings({}), torch)
    assert not found.test_mode
    assert found.visible == ()  # the CPU build of torch sees no CUDA device
    assert dv.no_device_outcome(found).verdict is RunnerVerdict.SKIP


def test_missing_torch_is_a_skip_on_a_host_without_nvidia_devices() -> None:
    found = dv.discover(Settings({}), None)
    assert found.torch_missing
    assert dv.no_device_outcome(found).verdict is RunnerVerdict.SKIP


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        ("cpu=4,memory=8Gi,nvidia.com/gpu=2", 2),
        ("nvidia.com/mig-1g.10gb=1,nvidia.com/mig-2g.20gb=1", 2),
        ("amd.com/gpu=1", 1),
        ("cpu=2", 0),
    ],
)
def test_the_budget_sums_the_accelerator_counts(limits: str, expected: int) -> None:
    assert dv.budget(Settings({dv.RESOURCE_LIMITS: limits})) == expected


def test_an_absent_budget_means_every_visible_device() -> None:
    assert dv.budget(Settings({})) is None


@pytest.mark.parametrize(
    "limits", ["", "nvidia.com/gpu", "nvidia.com/gpu=two", "nvidia.com/fpga=1", "=1"]
)
def test_a_malformed_budget_is_a_config_error(limits: str) -> None:
    with pytest.raises(ConfigError):
        dv.budget(Settings({dv.RESOURCE_LIMITS: limits}))


def _found(n: int) -> dv.Discovery:
    return dv.discover(Settings({dv.TEST_DEVICE: "cpu", dv.TEST_DEVICE_COUNT: str(n)}), torch)


def test_a_budget_that_disagrees_with_the_visible_devices_is_refused() -> None:
    with pytest.raises(ConfigError, match="differs"):
        dv.allocate(Settings({dv.RESOURCE_LIMITS: "nvidia.com/gpu=1"}), _found(2))
    with pytest.raises(ConfigError, match="budget 0"):
        dv.allocate(Settings({dv.RESOURCE_LIMITS: "cpu=1"}), _found(1))
    assert len(dv.allocate(Settings({dv.RESOURCE_LIMITS: "nvidia.com/gpu=2"}), _found(2))) == 2


def test_concurrency_defaults_per_kind_and_refuses_other_words() -> None:
    assert dv.concurrency(Settings({}), dv.SEQUENTIAL) == dv.SEQUENTIAL
    assert dv.concurrency(Settings({dv.DEVICE_CONCURRENCY: "all"}), dv.SEQUENTIAL) == dv.ALL
    with pytest.raises(ConfigError):
        dv.concurrency(Settings({dv.DEVICE_CONCURRENCY: "parallel"}), dv.ALL)
    assert dv.device_window(60, 4, dv.SEQUENTIAL) == 15
    assert dv.device_window(60, 4, dv.ALL) == 60


def test_for_each_turns_a_stop_into_that_devices_outcome_in_both_modes() -> None:
    devices = _found(3).visible

    def measure(d: dv.Device) -> dv.DeviceResult:
        if d.index == 1:
            raise Stop(errored("launch failed"))
        r = dv.DeviceResult(d)
        r.put("achievedTflops", 10.0 + d.index)
        return r

    for mode in (dv.SEQUENTIAL, dv.ALL):
        results = dv.for_each(devices, mode, measure)
        assert [r.device.index for r in results] == [0, 1, 2]
        assert results[1].outcome.verdict is RunnerVerdict.ERROR


def test_for_each_raises_a_runner_bug_again() -> None:
    def measure(d: dv.Device) -> dv.DeviceResult:
        raise ValueError("bug")

    with pytest.raises(ValueError):
        dv.for_each(_found(2).visible, dv.ALL, measure)


def _result(d: dv.Device, tflops: float, nonfinite: int, outcome: object = None) -> dv.DeviceResult:
    r = dv.DeviceResult(d, outcome if outcome is not None else passed())  # type: ignore[arg-type]
    r.put("gemmPrecision", "bf16")
    r.put("achievedTflops", tflops, 3)
    r.put("maxRelativeError", 0.0, 6)
    r.put("nonfiniteCount", nonfinite, 0)
    r.put("elapsedS", 5.0 + d.index)
    return r


def _fold(results: list[dv.DeviceResult], visible: int) -> tuple[str, RunnerVerdict]:
    out = io.StringIO()
    report = Report("GEMM_SWEEP", out)
    how = dv.Fold(
        "achievedTflops",
        visible,
        10.0,
        dv.SEQUENTIAL,
        {"gemmThroughputSpreadPct": "achievedTflops"},
    )
    outcome = dv.fold(report, results, how)
    report.finish(outcome)
    return out.getvalue(), outcome.verdict


def test_the_fold_reports_the_worst_device_per_direction_and_says_how() -> None:
    devs = _found(3).visible
    text, verdict = _fold([_result(devs[0], 50.0, 0), _result(devs[1], 40.0, 2),
                           _result(devs[2], 45.0, 1)], 3)  # fmt: skip
    parsed = parse("gemm-sweep", text, 0)
    m = parsed.metrics
    assert verdict is RunnerVerdict.PASS
    assert m["achievedTflops"] == "40.000"  # a floor: Min
    assert m["nonfiniteCount"] == "3"  # a counter: Sum
    assert m["elapsedS"] == "5.00"  # wall clock: once
    assert m["gemmPrecision"] == "bf16"
    assert m["deviceCount"] == "3" and m["devicesVisible"] == "3"
    assert m["worstDeviceIndex"] == "1" and m["worstDevicePciBusId"] == "cpu:1"
    assert m["deviceHomogeneous"] == "true" and m["deviceConcurrency"] == "sequential"
    assert m["gemmThroughputSpreadPct"] == "20.00"
    (artifact,) = parsed.artifacts
    assert artifact.name == "per-device.json" and not artifact.dropped
    table = json.loads(artifact.payload)
    assert [row["index"] for row in table["devices"]] == [0, 1, 2]
    assert table["devices"][1]["metrics"]["achievedTflops"] == "40.000"


def test_the_spread_is_unmeasurable_on_one_device() -> None:
    text, _ = _fold([_result(_found(1).visible[0], 50.0, 0)], 1)
    assert "gemmThroughputSpreadPct" in parse("gemm-sweep", text, 0).unmeasurable


@pytest.mark.parametrize(
    ("outcomes", "verdict"),
    [
        ((passed(), skipped("s"), errored("e"), failed("f")), RunnerVerdict.FAIL),
        ((passed(), skipped("s"), errored("e"), passed()), RunnerVerdict.ERROR),
        ((passed(), skipped("s"), passed(), passed()), RunnerVerdict.SKIP),
        ((passed(), passed(), passed(), passed()), RunnerVerdict.PASS),
    ],
)
def test_across_devices_fail_beats_error_beats_skip_beats_pass(
    outcomes: tuple[object, ...], verdict: RunnerVerdict
) -> None:
    devs = _found(4).visible
    results = [_result(d, 10.0, 0, o) for d, o in zip(devs, outcomes, strict=True)]
    combined = dv.combined_outcome(results)
    assert combined.verdict is verdict
    if verdict is not RunnerVerdict.PASS:
        assert combined.reason.startswith("device ")
