"""The fault-mode table: shared contracts in spec order, and every detector is a real metric."""

from __future__ import annotations

import pytest

from glimmer.contract.kinds import BUILT_IN
from glimmer.contract.registry import REGISTRY
from glimmer.sim.modes import MODES, SHARED_MODES, Axis, axis_of

SHARED_IN_SPEC_ORDER = [
    "gpu_xid_burst", "gpu_fallen_off_bus", "gpu_node_drain", "gpu_operand_unavailable",
    "gpu_preemption_storm", "gpu_quota_exhaustion", "gpu_backend_congestion",
    "gpu_storage_latency", "gpu_cooling_fault", "gpu_leak_detected", "gpu_nvlink_degraded",
    "gpu_nvswitch_tray_failure", "gpu_nvlink_error_burst",
]  # fmt: skip

READINESS = [
    "gpu_low_pstate", "gpu_silent_data_corruption", "gpu_ecc_correctable",
    "gpu_ecc_uncorrectable", "gpu_row_remap", "gpu_pcie_downtrained", "nic_link_down",
    "nic_link_flapping", "nic_degraded", "rdma_memlock_limit", "gpu_thermal_paste_degraded",
]  # fmt: skip


def test_the_13_shared_modes_come_first_in_spec_order() -> None:
    assert [m.name for m in SHARED_MODES] == SHARED_IN_SPEC_ORDER
    assert [m.name for m in MODES[:13]] == SHARED_IN_SPEC_ORDER


def test_every_readiness_mode_is_modelled() -> None:
    names = {m.name for m in MODES}
    assert set(READINESS) <= names
    # Xid 79, CRC bursts, congestion and cooling are covered by shared modes.
    assert {"gpu_fallen_off_bus", "gpu_nvlink_error_burst", "gpu_backend_congestion",
            "gpu_cooling_fault"} <= names  # fmt: skip


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_every_mode_has_a_detector_or_says_why_not(mode: object) -> None:
    from glimmer.sim.modes import FaultMode

    assert isinstance(mode, FaultMode)
    assert mode.targets
    if mode.detectors:
        assert not mode.scope_note
    else:
        assert mode.scope_note


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_detectors_name_built_in_kinds_and_their_metrics(mode: object) -> None:
    from glimmer.sim.modes import FaultMode

    assert isinstance(mode, FaultMode)
    for d in mode.detectors:
        assert d.kind in BUILT_IN, d
        if d.metric is None:
            assert d.note, "an outcome-only detector must say which outcome"
            continue
        spec = BUILT_IN[d.kind]
        assert d.metric in REGISTRY or d.metric in spec.aliases.values(), d


def test_axis_is_read_from_the_key_prefix() -> None:
    assert axis_of("gpu:hgx-node-0001/3") is Axis.GPU
    assert axis_of("gpuworkload:s/w") is Axis.WORKLOAD
    assert axis_of("nvport:site/rack/dom/0/0/5") is Axis.NVPORT
    assert axis_of("bogus:x") is None
    assert axis_of("no-colon") is None
