"""Scenarios 37–54 of specs/burnin.md §11.2 on the simulator backend: Pair and Group units,
segmented soaks, checkpoints, wake-ups, stop controls and the terminal ordering."""

from __future__ import annotations

from typing import Any

import pytest
from engine_world import (
    GATE_MISCOMPARES,
    Recorder,
    ScriptedRunner,
    reply,
    run_object,
    spec_of,
    world,
)

from glimmer.backends.sim.faults import ExecutionFault
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import BackendError, Conflict
from glimmer.engine.keys import CORDON_OWNER, FINALIZER, HEAT_EXPECTED

PAIR = spec_of(
    "ib-write-bw",
    scope="Pair",
    thresholds=[{"metric": "bandwidthGbps", "comparison": "GreaterThanOrEqual", "value": "300"}],
)
LINK_OK = "bandwidthGbps=390\nlink ok"
GROUP = spec_of(
    "nccl",
    scope="Group",
    thresholds=[{"metric": "busBandwidthGBs", "comparison": "GreaterThanOrEqual", "value": "300"}],
)
RING_OK = "busBandwidthGBs=400\nring ok"
TWO = ["node-000", "node-001"]
THREE = ["node-000", "node-001", "node-002"]


def only_result(w: Any) -> Any:
    [result] = w.run().status.results
    return result


def specs(w: Any) -> list[Any]:
    return [e.spec for e in w.backend.executions("default", "run", w.run().metadata.uid)]


def executions(w: Any) -> list[Any]:
    return list(w.backend.executions("default", "run", w.run().metadata.uid))


# -- Pair ------------------------------------------------------------------------------------


def test_37_pair_server_then_client_once_ready_one_result_for_the_link() -> None:
    w = world(2, {"p": PAIR}, [{"testRef": "p"}], runner=ScriptedRunner(default=LINK_OK))
    w.submit(run_object(targets=TWO, maxConcurrentNodes=2))
    assert w.drive().run.status.phase is Phase.PASSED
    server, client = sorted(executions(w), key=lambda e: e.spec.role, reverse=True)
    assert (server.spec.role, server.node, client.spec.role, client.node) == (
        "server",
        "node-000",
        "client",
        "node-001",
    )
    assert client.created_at > server.started_at  # created only once the server was Ready
    svc = server.spec.service
    assert server.spec.env_value("BURNIN_PEER_HOST") == f"client.{svc}"  # the twin's address
    assert client.spec.env_value("BURNIN_PEER_HOST") == f"server.{svc}"
    assert client.spec.env_value("BURNIN_PEER_NODE") == "node-000"
    assert svc.startswith("bp-") and svc in w.backend.services
    assert only_result(w).nodes == TWO


@pytest.mark.parametrize(
    ("server", "client", "phase"),
    [
        (reply("server broke", 3), reply("", 1), Phase.ERROR),
        (reply(LINK_OK, 0), reply("link down", 1), Phase.FAILED),
    ],
)
def test_38_pair_verdict_precedence(server: Any, client: Any, phase: Phase) -> None:
    runner = ScriptedRunner().on(server, role="server").on(client, role="client")
    w = world(2, {"p": PAIR}, [{"testRef": "p"}], runner=runner)
    w.submit(run_object(targets=TWO, maxConcurrentNodes=2))
    w.drive()
    assert only_result(w).phase is phase
    assert "this verdict is about the LINK" in only_result(w).message


@pytest.mark.parametrize(
    ("server", "phase"),
    [(reply("IB_WRITE_BW_SKIP: no RDMA device", 2), Phase.SKIPPED), (reply(LINK_OK), Phase.ERROR)],
)
def test_38_server_ending_before_the_client_exists(server: Any, phase: Phase) -> None:
    runner = ScriptedRunner().on(server, role="server")
    faults = [ExecutionFault("early-exit", role="server", after=0.5)]
    w = world(2, {"p": PAIR}, [{"testRef": "p"}], runner=runner, faults=faults)
    w.submit(run_object(targets=TWO, maxConcurrentNodes=2))
    w.drive()
    assert only_result(w).phase is phase
    assert not [s for s in specs(w) if s.role == "client"]


def test_39_overdue_client_is_recorded_before_both_ends_are_deleted() -> None:
    faults = [ExecutionFault("unschedulable", role="client")]
    w = world(
        2,
        {"p": PAIR},
        [{"testRef": "p"}],
        runner=ScriptedRunner(default=LINK_OK),
        faults=faults,
        backend_cls=Recorder,
    )
    w.submit(run_object(targets=TWO, maxConcurrentNodes=2))
    w.drive()
    result = only_result(w)
    assert result.phase is Phase.ERROR and "client endpoint on node-001" in result.message
    log = w.backend.log
    deletes = [i for i, (k, _) in enumerate(log) if k == "delete"]
    recorded = next(i for i, (k, v) in enumerate(log) if k == "status" and i < deletes[0])
    assert recorded < deletes[0]
    assert "client" in log[deletes[0]][1]  # the server had already been stopped at its deadline


# -- Group ------------------------------------------------------------------------------------


def test_40_group_root_first_then_workers_with_rank_env_and_no_role() -> None:
    w = world(3, {"g": GROUP}, [{"testRef": "g"}], runner=ScriptedRunner(default=RING_OK))
    w.submit(run_object(targets=THREE, maxConcurrentNodes=3))
    assert w.drive().run.status.phase is Phase.PASSED
    ranks = sorted(executions(w), key=lambda e: e.spec.rank)
    assert all(r.created_at > ranks[0].started_at for r in ranks[1:])
    for i, r in enumerate(ranks):
        assert r.spec.env_value("BURNIN_RANK") == str(i)
        assert r.spec.env_value("BURNIN_NRANKS") == "3"
        assert r.spec.env_value("BURNIN_ROOT_NODE") == "node-000"
        assert r.spec.env_value("BURNIN_ROLE") is None
        assert r.spec.deadline_seconds == 600 + 120 + 300
    assert only_result(w).nodes == THREE


def test_41_group_rank_error_outranks_a_failure() -> None:
    runner = (
        ScriptedRunner(default=RING_OK)
        .on(reply("", 1), node="node-001")
        .on(reply("nccl init failed", 3), node="node-002")
    )
    w = world(3, {"g": GROUP}, [{"testRef": "g"}], runner=runner)
    w.submit(run_object(targets=THREE, maxConcurrentNodes=3))
    w.drive()
    assert only_result(w).phase is Phase.ERROR


def test_41_a_rank_that_never_starts_is_named_when_the_collective_times_out() -> None:
    faults = [ExecutionFault("unschedulable", node="node-002")]
    w = world(
        3, {"g": GROUP}, [{"testRef": "g"}], runner=ScriptedRunner(default=RING_OK), faults=faults
    )
    w.submit(run_object(targets=THREE, maxConcurrentNodes=3))
    w.drive()
    result = only_result(w)
    assert result.phase is Phase.ERROR
    assert "rank 2 (node-002) never started" in result.message


def test_42_group_metrics_are_elected_per_key() -> None:
    runner = (
        ScriptedRunner()
        .on(reply("busBandwidthGBs=400\ngpuTempC=70"), node="node-000")
        .on(reply("busBandwidthGBs=390\ngpuTempC=81"), node="node-001")
        .on(reply("busBandwidthGBs=380\ngpuTempC=75"), node="node-002")
    )
    w = world(3, {"g": GROUP}, [{"testRef": "g"}], runner=runner)
    w.submit(run_object(targets=THREE, maxConcurrentNodes=3))
    w.drive()
    metrics = only_result(w).metrics
    assert metrics["busBandwidthGBs"] == "400" and metrics["gpuTempC"] == "81"


# -- segmented soaks ---------------------------------------------------------------------------

SOAK = spec_of(
    "thermal-soak",
    durationSeconds=900,
    soak={"segmentSeconds": 300},
    thresholds=[{"metric": "gpuTempC", "comparison": "LessThanOrEqual", "value": "80"}],
)


def soak_runner() -> ScriptedRunner:
    return ScriptedRunner(
        default="elapsedS=300\ngpuTempC=70\nsustainedClockPct=97\neccErrors=0"
    ).on(reply("elapsedS=300\ngpuTempC=75\nsustainedClockPct=95\neccErrors=1"), attempt=2)


def test_43_soak_runs_segment_pods_folds_and_judges_once() -> None:
    runner = soak_runner()
    w = world(1, {"s": SOAK}, [{"testRef": "s"}], runner=runner)
    w.submit(run_object(targets=["node-000"]))
    assert w.drive().run.status.phase is Phase.PASSED
    result = only_result(w)
    assert [a.trigger for a in result.attempts] == ["Initial", "Segment", "Segment"]
    assert {c.spec.env_value("BURNIN_DURATION_SECONDS") for c in runner.calls} == {"300"}
    agg = result.aggregated_metrics
    assert (agg["elapsedS"], agg["gpuTempC"], agg["sustainedClockPct"], agg["eccErrors"]) == (
        "900",
        "75",
        "95",
        "0",
    )
    assert result.segments_completed == 3 and result.message.startswith("3 segments of 300s")


def test_44_deleted_segment_is_retried_at_the_same_index() -> None:
    faults = [ExecutionFault("deleted", attempt=2, after=100)]
    w = world(1, {"s": SOAK}, [{"testRef": "s"}], runner=soak_runner(), faults=faults)
    w.submit(run_object(targets=["node-000"], retryOnErrorLimit=1))
    w.drive()
    result = only_result(w)
    assert result.phase is Phase.PASSED
    assert [a.trigger for a in result.attempts] == ["Initial", "Segment", "ErrorRetry", "Segment"]
    assert result.error_retries == 1 and result.segments_completed == 3


def test_44_error_in_the_last_segment_keeps_the_aggregate() -> None:
    runner = soak_runner().on(reply("driver hung", 3), attempt=3)
    w = world(1, {"s": SOAK}, [{"testRef": "s"}], runner=runner)
    w.submit(run_object(targets=["node-000"]))
    w.drive()
    result = only_result(w)
    assert result.phase is Phase.ERROR and result.metrics["elapsedS"] == "600"


def test_44_failing_segment_settles_at_once() -> None:
    runner = soak_runner().on(reply("xid 79", 1), attempt=1)
    w = world(1, {"s": SOAK}, [{"testRef": "s"}], runner=runner)
    w.submit(run_object(targets=["node-000"], retryOnErrorLimit=3))
    w.drive()
    result = only_result(w)
    assert result.phase is Phase.FAILED and len(result.attempts) == 1


def test_45_abort_early_on_a_sum_that_can_only_grow() -> None:
    soak = spec_of(
        "thermal-soak",
        durationSeconds=900,
        soak={"segmentSeconds": 300, "abortEarly": True},
        thresholds=[{"metric": "xidEvents", "comparison": "Equal", "value": "0"}],
    )
    runner = ScriptedRunner(default="xidEvents=0").on(reply("xidEvents=1"), attempt=1)
    w = world(1, {"s": soak}, [{"testRef": "s"}], runner=runner)
    w.submit(run_object(targets=["node-000"]))
    w.drive()
    result = only_result(w)
    assert result.phase is Phase.FAILED
    assert result.message.startswith("soak aborted after segment 1 of 3")


def test_46_node_held_between_segments_and_the_next_target_waits() -> None:
    w = world(2, {"s": SOAK}, [{"testRef": "s"}], runner=soak_runner())
    w.submit(run_object(targets=TWO))
    held: list[bool] = []

    def watch(run: Any, backend: Any) -> None:
        results = {r.nodes[0]: r for r in (run.status.results if run.status else None) or ()}
        a = results.get("node-000")
        if a is not None and a.phase is Phase.RUNNING:
            held.append(backend.nodes["node-000"].annotations.get(CORDON_OWNER) is not None)

    w.drive(progress=watch)
    assert held and all(held)
    by_node: dict[str, list[Any]] = {}
    for e in executions(w):
        by_node.setdefault(e.node, []).append(e)
    assert min(e.created_at for e in by_node["node-001"]) >= max(
        e.finished_at for e in by_node["node-000"]
    )


def test_47_checkpoints_publish_in_flight_readings_without_judging() -> None:
    spec = spec_of("gpu-burn", checkpointIntervalSeconds=120, thresholds=[GATE_MISCOMPARES])
    w = world(1, {"a": spec}, [{"testRef": "a"}], runner=ScriptedRunner(default="miscompares=7"))
    w.submit(run_object(targets=["node-000"]))
    seen: list[Any] = []

    def watch(run: Any, backend: Any) -> None:
        for r in (run.status.results if run.status else None) or ():
            if r.phase is Phase.RUNNING and r.metrics:
                seen.append(r)

    w.drive(progress=watch)
    assert seen and seen[0].metrics == {"miscompares": "7"} and seen[0].last_checkpoint_at
    checkpoints = [d for d in w.backend.deliveries if d.reason == "Checkpoint"]
    assert checkpoints and checkpoints[0].sequence >= 1
    assert only_result(w).phase is Phase.FAILED  # judged only once it ended


def test_48_attempt_history_of_a_long_soak_is_capped() -> None:
    soak = spec_of("thermal-soak", durationSeconds=6000, soak={"segmentSeconds": 300})
    w = world(1, {"s": soak}, [{"testRef": "s"}], runner=ScriptedRunner(default="elapsedS=300"))
    w.submit(run_object(targets=["node-000"]))
    assert w.drive().run.status.phase is Phase.PASSED
    result = only_result(w)
    assert result.segments_completed == 20
    assert len(result.attempts) == 17 and result.truncated_attempts == 3


def test_49_a_day_long_run_wakes_about_every_five_minutes() -> None:
    w = world(1, {"a": spec_of("gpu-burn", durationSeconds=86400)}, [{"testRef": "a"}])
    w.submit(run_object(targets=["node-000"]))
    drive = w.drive()
    assert drive.run.status.phase is Phase.PASSED
    assert 280 <= drive.passes <= 320


# -- stop controls and the terminal path --------------------------------------------------------


def _set_spec(w: Any, **changes: Any) -> None:
    run = w.run()
    w.backend.runs[("default", "run")] = run.model_copy(
        update={"spec": run.spec.model_copy(update=changes)}
    )


def test_50_suspend_launches_nothing_and_clearing_it_resumes() -> None:
    w = world(2, {"a": GATED_A}, [{"testRef": "a"}], runner=ScriptedRunner(default="miscompares=0"))
    w.submit(run_object(targets=TWO))
    for _ in range(3):
        w.pass_()
    _set_spec(w, suspend=True)
    w.drive()
    run = w.run()
    assert run.status.phase is Phase.RUNNING
    assert [r.nodes[0] for r in run.status.results] == ["node-000"]
    _set_spec(w, suspend=False)
    assert w.drive().run.status.phase is Phase.PASSED


GATED_A = spec_of("gpu-burn", thresholds=[GATE_MISCOMPARES])


def test_51_graceful_cancel_drains_then_cancels_the_rest() -> None:
    w = world(2, {"a": GATED_A}, [{"testRef": "a"}], runner=ScriptedRunner(default="miscompares=0"))
    w.submit(run_object(targets=TWO))
    for _ in range(3):
        w.pass_()
    _set_spec(w, cancel=True, cancel_reason="rack maintenance")
    w.drive()
    status = w.run().status
    assert status.phase is Phase.CANCELLED
    by_node = {r.nodes[0]: r for r in status.results}
    assert by_node["node-000"].phase is Phase.PASSED
    assert by_node["node-001"].phase is Phase.CANCELLED
    assert by_node["node-001"].message == "run cancelled: rack maintenance"
    _set_spec(w, cancel=False)
    w.pass_()
    assert w.run().status.phase is Phase.CANCELLED


def test_51_immediate_cancel_stops_live_executions_now() -> None:
    w = world(1, {"a": GATED_A}, [{"testRef": "a"}], runner=ScriptedRunner(default="miscompares=0"))
    w.submit(run_object(targets=["node-000"]))
    for _ in range(3):
        w.pass_()
    w.backend.advance_to(w.backend.t + 60)
    _set_spec(w, cancel=True, cancel_policy="Immediate")
    w.pass_()
    assert w.run().status.phase is Phase.CANCELLED
    assert not w.backend.executions("default", "run", w.run().metadata.uid).live()
    assert not w.backend.nodes["node-000"].unschedulable


def test_52_deadline_expiry_errors_the_unfinished_and_keeps_the_finished() -> None:
    w = world(2, {"a": GATED_A}, [{"testRef": "a"}], runner=ScriptedRunner(default="miscompares=0"))
    w.submit(run_object(targets=TWO, deadlineSeconds=900))
    w.drive()
    status = w.run().status
    assert status.phase is Phase.ERROR
    by_node = {r.nodes[0]: r for r in status.results}
    assert by_node["node-000"].phase is Phase.PASSED
    assert by_node["node-001"].message.startswith("run deadline of 900s expired")


def test_53_terminal_ordering_write_stop_release_deliver_finalizer() -> None:
    w = world(1, {"a": GATED_A}, [{"testRef": "a"}], backend_cls=Recorder)
    w.submit(run_object(targets=["node-000"]))
    for _ in range(3):
        w.pass_()
    _set_spec(w, cancel=True, cancel_policy="Immediate")
    w.backend.log.clear()
    w.pass_()
    kinds = w.backend.kinds()
    last_write = max(i for i, k in enumerate(kinds) if k == "status" and i < kinds.index("delete"))
    assert last_write < kinds.index("delete") < kinds.index("node")
    assert kinds.index("node") < kinds.index("deliver") < len(kinds) - 1
    assert kinds[-1] == "metadata" and FINALIZER not in (w.run().metadata.finalizers or ())


class LosesOneTerminalWrite(Recorder):
    lose = True

    def write_status(self, run: Any, status: Any) -> Any:
        if self.lose and status.phase in (Phase.CANCELLED, Phase.PASSED, Phase.FAILED):
            self.lose = False
            raise Conflict("stale resourceVersion")
        return super().write_status(run, status)


def test_53_a_lost_terminal_write_kills_nothing_and_the_next_pass_finishes() -> None:
    w = world(
        1,
        {"a": GATED_A},
        [{"testRef": "a"}],
        backend_cls=LosesOneTerminalWrite,
        runner=ScriptedRunner(default="miscompares=0"),
    )
    w.submit(run_object(targets=["node-000"]))
    for _ in range(3):
        w.pass_()
    _set_spec(w, cancel=True, cancel_policy="Immediate")
    with pytest.raises(Conflict):
        w.pass_()
    assert "delete" not in w.backend.kinds()
    w.pass_()
    assert w.run().status.phase is Phase.CANCELLED
    assert all(a.exit_code != 137 for r in w.run().status.results for a in r.attempts or ())


def test_54_never_scheduled_execution_errors_with_the_schedulers_words() -> None:
    faults = [ExecutionFault("unschedulable", attempt=1)]
    w = world(
        1,
        {"a": GATED_A},
        [{"testRef": "a"}],
        runner=ScriptedRunner(default="miscompares=0"),
        faults=faults,
        backend_cls=Recorder,
    )
    w.submit(run_object(targets=["node-000"], retryOnErrorLimit=1))
    w.drive()
    result = only_result(w)
    assert result.phase is Phase.PASSED and result.error_retries == 1
    first = result.attempts[0]
    assert first.phase is Phase.ERROR and first.exit_code == -1
    assert "(scheduler: 0/1 nodes are available: Insufficient nvidia.com/gpu)" in first.message
    log = w.backend.log
    deleted = next(i for i, (k, v) in enumerate(log) if k == "delete" and v == first.pod_name)
    assert any(k == "status" for k, _ in log[deleted - 1 : deleted])


class FailsOneDelete(Recorder):
    fail = True

    def delete_execution(self, namespace: str, name: str) -> None:
        if self.fail:
            self.fail = False
            raise BackendError("apiserver unavailable")
        super().delete_execution(namespace, name)


def test_53_a_failed_pod_deletion_is_swept_by_the_next_terminal_pass() -> None:
    w = world(1, {"a": GATED_A}, [{"testRef": "a"}], backend_cls=FailsOneDelete)
    w.submit(run_object(targets=["node-000"]))
    for _ in range(3):
        w.pass_()
    _set_spec(w, cancel=True, cancel_policy="Immediate")
    with pytest.raises(BackendError):
        w.pass_()
    run = w.run()
    assert run.status.phase is Phase.CANCELLED and FINALIZER in run.metadata.finalizers
    w.pass_()
    assert not w.backend.executions("default", "run", run.metadata.uid).live()
    assert FINALIZER not in (w.run().metadata.finalizers or ())
    assert not w.backend.nodes["node-000"].unschedulable
    w.pass_()
    assert w.run().status.phase is Phase.CANCELLED  # never changed again


def test_29_heat_extends_across_segments_and_foreign_markers_are_untouched() -> None:
    soak = spec_of("thermal-soak", durationSeconds=900, soak={"segmentSeconds": 300})
    w = world(2, {"s": soak}, [{"testRef": "s"}], runner=ScriptedRunner(default="elapsedS=300"))
    foreign = "other/run/uid-x/2030-01-01T00:00:00Z"
    w.backend.update_node("node-001", annotations={HEAT_EXPECTED: foreign})
    w.submit(run_object(targets=TWO))
    marks: list[str] = []

    def watch(run: Any, backend: Any) -> None:
        mark = backend.nodes["node-000"].annotations.get(HEAT_EXPECTED)
        if mark and (not marks or marks[-1] != mark):
            marks.append(mark)

    w.drive(progress=watch)
    expiries = [m.rsplit("/", 1)[1] for m in marks]
    assert len(expiries) == 3 and expiries == sorted(expiries)  # one extension per segment
    assert w.backend.nodes["node-001"].annotations.get(HEAT_EXPECTED) == foreign
    assert HEAT_EXPECTED not in w.backend.nodes["node-000"].annotations


def test_47_a_soak_checkpoint_publishes_fold_plus_window_and_never_the_aggregate() -> None:
    soak = spec_of(
        "thermal-soak",
        durationSeconds=900,
        checkpointIntervalSeconds=100,
        soak={"segmentSeconds": 300},
    )
    w = world(1, {"s": soak}, [{"testRef": "s"}], runner=ScriptedRunner(default="elapsedS=300"))
    w.submit(run_object(targets=["node-000"]))
    shown: list[tuple[int, str, str]] = []

    def watch(run: Any, backend: Any) -> None:
        for r in (run.status.results if run.status else None) or ():
            if r.phase is Phase.RUNNING and r.last_checkpoint_at and r.segments_completed:
                agg = (r.aggregated_metrics or {}).get("elapsedS", "")
                shown.append((r.segments_completed, agg, r.metrics["elapsedS"]))

    w.drive(progress=watch)
    assert shown
    for completed, aggregate, published in shown:
        assert aggregate == str(300 * completed)  # the fold counts finished windows only
        assert published in (aggregate, str(300 * (completed + 1)))  # fold + window so far
