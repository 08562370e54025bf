"""The running figures over NVML samples: idle is never throttle, an event is a transition into
a state (not a sample in it), the classification names the reason that held longest, and the
sampler counts only while its kind says the load is busy."""

from __future__ import annotations

import pytest
from real_runner import FIXTURES

from glimmer.runners import nvml
from glimmer.runners.nvml import Sample, open_session
from glimmer.runners.nvml_sampler import Sampler, Stats, time_scale
from glimmer.runners.outcome import ConfigError
from glimmer.runners.settings import Settings


def stats_of(*masks: int | None, clocks: tuple[int, ...] = ()) -> Stats:
    st = Stats()
    for i, mask in enumerate(masks):
        clock = clocks[i] if i < len(clocks) else 1980
        st.add(Sample(sm_clock_mhz=clock, temp_c=60.0 + i, throttle_reasons=mask, pstate=0))
    return st


def test_idle_is_counted_as_evidence_but_never_as_throttle() -> None:
    st = stats_of(0x1, 0x1, 0x1)
    assert st.per_reason["gpuIdle"] == 3 and st.reasons_mask == 0x1
    assert st.throttled_samples == 0 and st.capping_events == 0
    assert st.reasons_text() == "none" and st.classification() == "none"


def test_an_event_is_a_transition_into_a_state_not_a_sample_in_it() -> None:
    st = stats_of(0, 0x40, 0x40, 0x40, 0, 0x40)
    assert st.throttled_samples == 4
    assert st.protective_events == 2 and st.capping_events == 2 and st.power_cap_events == 0


def test_a_power_cap_caps_but_does_not_protect() -> None:
    st = stats_of(0x4, 0x4)
    assert st.capping_events == 1 and st.power_cap_events == 1 and st.protective_events == 0
    assert st.classification() == "powerCap"


def test_the_classification_follows_the_reason_latched_longest() -> None:
    assert stats_of(0x4, 0x20, 0x20).classification() == "thermal"
    assert stats_of(0x2, 0x2).classification() == "applicationClocks"
    assert stats_of(0x8).classification() == "unknown"  # hwSlowdown names no cause
    assert stats_of(None, None).classification() == "unknown"  # nothing readable


def test_the_slowest_sample_keeps_its_temperature() -> None:
    st = stats_of(0, 0, 0, clocks=(1980, 900, 1500))
    assert st.sm.low == 900 and st.temp_at_min_clock == 61.0
    assert st.pstate_text() == "P0 in 100 % of samples"


def test_the_sampler_counts_only_while_counting_is_set() -> None:
    opened = open_session(Settings({nvml.TRACE: str(FIXTURES / "nvml" / "healthy.json")}))
    assert opened.session is not None
    sampler = Sampler(opened.session.devices[0], 0.001)
    with sampler:
        sampler.sample_now()
    assert sampler.snapshot().samples == 1  # counting was never set: the thread took none


def test_the_time_scale_is_test_only() -> None:
    assert time_scale(Settings({})) == 1.0
    both = {"BURNIN_TEST_DEVICE": "cpu", "BURNIN_TEST_TIME_SCALE": "0.25"}
    assert time_scale(Settings(both)) == 0.25
    with pytest.raises(ConfigError):
        time_scale(Settings({"BURNIN_TEST_TIME_SCALE": "0.25"}))
    with pytest.raises(ConfigError):
        time_scale(Settings({**both, "BURNIN_TEST_TIME_SCALE": "2"}))
