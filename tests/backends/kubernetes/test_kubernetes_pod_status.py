"""An execution as a runner Pod's status says (backends/kubernetes/pod_status.py): the pod's
phase, the runner container's exit code and accounts, the pod-level reason, the scheduler's
message, readiness only when Running and Ready, and the cluster's times on the substrate
clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from kube_specs import node_spec

from glimmer.backends.kubernetes.pod_status import execution_of, parse_time
from glimmer.engine.backend import ExecPhase

SPEC = node_spec("pod", "node-000")
CREATED = "2026-12-02T00:00:00Z"


def _pod(status: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "pod", "creationTimestamp": CREATED}, "status": status}


def _runner(state: dict[str, Any]) -> dict[str, Any]:
    return {"name": "runner", "state": state}


def test_a_pod_with_no_status_yet_is_a_pending_execution_never_started() -> None:
    found = execution_of(_pod({}), SPEC)
    assert found.phase is ExecPhase.PENDING and not found.started and found.live
    assert found.created_at == datetime(2026, 12, 2, tzinfo=UTC)
    assert found.exit_code is None and not found.ready


def test_a_succeeded_pod_gives_the_runner_containers_exit_code_and_times() -> None:
    terminated = {
        "exitCode": 0,
        "startedAt": "2026-12-02T00:00:05Z",
        "finishedAt": "2026-12-02T00:10:05Z",
        "reason": "Completed",
    }
    status = {
        "phase": "Succeeded",
        "startTime": "2026-12-02T00:00:03Z",
        "containerStatuses": [_runner({"terminated": terminated})],
    }
    found = execution_of(_pod(status), SPEC)
    assert found.phase is ExecPhase.SUCCEEDED and found.exit_code == 0 and not found.live
    assert found.started_at == datetime(2026, 12, 2, 0, 0, 3, tzinfo=UTC)
    assert found.finished_at == datetime(2026, 12, 2, 0, 10, 5, tzinfo=UTC)
    assert found.container_reason == "Completed"


def test_a_failed_pod_carries_the_pod_reason_and_the_runner_containers_account() -> None:
    terminated = {"exitCode": 137, "reason": "OOMKilled", "message": "out of memory"}
    status = {
        "phase": "Failed",
        "reason": "DeadlineExceeded",
        "message": "Pod was active on the node longer than the specified deadline",
        "containerStatuses": [
            {"name": "sidecar", "state": {"terminated": {"exitCode": 0}}},
            _runner({"terminated": terminated}),
        ],
    }
    found = execution_of(_pod(status), SPEC)
    assert found.phase is ExecPhase.FAILED and found.exit_code == 137
    assert (found.reason, found.container_reason) == ("DeadlineExceeded", "OOMKilled")
    assert found.container_message == "out of memory" and found.message.startswith("Pod was")


def test_a_waiting_runner_and_an_unscheduled_pod_say_why() -> None:
    waiting = {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "x"'}
    status = {
        "phase": "Pending",
        "conditions": [
            {"type": "PodScheduled", "status": "False", "message": "0/3 nodes are available"}
        ],
        "containerStatuses": [_runner({"waiting": waiting})],
    }
    found = execution_of(_pod(status), SPEC)
    assert found.waiting_reason == "ImagePullBackOff" and "pulling" in found.waiting_message
    assert found.scheduler_message == "0/3 nodes are available"
    scheduled = execution_of(
        _pod({"conditions": [{"type": "PodScheduled", "status": "True", "message": "ok"}]}), SPEC
    )
    assert scheduled.scheduler_message == ""


def test_ready_only_when_running_with_the_ready_condition_true() -> None:
    ready = [{"type": "Ready", "status": "True"}]
    running = {"phase": "Running", "startTime": CREATED, "conditions": ready}
    assert execution_of(_pod(running), SPEC).ready
    not_ready = {**running, "conditions": [{"type": "Ready", "status": "False"}]}
    assert not execution_of(_pod(not_ready), SPEC).ready
    done = {"phase": "Succeeded", "startTime": CREATED, "conditions": ready}
    assert not execution_of(_pod(done), SPEC).ready


def test_an_unknown_phase_is_live_never_terminated() -> None:
    started = execution_of(_pod({"phase": "Unknown", "startTime": CREATED}), SPEC)
    assert started.phase is ExecPhase.RUNNING and started.live
    never = execution_of(_pod({"phase": "Unknown"}), SPEC)
    assert never.phase is ExecPhase.PENDING and never.live


def test_the_clusters_times_are_read_through_the_substrate_clock() -> None:
    status = {"phase": "Running", "startTime": "2026-12-02T00:00:10Z"}
    found = execution_of(_pod(status), SPEC, lambda t: t + timedelta(hours=1))
    assert found.created_at == datetime(2026, 12, 2, 1, tzinfo=UTC)
    assert found.started_at == datetime(2026, 12, 2, 1, 0, 10, tzinfo=UTC)


def test_timestamps_parse_with_a_zone_and_absent_ones_are_none() -> None:
    assert parse_time("2026-12-02T00:28:47Z") == datetime(2026, 12, 2, 0, 28, 47, tzinfo=UTC)
    assert parse_time("2026-12-02T00:28:47") == datetime(2026, 12, 2, 0, 28, 47, tzinfo=UTC)
    assert parse_time(None) is None and parse_time("") is None
