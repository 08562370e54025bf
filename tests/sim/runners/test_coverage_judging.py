"""How the fault-coverage sweep counts a detection (issue 10 item 14): only a gate that failed
the unit, or the runner's own verdict for an outcome detector, and the summary names it."""

from __future__ import annotations

from functools import cache

import pytest

from glimmer.sim.modes import MODES
from tools.coverage.harness import builtins
from tools.coverage.sweep import ModeResult, Status, cover, problems


@cache
def _covered(mode: str) -> ModeResult:
    return cover(mode)  # the runner-level method: the same judging as the engine's record


def _status(mode: str, kind: str, metric: str) -> Status:
    found = [
        d.status
        for d in _covered(mode).detectors
        if d.detector.kind == kind and d.detector.metric == metric
    ]
    assert found, f"{mode} has no {kind}/{metric} detector"
    return found[0]


@pytest.mark.parametrize(
    ("mode", "kind", "metric"),
    [
        ("gpu_row_remap", "dcgm-diag", "remappedRows"),
        ("gpu_cooling_fault", "thermal-soak", "gpuTempC"),
        ("gpu_thermal_paste_degraded", "thermal-soak", "gpuTempC"),
        ("gpu_low_pstate", "clockprobe", "sustainedFmaThroughputTflops"),
    ],
)
def test_a_metric_no_gate_judges_is_not_a_detection_when_the_runner_failed_the_unit(
    mode: str, kind: str, metric: str
) -> None:
    # These four moved while the runner failed the unit for another reason; they used to be
    # counted as detections although no built-in gate judges them.
    assert _status(mode, kind, metric) is Status.NOT_GATED


@pytest.mark.parametrize("mode", [m.name for m in MODES])
def test_every_metric_detection_names_a_gate_of_the_test_that_failed(mode: str) -> None:
    result = _covered(mode)
    assert problems(result) == []
    for d in result.detected_by:
        test = d.failed_by.split(" ", 1)[0]
        assert test in builtins().tests, d.failed_by
        if d.detector.metric is not None:
            gates = {t.metric for t in builtins().tests[test].thresholds or []}
            assert d.detector.metric in gates, d.failed_by
            assert f"`{d.detector.metric} " in d.failed_by


def test_the_summary_names_the_gate_or_the_runner_verdict_that_failed_the_unit() -> None:
    pcie = {d.failed_by for d in _covered("gpu_pcie_downtrained").detected_by}
    assert "memory-bandwidth `hostToDeviceBandwidthGBs GreaterThanOrEqual 48`" in pcie
    assert "host-fault-counters runner Fail + `pcieReplayErrors Equal 0`" in pcie
    memlock = {d.failed_by for d in _covered("rdma_memlock_limit").detected_by}
    assert "rdma-write-bandwidth runner Error (exit 3)" in memlock
