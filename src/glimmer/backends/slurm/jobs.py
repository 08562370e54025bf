"""Executions as Slurm batch jobs: one job per execution, pinned to its node.

``create_execution`` writes the execution's record (``<state>/executions/<ns>/<run>/<name>.json``:
the spec as the engine asked it, the creation time) BEFORE it submits — the intent — then the
batch script (:mod:`.job_script`), then ``sbatch``, then the record again with the job id. The
state directory must be on a filesystem the nodes share (as Slurm output files usually are):
the script, its output file and the files it writes back (exit code, readiness, deadline kill)
live beside the record.

Create-if-absent: a record with a job id, or a job found by its name (``squeue -t all -n``:
Slurm lists ended jobs for MinJobAge, 300 s by default), means the execution exists, so a
resumed engine never submits twice; a crash between ``sbatch`` and the record's update is found
by name. Found by name means: the engine's deterministic execution name, the run uid in the
job's ``--comment``, and this execution's own script (another state directory submitting the
same run is not this one). A record with no job id and no such job reads as absent: nothing
ever ran under it, and the engine's next create submits it — unless its sbatch began less than
a call's timeout ago (an engine killed during sbatch leaves the sbatch running: it may still
land, and is then found by name). What cannot run at all — a readiness probe of a kind the
script does not run, a job sbatch refuses for good (an invalid gres, partition or time limit:
:func:`refusal`) — is recorded as ended at once, exit -1: an Error attempt, never a pass that
stops and retries forever.

The engine cordons a node (drains it) before it creates the node's execution, and a drained
Slurm node runs no new job at all. So the submit happens inside ``doors.opened(node, owner)``,
a window the nodes give (:class:`Doors`): the node is resumed for this run's reservation, the job
is submitted with ``--reservation`` and waited for (bounded) until Slurm has allocated it, and
the drain comes back on leaving the window whatever happened. A job still pending then is left
as it is: the engine's scheduling grace judges it.

Observation makes ONE ``squeue`` call per pass, for the run's executions not yet seen to end
(by name), and asks ``scontrol show job`` only about a job that ended without its script
recording the runner's exit code. Every end observed is written into the record, so every later
read agrees and asks Slurm nothing (:mod:`.job_state` has the mapping).

Rendezvous: the Backend protocol's :meth:`SlurmJobs.rendezvous_address` has no node argument and
must be pure, while on Slurm the address of a role is the hostname of the node it was placed
on. The spec carries what is needed — the seat's peer role, the unit's nodes (server = the
first, client = the second, rank i = the i-th) and the variable that gets the address — so
``create_execution`` puts the peer node's hostname (Slurm's NodeHostname, asked once per node)
into that variable of the script's environment, and the engine stays as it is. The record
keeps the spec as the engine asked it.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from glimmer.backends.common.clock import SubstrateClock
from glimmer.backends.common.files import locked, write_atomically, write_json
from glimmer.backends.common.specs import RecordSpecs, spec_to_json
from glimmer.backends.slurm.commands import Slurm, SlurmCommandError, records
from glimmer.backends.slurm.job_files import JobDir, JobFiles
from glimmer.backends.slurm.job_script import (
    Job,
    ProbeUnsupported,
    probe_of,
    render,
    sbatch_argv,
)
from glimmer.backends.slurm.job_state import (
    NEVER_SEEN,
    PENDING_STATES,
    SQUEUE_FORMAT,
    Ending,
    QueueRow,
    ending,
    parse_rows,
    slurm_exit_code,
    vanished,
)
from glimmer.engine.backend import (
    ExecPhase,
    Execution,
    ExecutionIndex,
    ExecutionSpec,
    LogUnavailable,
    Rendezvous,
)

ALLOCATION_WAIT = 5.0  # seconds a submit waits inside the node's window for an allocation
STOP_WAIT = 10.0  # seconds a delete waits for a cancelled job to end before removing files
POLL = 0.1
# The reason squeue gives a job whose node is drained or down (ReqNodeNotAvail, UnavailableNodes:..)
NODE_NOT_AVAILABLE = "ReqNodeNotAvail"
SUBMIT_MARGIN = 5.0  # seconds beyond the call timeout an orphaned sbatch is waited for
NAMES_PER_CALL = 1024  # job names per squeue call: about 64 KiB of names at most
PARENT_ENV = ("PATH", "HOME", "LANG")  # what a runner inherits from glimmer's environment
PROBE_UNSUPPORTED = "ProbeUnsupported"
SUBMIT_REFUSED = "SubmitRefused"
# How sbatch words a lasting refusal, and the passing troubles it may also report.
REFUSAL_WORDS = ("invalid", "not available", "denied", "violates", "exceeds", "not allowed")
TRANSIENT_WORDS = ("unable to contact", "timed out", "temporarily", "connection", "try again")


class Doors(Protocol):
    """The window in which a node drained by this run takes this run's job."""

    def opened(self, node: str, owner: str | None = None) -> AbstractContextManager[str | None]:
        """Open ``node`` for the block: the reservation to submit into, or None when there is
        nothing to open (the node is not drained for ``owner``'s run, ``<ns>/<name>/<uid>``)."""
        ...


class NoDoors:
    """Nodes that are never drained by the run (a cluster driven without cordons, tests)."""

    def opened(self, node: str, owner: str | None = None) -> AbstractContextManager[str | None]:
        return nullcontext(None)


class SlurmJobs:
    """The :class:`~glimmer.engine.backend.Executions` of a Slurm cluster, recorded under
    ``state_dir/executions``. ``runner_command`` is how the runner is started on the nodes
    (the kind follows), ``partition`` the partition jobs go to (None: the default)."""

    def __init__(
        self,
        state_dir: Path,
        slurm: Slurm,
        clock: SubstrateClock,
        *,
        runner_command: Sequence[str],
        partition: str | None,
        doors: Doors | None = None,
        allocation_wait: float = ALLOCATION_WAIT,
        stop_wait: float = STOP_WAIT,
    ) -> None:
        self.root = Path(state_dir).absolute() / "executions"
        self.dir = JobDir(self.root)
        self.slurm = slurm
        self.clock = clock
        self.runner_command = tuple(runner_command)
        self.partition = partition
        self.doors: Doors = doors if doors is not None else NoDoors()
        self.allocation_wait = allocation_wait
        self.stop_wait = stop_wait
        self._hostnames: dict[str, str] = {}
        self._specs = RecordSpecs()

    # -- files ----------------------------------------------------------------------------------
    def files(self, namespace: str, run: str, name: str) -> JobFiles:
        return self.dir.of(namespace, run, name)

    # -- launching ------------------------------------------------------------------------------
    def argv(self, spec: ExecutionSpec) -> list[str]:
        """The runner's command line, as the local substrate builds it: the test's command when
        it names one, else the runner command with the kind; the test's args after either."""
        if spec.command:
            return [*spec.command, *spec.args]
        return [*self.runner_command, spec.kind, *spec.args]

    def env(self, spec: ExecutionSpec) -> dict[str, str]:
        """The runner's environment: PATH, HOME and LANG from glimmer's own where the spec sets
        none of them, then the spec's, the rendezvous address resolved to the peer's host."""
        env = {name: os.environ[name] for name in PARENT_ENV if name in os.environ}
        env.update(dict(spec.env))
        seat = spec.seat
        if seat is not None and seat.address_env:
            node = role_node(spec, seat.peer_role)
            if node is not None:
                env[seat.address_env] = self.hostname(node)
        return env

    def hostname(self, node: str) -> str:
        """The host name a node is reached at (Slurm's NodeHostname), asked once per node."""
        if node not in self._hostnames:
            found = records(self.slurm.run("scontrol", "show", "node", "-o", node))
            name = found[0].get("NodeHostname", "") if found else ""
            self._hostnames[node] = name if name and name != "(null)" else node
        return self._hostnames[node]

    def job(self, spec: ExecutionSpec, reservation: str | None = None) -> Job:
        """The batch job of ``spec`` (raises :class:`ProbeUnsupported`)."""
        runner = spec.test_spec.runner
        return Job(
            name=spec.name,
            node=spec.node,
            run_uid=spec.run_uid,
            argv=tuple(self.argv(spec)),
            env=tuple(self.env(spec).items()),
            deadline_seconds=math.ceil(self.clock.host_seconds(spec.deadline_seconds)),
            files=self.files(spec.namespace, spec.run, spec.name),
            partition=self.partition,
            reservation=reservation,
            gpus=spec.resources.gpus,
            probe=probe_of(runner.readiness_probe if runner else None),
            header=f": run {spec.namespace}/{spec.run} (uid {spec.run_uid}), test {spec.test}",
        )

    def create_execution(self, spec: ExecutionSpec) -> None:
        files = self.files(spec.namespace, spec.run, spec.name)
        with locked(files.lock):
            record = files.read()
            if record is not None and (record.get("job_id") or record.get("ended")):
                return  # submitted (or refused) before: left as it is
            if record is None:
                record = {"spec": spec_to_json(spec), "created_at": _host_now().isoformat()}
                try:
                    job = self.job(spec)
                except ProbeUnsupported as e:
                    write_json(
                        files.record,
                        {**record, "ended": _refused(_host_now(), PROBE_UNSUPPORTED, str(e))},
                    )
                    return
                record["probe"] = job.probe is not None
                write_json(files.record, record)  # the intent, before anything is submitted
            else:
                job = self.job(spec)
            found = self._by_name(files, spec.name, spec.run_uid)
            if found is not None:  # submitted before the record was updated (a crash)
                write_json(files.record, {**record, "job_id": found.job_id})
                return
            if self._in_flight(record):
                return  # an sbatch of a process that died may still land: not a second one
            record["submitting"] = _host_now().isoformat()
            write_json(files.record, record)
            write_atomically(files.script, render(job))
            files.script.chmod(0o755)
            owner = f"{spec.namespace}/{spec.run}/{spec.run_uid}"
            with self.doors.opened(spec.node, owner) as reservation:
                submit = job if reservation is None else self.job(spec, reservation)
                done = self.slurm.call(*sbatch_argv(submit), check=False)
                said = refusal(done.returncode, done.stderr)
                if said is not None:  # the controller will never take this job as asked
                    ended = _refused(_host_now(), SUBMIT_REFUSED, f"sbatch refused it: {said}")
                    write_json(files.record, {**record, "ended": ended})
                    return
                if done.returncode != 0:  # transient: the engine's next pass tries again
                    write_json(files.record, {k: v for k, v in record.items() if k != "submitting"})
                    said = (done.stderr or done.stdout).strip() or "no message"
                    raise SlurmCommandError(f"sbatch: exit {done.returncode}: {said}")
                job_id = done.stdout.strip().split(";")[0]
                write_json(files.record, {**record, "job_id": job_id})
                if reservation is not None:
                    self._await_allocation(job_id)

    def _in_flight(self, record: Mapping[str, Any]) -> bool:
        """Whether the record's last sbatch may still be running: it was started less than a
        call's timeout (plus a margin) ago by a process that did not live to record its answer.
        A SIGKILLed engine leaves its sbatch child running; submitting again before that child
        is done could submit the execution twice."""
        began = record.get("submitting")
        if not began:
            return False
        age = (_host_now() - datetime.fromisoformat(str(began))).total_seconds()
        return age < self.slurm.timeout + SUBMIT_MARGIN

    def _by_name(self, files: JobFiles, name: str, run_uid: str) -> QueueRow | None:
        """The newest job of this execution: its name, its run's uid and its script."""
        return _newest(_ours(self._rows({name: files}, run_uid).get(name, []), files))

    def _reopen(self, files: JobFiles, spec: ExecutionSpec, job_id: str) -> None:
        """Open the node's window again for a job of ours that waits on its drained node.

        An engine killed inside a window leaves its job submitted and the node resumed; the
        engine that resumes (or the reaper) drains the node again, and a job Slurm had not yet
        allocated would then wait on it until the engine's scheduling grace calls it overdue.
        When the drain is this run's, the window opens as it did for the submit (the job holds
        the run's reservation) until Slurm allocates the job; a drain that is not ours opens
        nothing, and the job waits as it should."""
        owner = f"{spec.namespace}/{spec.run}/{spec.run_uid}"
        with locked(files.lock), self.doors.opened(spec.node, owner) as reservation:
            if reservation is not None:
                self._await_allocation(job_id)

    def _await_allocation(self, job_id: str) -> None:
        """Until Slurm has allocated the job (running, configuring, or already ended), at most
        :attr:`allocation_wait` seconds: the node's window closes after this."""
        until = time.monotonic() + self.allocation_wait
        while time.monotonic() < until:
            state = self.slurm.run("squeue", "-h", "-t", "all", "-j", job_id, "-o", "%T")
            if state.strip() and state.split()[0] != "PENDING":
                return
            time.sleep(POLL)

    # -- observing ------------------------------------------------------------------------------
    def executions(self, namespace: str, run: str, run_uid: str) -> ExecutionIndex:
        owned: list[tuple[JobFiles, dict[str, Any]]] = []
        for files in self.dir.of_run(namespace, run):
            record = files.read()
            if record is not None and record["spec"].get("run_uid") == run_uid:
                owned.append((files, record))
        live = {r["spec"]["name"]: files for files, r in owned if not r.get("ended")}
        rows = self._rows(live, run_uid)
        found = []
        for files, record in owned:
            execution = self._observe(files, record, rows)
            if execution is not None:
                found.append(execution)
        return ExecutionIndex(found)

    def _rows(self, names: Mapping[str, JobFiles], run_uid: str) -> dict[str, list[QueueRow]]:
        """The jobs of the executions ``names`` (name -> files): ONE squeue call (none when
        every execution has ended), or one per :data:`NAMES_PER_CALL` names, since one argument
        may not exceed 128 KiB on Linux. Only jobs of the run's uid (their comment) are kept."""
        listed = list(names)
        rows: dict[str, list[QueueRow]] = {}
        for first in range(0, len(listed), NAMES_PER_CALL):
            chunk = ",".join(listed[first : first + NAMES_PER_CALL])
            text = self.slurm.run("squeue", "-h", "-t", "all", "-n", chunk, "-o", SQUEUE_FORMAT)
            for row in parse_rows(text):
                if row.name in names and row.comment == run_uid:
                    rows.setdefault(row.name, []).append(row)
        return rows

    def _observe(
        self, files: JobFiles, record: dict[str, Any], rows: Mapping[str, list[QueueRow]]
    ) -> Execution | None:
        spec = self._specs.of(record)
        base = Execution(
            spec=spec,
            phase=ExecPhase.PENDING,
            created_at=self._time(record["created_at"]),
        )
        if record.get("ended"):
            return self._ended(base, record["ended"])
        job_id = record.get("job_id")
        candidates = rows.get(spec.name, [])
        row = next((r for r in candidates if r.job_id == job_id), None)
        if row is None:
            row = _newest(_ours(candidates, files))
        if row is None:
            if not job_id:
                return None  # an intent nothing was ever submitted for (module docstring)
            end = vanished(files.runner_exit())
            finished = files.exited_at() or _host_now()
            return self._record_end(files, base, end, None, finished)
        if not job_id:  # found by name: a crash came between sbatch and the record
            self._adopt(files, row.job_id)
        if row.ended:
            slurm_exit = None if files.exit.exists() else self._slurm_exit(row.job_id)
            end = ending(
                row.state,
                files.runner_exit(),
                slurm_exit=slurm_exit,
                deadline_kill=files.deadline.exists(),
                deadline_seconds=spec.deadline_seconds,
            )
            return self._record_end(files, base, end, row.start, row.end or _host_now())
        if row.state in PENDING_STATES:
            reason = row.reason if row.reason not in ("", "None", "(null)") else ""
            if reason.startswith(NODE_NOT_AVAILABLE):
                self._reopen(files, spec, row.job_id)
            return _replace(base, scheduler_message=reason)
        ready = not record.get("probe") or files.ready.exists()
        started = self._time(row.start.isoformat()) if row.start else None
        return _replace(base, phase=ExecPhase.RUNNING, started_at=started, ready=ready)

    def _slurm_exit(self, job_id: str) -> int | None:
        done = self.slurm.call("scontrol", "show", "job", "-o", job_id, check=False)
        found = records(done.stdout) if done.returncode == 0 else []
        return slurm_exit_code(found[0].get("ExitCode", "")) if found else None

    def _record_end(
        self,
        files: JobFiles,
        base: Execution,
        end: Ending,
        started: datetime | None,
        finished: datetime,
    ) -> Execution | None:
        """Write the end observed into the record (every later read then agrees) and return the
        execution as ended; None when the record was deleted meanwhile."""
        ended = {
            "succeeded": end.succeeded,
            "exit_code": end.exit_code,
            "reason": end.reason,
            "message": end.message,
            "container_reason": end.container_reason,
            "container_message": end.container_message,
            "started_at": (started or finished).isoformat(),
            "finished_at": finished.isoformat(),
        }
        with locked(files.lock):
            record = files.read()
            if record is None or record.get("deleting"):
                return None
            if not record.get("ended"):  # a concurrent reader may have written it first
                record["ended"] = ended
                write_json(files.record, record)
        return self._ended(base, record["ended"])

    def _time(self, text: str) -> datetime:
        """A host time the record (or Slurm) holds, on the substrate's clock."""
        return self.clock.from_host(datetime.fromisoformat(text))

    def _ended(self, base: Execution, ended: Mapping[str, Any]) -> Execution:
        return _replace(
            base,
            phase=ExecPhase.SUCCEEDED if ended["succeeded"] else ExecPhase.FAILED,
            started_at=self._time(ended["started_at"]),
            finished_at=self._time(ended["finished_at"]),
            exit_code=int(ended["exit_code"]),
            reason=str(ended.get("reason") or ""),
            message=str(ended.get("message") or ""),
            container_reason=str(ended.get("container_reason") or ""),
            container_message=str(ended.get("container_message") or ""),
        )

    def _adopt(self, files: JobFiles, job_id: str) -> None:
        """Record the job found by name as the execution's (unless a writer got there first)."""
        with locked(files.lock):
            record = files.read()
            if record is not None and not record.get("job_id") and not record.get("deleting"):
                write_json(files.record, {**record, "job_id": job_id})

    # -- stopping -------------------------------------------------------------------------------
    def delete_execution(self, namespace: str, name: str) -> None:
        files = self.dir.find(namespace, name)
        if files is not None:
            self._delete([files])

    def delete_owned(self, namespace: str, run: str, run_uid: str) -> None:
        """Delete every execution of the run ``run`` with uid ``run_uid``: one scancel and one
        wait for all of them, however many nodes the run had."""
        owned = []
        for files in self.dir.of_run(namespace, run):
            record = files.read()
            if record is not None and record["spec"].get("run_uid") == run_uid:
                owned.append(files)
        self._delete(owned)

    def _delete(self, doomed: Sequence[JobFiles]) -> None:
        live: list[tuple[JobFiles, dict[str, Any]]] = []
        marked: list[JobFiles] = []
        for files in doomed:
            with locked(files.lock):
                record = files.read()
                if record is None:
                    continue
                # Marked first: a crash before the files go leaves a record a later delete
                # finishes, and no reader records an end for it meanwhile.
                write_json(files.record, {**record, "deleting": True})
            marked.append(files)
            if not record.get("ended"):
                live.append((files, record))
        if live:
            self._cancel(live)
        for files in marked:
            files.remove()

    def _cancel(self, records: Sequence[tuple[JobFiles, Mapping[str, Any]]]) -> None:
        """scancel the jobs of ``records`` and wait (bounded) until none is active any more,
        so that no cancelled script writes its files after they were removed."""
        run_uid = str(records[0][1]["spec"].get("run_uid", ""))
        names = {str(record["spec"]["name"]): files for files, record in records}
        ids = [str(record["job_id"]) for _, record in records if record.get("job_id")]
        if len(ids) < len(records):  # a crash left some job unrecorded: found by name
            found = self._rows(names, run_uid)
            ids += [r.job_id for name, rows in found.items() for r in _ours(rows, names[name])]
        if ids:
            self.slurm.run("scancel", *sorted(set(ids)))
        until = time.monotonic() + self.stop_wait
        while time.monotonic() < until:
            left = self._rows(names, run_uid)
            if not any(not row.ended for rows in left.values() for row in rows):
                return
            time.sleep(POLL)

    def read_log(self, namespace: str, name: str) -> str:
        files = self.dir.find(namespace, name)
        if files is None:
            raise LogUnavailable(f"execution {name} not found")
        try:
            return files.log.read_text(errors="replace")
        except FileNotFoundError:
            raise LogUnavailable(
                f"execution {name} has no output file yet ({files.log}: the job never started, "
                "or the state directory is not shared with its node)"
            ) from None

    # -- rendezvous -----------------------------------------------------------------------------
    def ensure_rendezvous(self, service: Rendezvous) -> None:
        """Nothing to create: a role is reached at the hostname of the node it runs on."""

    def rendezvous_address(self, namespace: str, rendezvous: str, role: str) -> str:
        """A name for the role within its rendezvous; ``create_execution`` replaces it with the
        hostname of the role's node (see the module docstring: this call cannot know it)."""
        return f"{role}.{rendezvous}"


def role_node(spec: ExecutionSpec, role: str) -> str | None:
    """The node ``role`` of the spec's unit runs on: a Pair's server the unit's first node, its
    client the second, Group rank i the i-th (engine/pair_unit.py, group_unit.py)."""
    nodes = spec.unit_nodes
    index: int | None = None
    if role == "server":
        index = 0
    elif role == "client":
        index = 1
    elif role.startswith("rank-") and role[5:].isdigit():
        index = int(role[5:])
    return nodes[index] if index is not None and index < len(nodes) else None


def _ours(rows: Sequence[QueueRow], files: JobFiles) -> list[QueueRow]:
    """The jobs among ``rows`` (the execution's name and run uid) that run ITS script: a job
    is adopted by name only then, so another state directory submitting the same run (a copy,
    a test reusing a name and uid within MinJobAge) is never taken for this one. A job whose
    id the record holds needs no such check (the state directory may be reached by another
    path now)."""
    mine = os.path.realpath(files.script)
    return [row for row in rows if os.path.realpath(row.script) == mine]


def _newest(rows: Sequence[QueueRow]) -> QueueRow | None:
    return max(rows, key=lambda r: int(r.job_id)) if rows else None


def refusal(returncode: int, stderr: str) -> str | None:
    """What sbatch said when it refused a job for good (an invalid gres, partition, node,
    reservation or time limit, a policy it violates), or None: accepted, or failed in a way
    another try may not (the controller unreachable, busy, a timeout). A refusal taken for
    transient would leave the run waiting for a job that never comes; one taken for a refusal
    only costs an Error attempt, so the test is the words Slurm uses for the lasting kind."""
    if returncode == 0:
        return None
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = lines[-1] if lines else ""
    text = said.lower()
    if any(word in text for word in TRANSIENT_WORDS):
        return None
    if any(word in text for word in REFUSAL_WORDS):
        return said.removeprefix("sbatch: error: ")
    return None


def _refused(now: datetime, reason: str, message: str) -> dict[str, Any]:
    """The end of an execution refused before anything ran: an Error attempt (exit -1, never
    ran), as the local substrate reports what it cannot run."""
    return {
        "succeeded": False,
        "exit_code": NEVER_SEEN,
        "reason": "",
        "message": "",
        "container_reason": reason,
        "container_message": message,
        "started_at": now.isoformat(),
        "finished_at": now.isoformat(),
    }


def _host_now() -> datetime:
    return datetime.now(UTC)


def _replace(execution: Execution, **changes: Any) -> Execution:
    return dataclasses.replace(execution, **changes)
