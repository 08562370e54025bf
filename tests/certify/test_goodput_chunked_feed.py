"""The goodput reader is incremental (specs/certify.md §6: a controller reads a log in chunks as
it grows): a log fed in any chunks — cut mid-line, mid-timestamp, between ``\\r`` and ``\\n`` —
measures exactly what the whole log does, for one worker and for two merged."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.certify.measure.goodput import (
    LIFECYCLE,
    STEPS,
    EventPattern,
    TrainingLogReader,
    TrainingProfile,
    WorkerLogReader,
    parse_training,
)

PROFILE = TrainingProfile(
    {
        "applicationStart": EventPattern("START"),
        "trainingStep": EventPattern(
            r"step (?P<globalStep>\d+) took (?P<stepTiming>[\d.]+)", units={"stepTiming": "ms"}
        ),
        "checkpointSave": EventPattern(r"save (?P<globalStep>\d+) begins"),
        "checkpointDone": EventPattern(r"save (?P<globalStep>\d+) done"),
        "checkpointRestore": EventPattern(r"restoring from \S+"),
        "warmupStep": EventPattern("is warmup iteration"),
    },
    warmup_steps=1,
    log_interval=1,
)
_T0 = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)
_STAMPS = ("%Y-%m-%dT%H:%M:%SZ ", "%Y-%m-%dT%H:%M:%S.%fZ ", "%Y-%m-%dT%H:%M:%S.%f789Z ", "")
_EVENTS = ("start", "step", "step", "step", "warm", "save", "done", "restore", "noise")

_lines = st.lists(
    st.tuples(
        st.sampled_from(_EVENTS),
        st.integers(0, 3_000_000),  # µs since the previous line
        st.sampled_from(range(len(_STAMPS))),
        st.sampled_from(("\n", "\r\n", "\r", "\n")),  # "\r": the next segment shares the line
    ),
    max_size=40,
)


def _render(lines: list[tuple[str, int, int, str]]) -> list[str]:
    """Each line of the log, its line end included."""
    out, at, step = [], _T0, 0
    for event, gap, stamp, end in lines:
        at += timedelta(microseconds=gap)
        if event in ("step", "warm"):
            step += 1
        text = {
            "start": "START",
            "step": f"step {step} took {gap / 1000:.3f}",
            "warm": f"step {step} took {gap / 1000:.3f} is warmup iteration",
            "save": f"save {step} begins",
            "done": f"save {step} done",
            "restore": "restoring from /ckpt",
            "noise": "NCCL INFO Channel 00/32 : 0 1",
        }[event]
        out.append(at.strftime(_STAMPS[stamp]) + text + end)
    return out


def _chunks(text: str, cuts: list[int]) -> list[str]:
    points = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


@settings(max_examples=150, deadline=None)
@given(_lines, st.lists(st.integers(0, 10_000), max_size=12))
def test_a_log_fed_in_any_chunks_measures_what_the_whole_log_does(
    lines: list[tuple[str, int, int, str]], cuts: list[int]
) -> None:
    text = "".join(_render(lines))
    reader = TrainingLogReader(PROFILE, max_steps=8)
    for chunk in _chunks(text, cuts):
        reader.feed(chunk)
    reader.close()
    whole = TrainingLogReader(PROFILE, max_steps=8)
    whole.feed(text)
    whole.close()
    assert reader.figures() == whole.figures() == parse_training(text, PROFILE)
    assert reader.recent_steps == whole.recent_steps
    assert reader.pending_saves == whole.pending_saves
    assert reader.progress() == whole.progress()


@settings(max_examples=100, deadline=None)
@given(
    _lines,
    st.lists(st.booleans(), min_size=40, max_size=40),
    st.lists(st.integers(0, 10_000), max_size=8),
    st.lists(st.integers(0, 10_000), max_size=8),
    st.lists(st.booleans(), max_size=16),
)
def test_two_workers_fed_in_any_interleaved_chunks_merge_as_when_fed_whole(
    lines: list[tuple[str, int, int, str]],
    on_steps_pod: list[bool],
    life_cuts: list[int],
    step_cuts: list[int],
    order: list[bool],
) -> None:
    rendered = _render(lines)
    logs = {
        LIFECYCLE: "".join(t for t, s in zip(rendered, on_steps_pod, strict=False) if not s),
        STEPS: "".join(t for t, s in zip(rendered, on_steps_pod, strict=False) if s),
    }
    whole = WorkerLogReader(PROFILE)
    for role, text in logs.items():
        whole.feed(role, text)
    whole.close()
    pieces = {
        LIFECYCLE: _chunks(logs[LIFECYCLE], life_cuts),
        STEPS: _chunks(logs[STEPS], step_cuts),
    }
    chunked = WorkerLogReader(PROFILE)
    for steps_first in [
        *order,
        *([False] * len(pieces[LIFECYCLE])),
        *([True] * len(pieces[STEPS])),
    ]:
        role = STEPS if steps_first else LIFECYCLE
        if pieces[role]:
            chunked.feed(role, pieces[role].pop(0))
    chunked.close()
    assert chunked.figures() == whole.figures()
    assert chunked.reader.recent_steps == whole.reader.recent_steps
    assert chunked.reader.progress() == whole.reader.progress()
