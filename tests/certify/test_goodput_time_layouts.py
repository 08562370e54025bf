"""``timestamp.layout`` (specs/certify.md §2.8): captured times read by the profile's Go layout,
not only ISO-like ones; a layout that cannot be read is refused naming the field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

import glimmer.api.certify.kinds  # noqa: F401  (registers LogProfile with the loader)
from glimmer.api.certify.logprofile import LogProfile
from glimmer.api.load import load_text
from glimmer.certify.measure.goodput import (
    EventPattern,
    TrainingProfile,
    parse_training,
    training_profile,
)
from glimmer.certify.measure.goodput_layout import go_time
from glimmer.certify.measure.goodput_reader import TrainingLogReader
from glimmer.errors import InputError


@pytest.mark.parametrize(
    ("text", "layout", "expected"),
    [
        (
            "2026-01-05 10:00:01.123456",
            "2006-01-02 15:04:05.999999",
            datetime(2026, 1, 5, 10, 0, 1, 123456, tzinfo=UTC),
        ),
        (
            "2026-03-14T09:26:53.123456789Z",  # nanoseconds, cut to µs
            "2006-01-02T15:04:05.999999999Z",
            datetime(2026, 3, 14, 9, 26, 53, 123456, tzinfo=UTC),
        ),
        (
            "01/05/2026 03:04:05 PM",
            "01/02/2006 03:04:05 PM",
            datetime(2026, 1, 5, 15, 4, 5, tzinfo=UTC),
        ),
        (
            "5 January 2026 10:00:01,250 -0700",
            "2 January 2006 15:04:05,000 -0700",
            datetime(2026, 1, 5, 10, 0, 1, 250000, tzinfo=timezone(-timedelta(hours=7))),
        ),
        (
            "2026-01-05T10:00:01.5+05:30",  # a fraction the layout does not write: read anyway
            "2006-01-02T15:04:05Z07:00",
            datetime(2026, 1, 5, 10, 0, 1, 500000, tzinfo=timezone(timedelta(hours=5.5))),
        ),
    ],
    ids=["megatron", "kubelet-ns", "us-12h", "long-month-comma", "offset"],
)
def test_a_go_layout_reads_the_time_it_describes(
    text: str, layout: str, expected: datetime
) -> None:
    assert go_time(text, layout) == expected


@pytest.mark.parametrize(
    ("text", "layout"), [("yesterday", "2006-01-02"), ("13/45/2026", "01/02/2006")]
)
def test_a_time_that_does_not_fit_its_layout_is_not_read(text: str, layout: str) -> None:
    assert go_time(text, layout) is None


def test_a_profile_layout_times_the_captured_timestamps() -> None:
    profile = TrainingProfile(
        {
            "applicationStart": EventPattern(r"^(?P<timestamp>\S+ \S+ [AP]M) start"),
            "trainingStep": EventPattern(r"^(?P<timestamp>\S+ \S+ [AP]M) step (?P<step>\d+)"),
        },
        layout="01/02/2006 03:04:05 PM",
    )
    g = parse_training("01/05/2026 11:59:58 AM start\n01/05/2026 12:00:03 PM step 1\n", profile)
    assert g is not None and g.highest_step == 1
    reader = TrainingLogReader(profile)
    reader.feed("01/05/2026 11:59:58 AM start\n01/05/2026 12:00:03 PM step 1\n")
    (step,) = reader.recent_steps
    assert step.at == datetime(2026, 1, 5, 12, 0, 3, tzinfo=UTC).timestamp()


def test_a_loaded_profile_carries_its_layout() -> None:
    (item,) = load_text(
        "apiVersion: certify.glimmer.ai/v1alpha1\nkind: LogProfile\nmetadata: {name: x}\n"
        "spec:\n  timestamp: {layout: '02.01.2006 15:04:05'}\n  patterns:\n"
        "    trainingStep: {regex: 'step'}\n",
        "lp.yaml",
    )
    assert isinstance(item.obj, LogProfile)
    assert training_profile(item.obj).layout == "02.01.2006 15:04:05"


def test_a_layout_naming_a_part_twice_is_refused_naming_the_field() -> None:
    profile = TrainingProfile({"trainingStep": EventPattern("step")}, layout="2006 2006")
    with pytest.raises(InputError, match=r"layout '2006 2006' cannot be read") as info:
        parse_training("", profile)
    assert "spec.timestamp.layout" in str(info.value)
