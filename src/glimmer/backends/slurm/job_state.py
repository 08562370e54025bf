"""What Slurm says about a job, read as an execution's phase and its account of how it ended.

One ``squeue`` line per job (:data:`SQUEUE_FORMAT`) gives the state, the start and end and the
scheduler's reason; ``scontrol show job -o`` is asked only for a job that ended without the
script recording the runner's exit code (its ExitCode is then all there is). The mapping:

* PENDING, CONFIGURING (nodes being readied), the requeue and hold states: Pending, with the
  scheduler's reason as the ``scheduler_message`` the engine shows for an overdue execution;
* RUNNING, COMPLETING, SUSPENDED, STOPPED, SIGNALING, STAGE_OUT, RESIZING: Running;
* every end state: terminated. Succeeded needs all of: the job COMPLETED, the runner's exit
  code recorded by the script, that code 0, and no deadline kill. Anything else is Failed with
  the pod-level reason a Kubernetes pod would carry where there is one (``DeadlineExceeded``
  for the watchdog or Slurm's TIMEOUT/DEADLINE, ``Cancelled``, ``NodeFail``, ``Preempted``...)
  or the container's (``OOMKilled``, ``Error``);
* a job Slurm no longer knows and whose script recorded no exit: Failed, ``Vanished``, exit -1
  — never Succeeded, since nobody saw the runner's end.

Times in Slurm's output are the controller's local time without a zone; they are read in this
process's local zone, which is the submit host's (a site runs both on one zone, as Slurm's own
tools assume).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

# %i job id, %j name, %T state, %k comment (the run uid), %S start, %e end, %o the batch
# script's path, %r reason (last: the field that may hold spaces or the separator).
SQUEUE_FORMAT = "%i|%j|%T|%k|%S|%e|%o|%r"
_FIELDS = 8

PENDING_STATES = frozenset(
    {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"}
)
RUNNING_STATES = frozenset(
    {"RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT", "RESIZING"}
)
DEADLINE_REASON = "DeadlineExceeded"
VANISHED = "Vanished"
VANISHED_MESSAGE = (
    "the Slurm job of this execution is gone (unknown to squeue and scontrol) and its script "
    "recorded no exit: the runner's end was never seen"
)
NEVER_SEEN = -1  # the exit code when the runner's own was never seen
# End states, and the pod-level reason (or container reason, for OOM) each is reported with.
_POD_REASONS = {
    "CANCELLED": (
        "Cancelled",
        "the Slurm job was cancelled (scancel, or an administrator) before the runner ended",
    ),
    "TIMEOUT": (DEADLINE_REASON, "the Slurm job reached its time limit and was killed"),
    "DEADLINE": (DEADLINE_REASON, "the Slurm job reached its --deadline and was killed"),
    "NODE_FAIL": ("NodeFail", "the node of this Slurm job failed while it ran"),
    "PREEMPTED": ("Preempted", "the Slurm job was preempted"),
    "BOOT_FAIL": ("BootFail", "the node of this Slurm job failed to boot"),
    "REVOKED": ("Revoked", "the Slurm job was revoked (a federated sibling ran it)"),
}
END_STATES = frozenset({"COMPLETED", "FAILED", "OUT_OF_MEMORY", *_POD_REASONS})
WATCHDOG_MESSAGE = "the runner ran past its deadline of {}s and was killed"


@dataclass(frozen=True)
class QueueRow:
    """One job as ``squeue -o`` :data:`SQUEUE_FORMAT` lists it."""

    job_id: str
    name: str
    state: str
    comment: str
    start: datetime | None
    end: datetime | None
    script: str
    reason: str

    @property
    def ended(self) -> bool:
        return self.state in END_STATES

    @property
    def started(self) -> bool:
        return self.state in RUNNING_STATES or self.ended


def parse_rows(text: str) -> list[QueueRow]:
    """Every job line of ``squeue -h -o`` :data:`SQUEUE_FORMAT` output (others ignored)."""
    rows = []
    for line in text.splitlines():
        parts = line.strip().split("|", _FIELDS - 1)
        if len(parts) != _FIELDS or not parts[0]:
            continue
        job_id, name, state, comment, start, end, script, reason = parts
        # Slurm may decorate a state (``CANCELLED by 0`` in some outputs): the first word.
        word = state.split()[0] if state.split() else ""
        rows.append(
            QueueRow(
                job_id, name, word, comment, slurm_time(start), slurm_time(end), script, reason
            )
        )
    return rows


def slurm_time(text: str) -> datetime | None:
    """A Slurm time (``2026-12-01T21:42:19``, local) as UTC; None for N/A, Unknown, None."""
    text = text.strip()
    if not text or not text[0].isdigit():
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.astimezone(UTC)  # a naive time is read as local by astimezone


def slurm_exit_code(text: str) -> int | None:
    """Slurm's ``ExitCode=<code>:<signal>`` as one code, a signal as 128 + its number (what a
    shell or a container runtime reports for it); None when there is none."""
    code, _, signal = text.strip().partition(":")
    if not code.isdigit():
        return None
    if signal.isdigit() and int(signal) > 0:
        return 128 + int(signal)
    return int(code)


@dataclass(frozen=True)
class Ending:
    """How an execution ended, as :class:`~glimmer.engine.backend.Execution` reports it."""

    succeeded: bool
    exit_code: int
    reason: str = ""
    message: str = ""
    container_reason: str = ""
    container_message: str = ""


def ending(
    state: str,
    runner_exit: int | None,
    *,
    slurm_exit: int | None = None,
    deadline_kill: bool = False,
    deadline_seconds: int = 0,
) -> Ending:
    """The end of a job in end state ``state`` (see the module docstring). ``runner_exit`` is
    the code the script recorded (None: none), ``slurm_exit`` Slurm's ExitCode as
    :func:`slurm_exit_code` reads it, ``deadline_kill`` whether the script's watchdog fired."""
    code = runner_exit if runner_exit is not None else _fallback(slurm_exit)
    if deadline_kill:
        return Ending(False, code, DEADLINE_REASON, WATCHDOG_MESSAGE.format(deadline_seconds))
    if state in _POD_REASONS:
        reason, message = _POD_REASONS[state]
        return Ending(False, code, reason, message)
    if state == "OUT_OF_MEMORY":
        return Ending(
            False, code, container_reason="OOMKilled", container_message="Slurm: OUT_OF_MEMORY"
        )
    if runner_exit is None:
        return Ending(
            False,
            code,
            container_reason="Error",
            container_message=(
                f"the batch script ended (Slurm {state}, ExitCode {slurm_exit}) without "
                "recording the runner's exit code"
            ),
        )
    succeeded = state == "COMPLETED" and runner_exit == 0
    return Ending(succeeded, runner_exit, container_reason="Completed" if succeeded else "Error")


def vanished(runner_exit: int | None) -> Ending:
    """The end of a job Slurm no longer knows: the runner's recorded code when the script got
    to write it (then the end is an ordinary one), else Vanished."""
    if runner_exit is not None:
        succeeded = runner_exit == 0
        account = "Completed" if succeeded else "Error"
        return Ending(succeeded, runner_exit, container_reason=account)
    return Ending(False, NEVER_SEEN, VANISHED, VANISHED_MESSAGE)


def _fallback(slurm_exit: int | None) -> int:
    # Slurm's own 0 for a job whose runner never reported is no success to pass on.
    return slurm_exit if slurm_exit else NEVER_SEEN
