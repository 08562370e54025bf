"""What a runner Pod's status says about its execution, as one pure function.

The phase is the pod's (Pending, Running, Succeeded, Failed); ``Unknown`` (the node stopped
reporting) is still live — Running once the pod had started, Pending before — because only
Succeeded and Failed are terminated (§2.7a) and a pod nobody can see is never a success.
The exit code, the container's terminated account and its waiting state come from the
container named ``runner``; the pod-level reason (``DeadlineExceeded``, ``Evicted``) from the
pod; the scheduler's reason from a ``PodScheduled=False`` condition. Times are the cluster's,
read through the substrate clock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from glimmer.backends.kubernetes.podspec import RUNNER_CONTAINER
from glimmer.engine.backend import ExecPhase, Execution, ExecutionSpec

_PHASES = {p.value: p for p in ExecPhase}


def parse_time(value: object) -> datetime | None:
    """An RFC 3339 timestamp of the API (``2026-12-02T00:28:47Z``), None when absent."""
    if not isinstance(value, str) or not value:
        return None
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _runner(status: Mapping[str, Any]) -> Mapping[str, Any]:
    for container in status.get("containerStatuses") or ():
        if container.get("name") == RUNNER_CONTAINER:
            return container  # type: ignore[no-any-return]
    return {}


def _condition(status: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    for condition in status.get("conditions") or ():
        if condition.get("type") == kind:
            return condition  # type: ignore[no-any-return]
    return {}


def _phase(status: Mapping[str, Any]) -> ExecPhase:
    found = _PHASES.get(str(status.get("phase") or "Pending"))
    if found is not None:
        return found
    return ExecPhase.RUNNING if status.get("startTime") else ExecPhase.PENDING


def execution_of(
    pod: Mapping[str, Any],
    spec: ExecutionSpec,
    on_clock: Callable[[datetime], datetime] = lambda moment: moment,
) -> Execution:
    """The execution ``pod`` is (``spec``: the request it was created from), its times mapped
    by ``on_clock`` onto the substrate's clock."""

    def when(value: object) -> datetime | None:
        moment = parse_time(value)
        return on_clock(moment) if moment is not None else None

    status: Mapping[str, Any] = pod.get("status") or {}
    phase = _phase(status)
    runner = _runner(status)
    state = runner.get("state") or {}
    terminated = state.get("terminated") or {}
    waiting = state.get("waiting") or {}
    running = state.get("running") or {}
    scheduled = _condition(status, "PodScheduled")
    ready = _condition(status, "Ready")
    created = when((pod.get("metadata") or {}).get("creationTimestamp"))
    started = when(status.get("startTime")) or when(
        running.get("startedAt") or terminated.get("startedAt")
    )
    exit_code = terminated.get("exitCode")
    return Execution(
        spec=spec,
        phase=phase,
        created_at=created or on_clock(datetime.now(UTC)),
        started_at=started,
        finished_at=when(terminated.get("finishedAt")),
        ready=phase is ExecPhase.RUNNING and ready.get("status") == "True",
        exit_code=int(exit_code) if exit_code is not None else None,
        reason=str(status.get("reason") or ""),
        message=str(status.get("message") or ""),
        container_reason=str(terminated.get("reason") or ""),
        container_message=str(terminated.get("message") or ""),
        waiting_reason=str(waiting.get("reason") or ""),
        waiting_message=str(waiting.get("message") or ""),
        scheduler_message=(
            str(scheduled.get("message") or scheduled.get("reason") or "")
            if scheduled.get("status") == "False"
            else ""
        ),
    )
