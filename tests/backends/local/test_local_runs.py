"""Runs on this host through the one engine, with real runner processes (a fake runner
program): a verdict from a two-test profile, a hung runner killed at its deadline, and a
second run on the same host refused by admission."""

from __future__ import annotations

from pathlib import Path

from local_world import (
    NODE,
    FastClock,
    backend,
    drive,
    fake_test,
    left_alive,
    recorded_processes,
    run_object,
)

from glimmer.backends.common.drivers import drive_wall_clock
from glimmer.contract.vocab import Phase
from glimmer.engine.reconciler import Engine


def _phases(run: object) -> dict[str, Phase]:
    status = run.status  # type: ignore[attr-defined]
    return {r.name: r.phase for r in status.results}


def test_a_two_test_profile_runs_to_a_verdict_as_real_processes(
    tmp_path: Path, runner: list[str]
) -> None:
    tests = {"clean": fake_test("clean"), "dirty": fake_test("dirty", miscompares=3)}
    b = backend(tmp_path / "state", runner, tests)
    b.submit(run_object())
    final = drive(b)
    assert final.status is not None and final.status.phase is Phase.FAILED
    assert _phases(final) == {"clean": Phase.PASSED, "dirty": Phase.FAILED}
    (dirty,) = [r for r in final.status.results or () if r.name == "dirty"]
    assert dirty.metrics is not None and dirty.metrics.get("miscompares") == "3"
    # Each test ran once, as one process whose output is the harvested log.
    executions = list(b.executions("default", "run", final.metadata.uid or ""))
    assert len(executions) == 2 and all(e.phase.terminated for e in executions)
    assert all("started" in b.read_log("default", e.name) for e in executions)
    node = b.get_node(NODE)
    assert node is not None and not node.unschedulable  # the cordon released
    assert left_alive(recorded_processes(b)) == []


def test_a_hung_runner_is_killed_at_its_deadline_and_the_result_is_error(
    tmp_path: Path, runner: list[str]
) -> None:
    # duration 1 s: the deadline is 121 s, which this clock makes 121/400 host seconds.
    clock = FastClock(400)
    tests = {"hangs": fake_test("hangs", sleep=60, duration=1, FAKE_IGNORE_TERM="1")}
    b = backend(tmp_path / "state", runner, tests, clock=clock)
    b.submit(run_object())
    engine = Engine(b)
    final = drive_wall_clock(b, engine, "default", "run", poll=20, sleep=clock.sleep)
    assert final is not None and final.status is not None
    assert final.status.phase is Phase.ERROR
    [result] = final.status.results or []
    assert result.phase is Phase.ERROR and "deadline" in (result.message or "")
    for execution in b.executions("default", "run", final.metadata.uid or ""):
        assert execution.reason == "DeadlineExceeded"
    # The runner ignored SIGTERM: SIGKILL after the grace ended it all the same.
    assert left_alive(recorded_processes(b)) == []


def test_two_runs_on_one_host_at_once_the_second_is_refused_targets_busy(
    tmp_path: Path, runner: list[str]
) -> None:
    tests = {"long": fake_test("long", sleep=0.5)}
    first_process = backend(tmp_path / "state", runner, tests)
    second_process = backend(tmp_path / "state", runner, tests)  # same state dir, same host
    first_process.submit(run_object("first"))
    first_engine = Engine(first_process)
    for _ in range(3):
        first_engine.reconcile("default", "first")
    second_process.submit(run_object("second"))
    Engine(second_process).reconcile("default", "second")
    second = second_process.get_run("default", "second")
    assert second is not None and second.status is not None
    assert second.status.phase is Phase.ERROR
    [admitted] = [c for c in second.status.conditions or () if c.type == "Admitted"]
    assert (admitted.status, admitted.reason) == ("False", "TargetsBusy")
    assert list(second_process.executions("default", "second", second.metadata.uid or "")) == []
    final = drive(first_process, "first")
    assert final.status is not None and final.status.phase is Phase.PASSED
