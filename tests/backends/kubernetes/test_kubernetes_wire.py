"""What the kubernetes substrate sends a cluster carries no null (backends/kubernetes/wire.py):
every status the engine writes — passing, failing, erroring, refused, Pair — is accepted by the
BurnInRun CRD's own status schema once serialized for the cluster, where the plain dump
(``glimmer run -o json``'s) is refused for its nulls."""

from __future__ import annotations

from typing import Any

from crd_schema import run_problems, status_problems
from engine_world import Recorder, ScriptedRunner, reply, run_object, spec_of, world

from glimmer.api.dump import to_wire
from glimmer.api.run import BurnInRunStatus
from glimmer.backends.kubernetes.run_store import status_body
from glimmer.backends.kubernetes.wire import drop_none, for_cluster


class Statuses(Recorder):
    """A simulator keeping every status the engine writes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.statuses: list[BurnInRunStatus] = []

    def write_status(self, run: Any, status: Any) -> Any:
        self.statuses.append(status.model_copy(deep=True))
        return super().write_status(run, status)


def _statuses(tests: dict[str, Any], targets: list[str], runner: ScriptedRunner) -> Statuses:
    entries = [{"testRef": name} for name in tests]
    w = world(len(targets), tests, entries, runner=runner, backend_cls=Statuses)
    w.submit(run_object(targets=targets, maxConcurrentNodes=len(targets), retryOnErrorLimit=1))
    w.drive()
    backend = w.backend
    assert isinstance(backend, Statuses) and backend.statuses
    return backend


def _mixed_run() -> Statuses:
    runner = (
        ScriptedRunner(default="miscompares=0\nburn finished")
        .on(reply("miscompares=3\nwrong answers", 1), node="node-001")
        .on(reply("crashed", 137), node="node-002")
    )
    tests = {
        "burn": spec_of(
            "gpu-burn",
            thresholds=[{"metric": "miscompares", "comparison": "Equal", "value": "0"}],
        ),
        "clock": spec_of("clockprobe", checkpointIntervalSeconds=60),
    }
    return _statuses(tests, ["node-000", "node-001", "node-002"], runner)


def test_every_status_a_mixed_run_writes_is_accepted_by_the_crd_once_serialized() -> None:
    backend = _mixed_run()
    for status in backend.statuses:
        assert status_problems(for_cluster(status)) == []


def test_the_plain_dump_of_those_statuses_holds_nulls_the_crd_refuses() -> None:
    # The point of for_cluster: the same statuses as `glimmer run -o json` writes them.
    backend = _mixed_run()
    refused = [s for s in backend.statuses if status_problems(to_wire(s))]
    assert refused, "the plain dump no longer holds nulls; for_cluster may be moot"
    assert any("None is not of type" in p for s in refused for p in status_problems(to_wire(s)))


def test_a_pair_runs_statuses_are_accepted_by_the_crd_once_serialized() -> None:
    tests = {"link": spec_of("tcp-baseline", scope="Pair", runner={"image": "iperf:1"})}
    backend = _statuses(tests, ["node-000", "node-001"], ScriptedRunner(default="ok"))
    for status in backend.statuses:
        assert status_problems(for_cluster(status)) == []


def test_a_run_refused_for_an_unknown_test_ref_writes_a_status_the_crd_accepts() -> None:
    # Scenario 30: the synthetic resolve result has no scope, and the CRD takes it.
    w = world(1, {}, [{"testRef": "missing"}], backend_cls=Statuses)
    run = run_object(targets=["node-000"])
    meta = run.metadata.model_copy(
        update={"creation_timestamp": w.backend.now().replace(year=2000)}
    )
    w.submit(run.model_copy(update={"metadata": meta}))
    w.drive()
    backend = w.backend
    assert isinstance(backend, Statuses)
    final = backend.statuses[-1]
    assert str(final.phase) == "Error" and final.results
    assert any("missing" in (r.message or "") for r in final.results)
    for status in backend.statuses:
        assert status_problems(for_cluster(status)) == []


def test_a_status_write_body_is_the_whole_run_with_the_new_status_and_no_null() -> None:
    backend = _mixed_run()
    run = backend.get_run("default", "run")
    assert run is not None
    body = status_body(run, backend.statuses[-1])
    assert body["metadata"]["resourceVersion"] == run.metadata.resource_version
    assert body["status"] == for_cluster(backend.statuses[-1])
    assert run_problems(body) == []


def test_an_all_default_status_is_sent_as_an_empty_object() -> None:
    run = run_object(targets=["node-000"])
    assert status_body(run, BurnInRunStatus())["status"] == {}


def test_drop_none_removes_none_at_every_depth_and_keeps_falsy_values() -> None:
    given = {"a": None, "b": {"c": None, "d": 0, "e": ""}, "f": [None, {"g": None}, False]}
    assert drop_none(given) == {"b": {"d": 0, "e": ""}, "f": [{}, False]}
