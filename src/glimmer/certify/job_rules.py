"""The Job controller's clock and log rules (specs/certify.md §3.2, §3.3, §7.6, §7.7) as pure
functions of what a reconcile read and ``now``.

* **Timeout**: the clock starts when the workload was first seen running; a workload that exists
  but never ran (suspended by a queue) never times out, since waiting for quota is not a fault
  of the nodes; a Job whose workload was never created counts from its group's start.
* **Stall**: before the first step, from the application's start (clamped forward to the
  workload's start, so queue time is not blamed on the job) against the startup budget; after
  it, from the last step against a multiple of the mean step time.
* **Checkpoint restart**: only with a checkpoint, restarts left, and a checkpoint written.
* **Logs**: the failure log of the first pod with a container that exited non-zero (OOMKilled
  first: it names the cause, where an exit code 1 of a sibling rank is only its echo); the
  timeout log of the launcher's ``node`` container, which holds the collective's own output.

Pods are plain mappings, as the API returns them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from glimmer.certify.platform.vocab import ANCESTOR_LABEL, ANCESTOR_TRAINER, NODE

Pod = Mapping[str, Any]

JOB_TIMED_OUT = "JobTimedOut"
JOB_TIMED_OUT_MESSAGE = "Job exceeded timeoutPerJob"
WORKLOAD_STALLED = "WorkloadStalled"
STARTUP_STALL_MESSAGE = "Workload stalled: no training step observed within startup timeout"
STEP_STALL_MESSAGE = "Workload stalled: no training step within the configured threshold"
WORKLOAD_RESTARTING = "WorkloadRestarting"

DEFAULT_STARTUP_STALL = timedelta(seconds=1200)
DEFAULT_SAMPLE_INTERVAL = timedelta(seconds=60)
# The grace before a restarted workload is recreated when no sample interval is known (§7.7).
DEFAULT_RESTART_GRACE = timedelta(seconds=30)

TAIL_LINES = 800
TAIL_BYTES = 32 * 1024
OOM_KILLED = "OOMKilled"
TIMEOUT_REASON = "Timeout"
POD_NOT_FOUND = "PodNotFound"
NO_TERMINATED_CONTAINER = "NoTerminatedContainer"
POD_NOT_FOUND_TAIL = (
    "no pod of the workload was found: it was never scheduled, or was deleted before its log "
    "could be read"
)
NO_TERMINATED_TAIL = (
    "no container of the workload's pods terminated with a non-zero exit code, so there is no "
    "failing log to show"
)


# ---- the timeout clock -----------------------------------------------------------------------


def timeout_anchor(
    workload_start: datetime | None, workload_created: bool, group_start: datetime | None
) -> datetime | None:
    """When the Job's timeout clock started (§3.2); None when it has not (and never will while
    the workload only waits)."""
    if workload_start is not None:
        return workload_start
    if workload_created:
        return None
    return group_start


def timed_out(
    now: datetime,
    timeout: timedelta,
    *,
    workload_start: datetime | None,
    workload_created: bool,
    group_start: datetime | None,
) -> bool:
    """Whether the Job has run past ``timeout`` (timeoutPerJob); a zero timeout never fires."""
    anchor = timeout_anchor(workload_start, workload_created, group_start)
    return timeout > timedelta(0) and anchor is not None and now - anchor > timeout


# ---- stall detection (§7.6) ------------------------------------------------------------------


@dataclass(frozen=True)
class Progress:
    """What the Job's GoodputMeasurement says of the training so far."""

    start_time: datetime | None = None
    application_start_time: datetime | None = None
    last_step_timestamp: datetime | None = None
    avg_step_time_sec: float | None = None
    log_interval: int = 0


def stall(
    now: datetime,
    progress: Progress | None,
    *,
    stall_multiplier: float | None,
    workload_start: datetime | None,
    startup_timeout: timedelta | None = None,
    sample_interval: timedelta | None = None,
) -> str | None:
    """The stall message when the workload stalled, else None. Active only with a
    ``stallMultiplier`` and a GoodputMeasurement (``progress``). Two sample intervals of slack
    cover a step the measurement has not read yet."""
    if not stall_multiplier or progress is None:
        return None
    slack = 2 * (sample_interval or DEFAULT_SAMPLE_INTERVAL)
    last, avg = progress.last_step_timestamp, progress.avg_step_time_sec
    if last is None or not avg or avg <= 0:
        anchor = progress.application_start_time or progress.start_time
        if anchor is None:
            return None
        if workload_start is not None and anchor < workload_start:
            anchor = workload_start
        budget = (startup_timeout or DEFAULT_STARTUP_STALL) + slack
        return STARTUP_STALL_MESSAGE if now - anchor > budget else None
    threshold = timedelta(seconds=stall_multiplier * avg * max(progress.log_interval, 1)) + slack
    return STEP_STALL_MESSAGE if now - last > threshold else None


# ---- checkpoint restart (§7.7) ---------------------------------------------------------------


def restart_allowed(
    *,
    checkpoint: bool,
    restart_count: int,
    max_restarts: int | None,
    last_checkpoint_step: int | None,
) -> bool:
    """A failed, deleted or stalled workload resumes from its checkpoint: the Job has one,
    restarts are left, and a checkpoint was actually written (else it would start over)."""
    return (
        checkpoint
        and restart_count < (max_restarts or 0)
        and last_checkpoint_step is not None
        and last_checkpoint_step > 0
    )


def restart_message(restart: int, max_restarts: int | None) -> str:
    """The WorkloadRestarting condition's message; ``restart`` is the count after this one."""
    return f"Restarting workload from checkpoint (restart {restart}/{max_restarts or 0})"


def restart_grace(sample_interval: timedelta | None) -> timedelta:
    """How long to wait before recreating the workload: two goodput sample intervals, so the
    measurement reads the old pods' last lines before they go."""
    return 2 * sample_interval if sample_interval else DEFAULT_RESTART_GRACE


# ---- logs (§3.2 timeout log, §3.3 failure log) -----------------------------------------------


def _get(obj: Mapping[str, Any], *path: str) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)  # type: ignore[assignment]
    return obj


def pod_name(pod: Pod) -> str:
    return str(_get(pod, "metadata", "name") or "")


def _by_name(pods: Sequence[Pod]) -> list[Pod]:
    # The API's order is not a contract; name order makes the pick the same on every replay.
    return sorted(pods, key=pod_name)


@dataclass(frozen=True)
class FailureLog:
    """``status.failureLog`` of a Job (§2.4)."""

    pod_name: str = ""
    node_name: str = ""
    exit_code: int = 0
    reason: str = ""
    tail: str = ""

    def to_wire(self) -> dict[str, Any]:
        return {
            "podName": self.pod_name,
            "nodeName": self.node_name,
            "exitCode": self.exit_code,
            "reason": self.reason,
            "tail": self.tail,
        }


@dataclass(frozen=True)
class LogSource:
    """Which container's log to read: pod, container, and what the failure log records."""

    pod_name: str
    container: str
    node_name: str = ""
    exit_code: int = 0
    reason: str = ""


def _exit_code(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _terminations(pod: Pod) -> list[tuple[str, int, str]]:
    """(container, exit code, reason) of every container that ended non-zero: the current
    state, else the last one (a restarted container); main containers before init ones."""
    out: list[tuple[str, int, str]] = []
    statuses = [
        *(_get(pod, "status", "containerStatuses") or []),
        *(_get(pod, "status", "initContainerStatuses") or []),
    ]
    for status in statuses:
        if not isinstance(status, Mapping):
            continue
        for state in ("state", "lastState"):
            ended = _get(status, state, "terminated")
            code = _exit_code(ended.get("exitCode")) if isinstance(ended, Mapping) else 0
            if isinstance(ended, Mapping) and code != 0:
                out.append((str(status.get("name", "")), code, str(ended.get("reason") or "")))
                break
    return out


def failed_container(pods: Sequence[Pod]) -> LogSource | None:
    """The first pod (by name) with a container that terminated non-zero, preferring one
    OOMKilled anywhere; None when no container failed."""
    found: list[LogSource] = []
    for pod in _by_name(pods):
        for container, code, reason in _terminations(pod):
            source = LogSource(pod_name(pod), container, _node(pod), code, reason)
            if reason == OOM_KILLED:
                return source
            found.append(source)
    return found[0] if found else None


def _node(pod: Pod) -> str:
    return str(_get(pod, "spec", "nodeName") or "")


def _containers(pod: Pod) -> list[str]:
    return [
        str(c.get("name", ""))
        for c in _get(pod, "spec", "containers") or []
        if isinstance(c, Mapping)
    ]


def timeout_log_source(pods: Sequence[Pod]) -> LogSource | None:
    """The pod and container of a timed-out Job's log: the launcher (the Trainer's ancestor
    step) before the workers, the ``node`` container before any other; None without pods."""
    ordered = _by_name(pods)
    if not ordered:
        return None
    launchers = [
        p for p in ordered if _get(p, "metadata", "labels", ANCESTOR_LABEL) == ANCESTOR_TRAINER
    ]
    pod = (launchers or ordered)[0]
    containers = _containers(pod)
    container = NODE if NODE in containers or not containers else containers[0]
    return LogSource(pod_name(pod), container, _node(pod), 0, TIMEOUT_REASON)


def keep_tail(text: str, max_lines: int = TAIL_LINES, max_bytes: int = TAIL_BYTES) -> str:
    """The end of a log: its last ``max_lines`` lines, then at most ``max_bytes`` bytes of them
    (the end kept: a failure is explained by the last lines), never splitting a character."""
    lines = text.splitlines(keepends=True)
    text = "".join(lines[-max_lines:]) if max_lines > 0 else ""
    raw = text.encode("utf-8")
    if len(raw) <= max_bytes:
        return text
    return raw[-max_bytes:].decode("utf-8", errors="ignore")


def failure_log(
    pods: Sequence[Pod], read_log: Callable[[LogSource], str], *, timeout: bool = False
) -> FailureLog:
    """The failure log of a Job (§3.3), or its timeout log with ``timeout`` (§3.2).
    ``read_log`` reads a container's log (the controller asks for TAIL_LINES lines); what it
    returns is cut to the tail here. No pod → PodNotFound; no failed container →
    NoTerminatedContainer; either way the tail says why."""
    if not pods:
        return FailureLog(reason=POD_NOT_FOUND, tail=POD_NOT_FOUND_TAIL)
    source = timeout_log_source(pods) if timeout else failed_container(pods)
    if source is None:
        return FailureLog(reason=NO_TERMINATED_CONTAINER, tail=NO_TERMINATED_TAIL)
    return FailureLog(
        source.pod_name,
        source.node_name,
        source.exit_code,
        source.reason or ("Error" if source.exit_code else ""),
        keep_tail(read_log(source)),
    )
