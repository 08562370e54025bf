"""The training-log reader's rules of scenario 28 (specs/certify.md §9.2, §2.8, §6.2): only the
first restore before a step counts, a restore after steps is a restart in place, the in-memory
step cap, pending saves carried between readers, captured save durations, steps without a
number, warmup by step number, and kubelet timestamps of every precision."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from glimmer.certify.measure.goodput import (
    EventPattern,
    Progress,
    TrainingLogReader,
    TrainingProfile,
    goodput,
    parse_training,
)


def _profile(drop: tuple[str, ...] = (), warmup_steps: int = 0) -> TrainingProfile:
    patterns = {
        "applicationStart": EventPattern("START"),
        "trainingStep": EventPattern(
            r"step (?P<globalStep>\d+) took (?P<stepTiming>[\d.]+)", units={"stepTiming": "ms"}
        ),
        "checkpointSave": EventPattern(r"save (?P<globalStep>\d+) begins"),
        "checkpointDone": EventPattern(r"save (?P<globalStep>\d+) done"),
        "checkpointRestore": EventPattern(r"restoring from (?P<path>\S+)"),
    }
    return TrainingProfile({k: v for k, v in patterns.items() if k not in drop}, warmup_steps)


def _log(*lines: tuple[int, str]) -> str:
    """Lines at whole seconds after 10:00:00 (kubelet-stamped)."""
    return "\n".join(f"2026-03-14T10:{s // 60:02d}:{s % 60:02d}Z {text}" for s, text in lines)


def test_a_second_restore_before_any_step_opens_no_second_interruption() -> None:
    log = _log(
        (0, "START"),
        (10, "step 1 took 1000"),
        (20, "step 2 took 1000"),  # the last line before the crash
        (50, "START"),
        (55, "restoring from /ckpt"),
        (57, "restoring from /ckpt"),  # printed again (another rank, a retry): the same resume
        (60, "step 1 took 1000"),
    )
    g = parse_training(log, _profile())
    assert g is not None
    assert (g.interruptions, g.reschedule, g.resume) == (1, 30.0, 10.0)


def test_a_restore_after_steps_without_a_start_is_a_restart_in_place() -> None:
    log = _log(
        (0, "START"),
        (10, "step 1 took 1000"),
        (11, "save 1 begins"),
        (13, "save 1 done"),
        (20, "step 2 took 1000"),
        (25, "restoring from /ckpt"),  # the trainer restarted in its own process
        (26, "restoring from /ckpt"),  # only the first restore counts
        (30, "step 2 took 1000"),
    )
    g = parse_training(log, _profile())
    assert g is not None
    assert g.interruptions == 1
    assert (g.lost_work, g.reschedule, g.resume, g.checkpoint_save) == (7.0, 5.0, 5.0, 2.0)
    assert g.ratio == pytest.approx(goodput(30, 5, 7, 5, 2))


def test_only_max_steps_are_kept_in_memory_and_the_figures_do_not_change() -> None:
    log = _log((0, "START"), *((i, f"step {i} took {i}") for i in range(1, 51)))
    capped = TrainingLogReader(_profile(), max_steps=5)
    capped.feed(log)
    capped.close()
    assert [s.step for s in capped.recent_steps] == [46, 47, 48, 49, 50]
    assert capped.figures() == parse_training(log, _profile())
    assert capped.figures() is not None


def test_a_pending_save_carried_to_a_fresh_reader_is_closed_by_its_done_line() -> None:
    first = TrainingLogReader(_profile())
    first.feed(_log((0, "START"), (10, "step 1 took 1000"), (12, "save 1 begins")) + "\n")
    assert first.pending_saves == {1: pytest.approx(first.recent_steps[0].at + 2)}
    later = TrainingLogReader(_profile(), pending_saves=first.pending_saves)
    later.feed(_log((0, "START"), (14, "step 2 took 1000"), (19, "save 1 done")) + "\n")
    g = later.figures()
    assert g is not None and g.checkpoint_save == pytest.approx(7.0)
    assert later.pending_saves == {}


def test_a_captured_save_duration_is_taken_as_the_save_time() -> None:
    profile = TrainingProfile(
        {
            "applicationStart": EventPattern("START"),
            "trainingStep": EventPattern(r"step (?P<iteration>\d+)"),
            "checkpointSave": EventPattern(r"save (?P<step>\d+) begins"),
            "checkpointDone": EventPattern(
                r"save (?P<step>\d+) done in (?P<saveDuration>[\d.]+) ms",
                units={"saveDuration": "ms"},
            ),
        }
    )
    log = _log((0, "START"), (1, "step 1"), (2, "save 1 begins"), (9, "save 1 done in 1500 ms"))
    g = parse_training(log, profile)
    assert g is not None and g.checkpoint_save == pytest.approx(1.5)  # not 9 - 2


def test_a_save_and_done_that_name_no_step_pair_up() -> None:
    profile = TrainingProfile(
        {
            "applicationStart": EventPattern("START"),
            "trainingStep": EventPattern(r"step (?P<iteration>\d+)"),
            "checkpointSave": EventPattern(r"saving checkpoint$"),
            "checkpointDone": EventPattern(r"checkpoint saved$"),
        }
    )
    log = _log((0, "START"), (1, "step 1"), (2, "saving checkpoint"), (6, "checkpoint saved"))
    g = parse_training(log, profile)
    assert g is not None and g.checkpoint_save == pytest.approx(4.0)


def test_a_step_line_without_its_number_is_the_next_by_the_log_interval() -> None:
    profile = TrainingProfile(
        {
            "applicationStart": EventPattern("START"),
            "trainingStep": EventPattern(r"step took (?P<elapsedTime>[\d.]+)s"),
        },
        log_interval=10,
    )
    reader = TrainingLogReader(profile)
    reader.feed(_log((0, "START"), *((i, "step took 1.5s") for i in range(1, 4))))
    reader.close()
    assert [s.step for s in reader.recent_steps] == [10, 20, 30]
    g = reader.figures()
    assert g is not None and g.highest_step == 30 and g.avg_step_time == pytest.approx(1.5)


def test_warmup_counts_step_numbers_from_the_first_step_after_the_boundary() -> None:
    # The trainer logs every 10th step but the profile sets no logInterval: with warmupSteps 2,
    # step 10 is warmup (within 2 of the first step) and step 20 is not.
    log = _log((0, "START"), (10, "step 10 took 9000"), (20, "step 20 took 1000"))
    reader = TrainingLogReader(_profile(warmup_steps=2))
    reader.feed(log)
    reader.close()
    assert [(s.step, s.warmup) for s in reader.recent_steps] == [(10, True), (20, False)]
    g = reader.figures()
    assert g is not None and g.avg_step_time == pytest.approx(1.0)


def test_without_a_start_pattern_the_first_stamped_line_opens_the_run() -> None:
    log = "untimed banner\n" + _log((5, "loading data"), (9, "step 1 took 500"))
    g = parse_training(log, _profile(drop=("applicationStart",)))
    assert g is not None and g.training_time == pytest.approx(4.0)


def test_progress_redrawn_in_place_counts_every_segment_at_the_lines_time() -> None:
    reader = TrainingLogReader(_profile())
    reader.feed(_log((0, "START"), (8, "step 1 took 4000\rstep 2 took 4000\r")) + "\r\n")
    assert [(s.step, s.at - reader.recent_steps[0].at) for s in reader.recent_steps] == [
        (1, 0.0),
        (2, 0.0),
    ]


@pytest.mark.parametrize(
    ("stamp", "seconds"),
    [
        ("2026-03-14T10:00:07Z", 7.0),  # s
        ("2026-03-14T10:00:07.250000Z", 7.25),  # µs
        ("2026-03-14T10:00:07.250000999Z", 7.25),  # ns: cut to µs
        ("2026-03-14T12:00:07.25+02:00", 7.25),  # an offset, not UTC
    ],
    ids=["s", "us", "ns", "offset"],
)
def test_kubelet_timestamps_of_any_precision_time_the_events(stamp: str, seconds: float) -> None:
    g = parse_training(f"2026-03-14T10:00:00Z START\n{stamp} step 1 took 10", _profile())
    assert g is not None and g.training_time == pytest.approx(seconds, abs=1e-6)


def test_a_line_without_a_kubelet_timestamp_times_nothing() -> None:
    # No prefix and no captured timestamp: the step is not timed, so it is not counted.
    g = parse_training("2026-03-14T10:00:00Z START\nstep 1 took 10\n", _profile())
    assert g is None
    # With the time in the line itself (a ``timestamp`` capture) it needs no prefix.
    timed = TrainingProfile(
        {
            "applicationStart": EventPattern("START"),
            "trainingStep": EventPattern(r"\[(?P<timestamp>[\d-]+ [\d:.]+)\] step (?P<step>\d+)"),
        }
    )
    g = parse_training("2026-03-14T10:00:00Z START\n[2026-03-14 10:00:03.5] step 1\n", timed)
    assert g is not None and g.training_time == 0.0  # the last *kubelet* line ends the run
    assert g.highest_step == 1


def test_progress_reports_the_latest_step_checkpoint_start_and_line() -> None:
    reader = TrainingLogReader(_profile(warmup_steps=1))
    assert reader.progress() == Progress()
    reader.feed(
        _log(
            (0, "START"),
            (10, "step 1 took 9000"),  # warmup
            (11, "step 2 took 1000"),
            (12, "save 2 begins"),
            (14, "save 2 done"),
            (20, "START"),
            (25, "step 2 took 3000"),  # warmup again after the start; the latest, not highest
            (26, "NCCL INFO noise"),
        )
        + "\n"
    )
    t0 = reader.progress().application_start
    assert t0 is not None
    p = reader.progress()
    assert (p.current_step, p.warmup_base_step, p.last_checkpoint_step) == (2, 2, 2)
    assert (p.last_step_time, p.last_checkpoint_time, p.last_line_time) == (t0 + 5, t0 - 6, t0 + 6)
    assert (p.warmup_time, p.non_warmup_time) == (12.0, 1.0)


_LOOSE = TrainingProfile(
    {
        "trainingStep": EventPattern(
            r"s=(?P<globalStep>\S+) t=(?P<stepTiming>\S+) f=(?P<tflops>\S*)"
        ),
        "checkpointSave": EventPattern(r"save=(?P<step>\S+) (?P<saveDuration>\S+)"),
        "checkpointDone": EventPattern(r"done=(?P<iteration>\S+) at (?P<timestamp>.+)$"),
        "checkpointRestore": EventPattern(r"restore (?P<timestamp>.*)"),
    },
    warmup_steps=1,
    log_interval=3,
    layout="Jan _2 15:04:05.000 -0700",
)
_WORDS = st.sampled_from(["inf", "nan", "-1", "1e999", "3", "1.5", "", "x", "9" * 30])


@given(
    st.lists(
        st.tuples(st.sampled_from(["s=", "save=", "done=", "restore "]), _WORDS, _WORDS, st.text()),
        max_size=20,
    )
)
def test_loose_captures_of_anything_never_raise(lines: list[tuple[str, str, str, str]]) -> None:
    text = "\n".join(
        f"2026-03-14T10:00:00Z {kind}{a} t={b} f={a} at {tail}" for kind, a, b, tail in lines
    )
    reader = TrainingLogReader(_LOOSE)
    reader.feed(text)
    reader.close()
    reader.figures()
    assert reader.progress().last_line_time is not None or not lines
