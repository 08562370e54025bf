"""The status is the checkpoint, on this host: the driver (glimmer's process) is killed with
SIGKILL at random points and started again on the same state directory, until the run settles.
The verdict equals an uninterrupted run's, no attempt's runner starts twice (the runner marks
each start in a file), and no supervisor or runner process is left behind."""

from __future__ import annotations

import os
import random
import signal
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

from local_world import backend, drive, fake_test, left_alive, recorded_processes, run_object

from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec

SEED = 1313
MIN_KILLS = 20
MAX_DELAY = 0.4  # host seconds a driver is given before it is killed


def _tests(marks: Path) -> dict[str, BurnInTestSpec]:
    return {
        "first": fake_test("first", sleep=0.2, marks=marks),
        "dirty": fake_test("dirty", sleep=0.2, miscompares=1, exit_code=1, marks=marks),
        "last": fake_test("last", sleep=0.2, marks=marks),
    }


def _drive_once(state: Path, command: list[str], marks: Path) -> BurnInRun:
    """What `glimmer run` does: submit the run unless the state holds it, drive it."""
    b = backend(state, command, _tests(marks))
    if b.get_run("default", "run") is None:
        b.submit(run_object())
    return drive(b, poll=0.02)


def _in_child(state: Path, command: list[str], marks: Path) -> int:
    pid = os.fork()
    if pid == 0:  # the driver: never returns into pytest
        code = 0
        try:
            _drive_once(state, command, marks)
        except BaseException:
            traceback.print_exc(file=sys.stderr)
            code = 1
        os._exit(code)
    return pid


def _exit_within(pid: int, seconds: float) -> int | None:
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.005)
    return None


def _killed_until_settled(state: Path, command: list[str], marks: Path, rng: random.Random) -> int:
    """Start the driver, SIGKILL it after a random delay, again, until one run of it settles
    the run by itself; the number of kills."""
    kills = 0
    while True:
        pid = _in_child(state, command, marks)
        code = _exit_within(pid, rng.uniform(0.0, MAX_DELAY))
        if code is not None:
            assert code == 0, "the driver failed (its traceback is on stderr)"
            return kills
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        kills += 1


def _verdict(run: BurnInRun) -> tuple[object, dict[str, object]]:
    assert run.status is not None
    return run.status.phase, {r.name: r.phase for r in run.status.results or ()}


def test_kill_9_of_the_driver_at_random_points_resumes_to_the_same_verdict_starting_nothing_twice(
    tmp_path: Path, runner: list[str]
) -> None:
    marks = tmp_path / "uninterrupted.marks"
    expected = _verdict(_drive_once(tmp_path / "uninterrupted", runner, marks))
    expected_marks = Counter(marks.read_text().splitlines())
    assert max(expected_marks.values()) == 1

    rng = random.Random(SEED)
    kills = runs = 0
    while kills < MIN_KILLS or runs < 3:
        runs += 1
        state, marks = tmp_path / f"crashed-{runs}", tmp_path / f"crashed-{runs}.marks"
        kills += _killed_until_settled(state, runner, marks, rng)
        final = _drive_once(state, runner, marks)  # settled: a further start changes nothing
        assert _verdict(final) == expected
        started = Counter(marks.read_text().splitlines())
        assert started == expected_marks, f"run {runs}: runners started {started}"
        b = backend(state, runner, _tests(marks))
        assert left_alive(recorded_processes(b)) == []
        node = b.get_node("host-000")
        assert node is not None and not node.unschedulable and not node.annotations
    assert kills >= MIN_KILLS
