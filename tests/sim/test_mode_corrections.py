"""The coverage sweep's corrections are data on the mode table, with their reasons: a refuted
detector is not also listed, a found one says why it sees the fault, and the tooling only reads
them."""

from __future__ import annotations

import pytest

from glimmer.sim.modes import MODES, FaultMode
from tools.coverage.detectors import ADDED, OUTSIDE_BUILTINS, REMOVED, detectors


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_a_refuted_detector_is_not_also_a_detector_and_says_why(mode: FaultMode) -> None:
    listed = {(d.kind, d.metric) for d in mode.detectors}
    for r in mode.refuted:
        assert r.why, r
        assert (r.detector.kind, r.detector.metric) not in listed, r


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_a_mode_outside_the_built_ins_still_has_detectors(mode: FaultMode) -> None:
    """outside_builtins explains why the built-ins miss a detectable mode; a mode nothing
    detects says so in its scope note instead."""
    if mode.outside_builtins:
        assert mode.detectors and not mode.scope_note


def test_the_sweep_reads_the_corrections_from_the_modes() -> None:
    found = [(m.name, d.kind, d.metric, d.why) for m in MODES for d in m.detectors if d.why]
    assert [(e.mode, e.detector.kind, e.detector.metric, e.reason) for e in ADDED] == found
    refuted = [
        (m.name, r.detector.kind, r.detector.metric, r.why) for m in MODES for r in m.refuted
    ]
    assert [(e.mode, e.detector.kind, e.detector.metric, e.reason) for e in REMOVED] == refuted
    assert {m.name: m.outside_builtins for m in MODES if m.outside_builtins} == OUTSIDE_BUILTINS
    for m in MODES:
        assert [(d.kind, d.metric, d.scope) for d in detectors(m)] == [
            (d.kind, d.metric, d.scope) for d in m.detectors
        ]


def test_the_known_corrections_are_on_their_modes() -> None:
    by_name = {m.name: m for m in MODES}
    paste = by_name["gpu_thermal_paste_degraded"]
    assert ("thermal-soak", "meanTempUnderLoadC") in {
        (r.detector.kind, r.detector.metric) for r in paste.refuted
    }
    nccl = [d for d in by_name["nic_link_down"].detectors if d.kind == "nccl"]
    assert [(d.metric, d.scope) for d in nccl] == [(None, "Pair")]
    assert nccl[0].why.startswith("Error:")
