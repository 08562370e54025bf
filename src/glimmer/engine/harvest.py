"""Harvesting a terminated execution (§2.7a): its exit code and the substrate's account of why
it ended, its log parsed by the runner contract, and the kubelet's words folded in by the
verdict layer. Also the waiting-side facts an overdue execution is reported with.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from glimmer.contract.parse import parse
from glimmer.contract.vocab import ParsedResult
from glimmer.engine.backend import Backend, ExecPhase, Execution, LogUnavailable
from glimmer.verdict import harvest

FAILED_BEFORE_RUNNER = "pod failed before the runner container terminated"
NO_EXIT = -1


@dataclass(frozen=True)
class Ending:
    """How an execution ended: exit code, the reason that wins, and the kubelet's detail."""

    exit_code: int
    reason: str
    detail: str


def ending(execution: Execution) -> Ending:
    """A pod-level reason (DeadlineExceeded, Evicted) on a Failed execution wins over the
    container's; a Failed execution whose runner never terminated reports exit -1 and the best
    account there is."""
    pod_level = execution.phase is ExecPhase.FAILED and execution.reason
    if execution.exit_code is not None:
        if pod_level:
            return Ending(execution.exit_code, execution.reason, execution.message)
        return Ending(execution.exit_code, execution.container_reason, execution.container_message)
    if execution.waiting_reason:
        return Ending(NO_EXIT, execution.waiting_reason, execution.waiting_message)
    if execution.reason or execution.message:
        return Ending(NO_EXIT, execution.reason, execution.message)
    return Ending(NO_EXIT, "", FAILED_BEFORE_RUNNER)


@dataclass(frozen=True)
class Harvest:
    """One execution's parsed result, and why its log could not be read (None: it could)."""

    parsed: ParsedResult
    log_error: str | None


def harvest_execution(backend: Backend, execution: Execution) -> Harvest:
    """Read the log, parse it under the contract, fold in the termination account."""
    end = ending(execution)
    log_error: str | None = None
    try:
        log = backend.read_log(execution.spec.namespace, execution.name)
    except LogUnavailable as e:
        log, log_error = "", str(e) or "log unavailable"
    parsed = parse(execution.spec.kind, log, end.exit_code)
    return Harvest(harvest(parsed, reason=end.reason, detail=end.detail), log_error)


def waiting_detail(execution: Execution) -> str:
    """`` (scheduler: …)`` or `` (kubelet: <reason>: <message>)`` for an overdue execution."""
    if execution.scheduler_message:
        return f" (scheduler: {execution.scheduler_message})"
    if execution.waiting_reason:
        return f" (kubelet: {execution.waiting_reason}: {execution.waiting_message})"
    return ""


def ended_at(*executions: Execution | None) -> datetime | None:
    """When the last of a unit's terminated executions ended (None: none reports it)."""
    ends = [e.finished_at for e in executions if e is not None and e.finished_at is not None]
    return max(ends) if ends else None


def first_log_error(*harvests: Harvest | None) -> str | None:
    for h in harvests:
        if h is not None and h.log_error is not None:
            return h.log_error
    return None
