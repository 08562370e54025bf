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
Slurm node runs no new job at all. So the submit happens inside a window the nodes give
(:mod:`.job_submit`): the node is resumed for this run's reservation, the job is submitted with
``--reservation`` and waited for (bounded) until Slurm has allocated it, and the drain comes
back on leaving the window whatever happened. A job still pending then is left as it is: the
engine's scheduling grace judges it. A window costs one to two seconds of Slurm's own clock
however many jobs it holds, so :meth:`SlurmJobs.queue` records an execution's intent and holds
it, and :meth:`SlurmJobs.flush` submits everything held in ONE window; ``create_execution`` is
the two at once. The backend queues what a pass creates and flushes when the pass is done with
creating (:mod:`.pass_batch`); until then a held execution reads as pending, as a job just
submitted does. A held execution a crash loses has only its intent on disk and reads as
absent: the next engine creates it again.

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

import contextlib
import dataclasses
import math
import os
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from glimmer.backends.common.clock import SubstrateClock
from glimmer.backends.common.field_refs import FieldRefError
from glimmer.backends.common.files import locked, write_atomically, write_json
from glimmer.backends.common.specs import RecordSpecs, spec_to_json
from glimmer.backends.slurm.commands import Slurm, SlurmCommandError, records
from glimmer.backends.slurm.job_env import NodeHosts, role_node, runner_env
from glimmer.backends.slurm.job_files import JobDir, JobFiles
from glimmer.backends.slurm.job_script import (
    Job,
    ProbeUnsupported,
    probe_of,
    render,
    sbatch_argv,
)
from glimmer.backends.slurm.job_state import (
    PENDING_STATES,
    SQUEUE_FORMAT,
    Ending,
    QueueRow,
    ending,
    parse_rows,
    slurm_exit_code,
    vanished,
)
from glimmer.backends.slurm.job_submit import (
    PROBE_UNSUPPORTED,
    SUBMIT_REFUSED,
    Doors,
    NoDoors,
    await_allocations,
    host_now,
    in_flight,
    open_all,
    refusal,
    refused_end,
    rounds,
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
NAMES_PER_CALL = 1024  # job names per squeue call: about 64 KiB of names at most
UNRESOLVED_FIELD_REF = "FieldRefUnresolved"  # a valueFrom Slurm knows and cannot answer (§8.2)
# Re-exported: what callers and tests know this module for.
__all__ = ["Doors", "NoDoors", "SlurmJobs", "refusal", "role_node"]


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
        self.hosts = NodeHosts(slurm)
        self._specs = RecordSpecs()
        self._queued: dict[tuple[str, str], ExecutionSpec] = {}  # (namespace, name) -> spec

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
        """The runner's environment (:func:`.job_env.runner_env`; raises ``FieldRefError``)."""
        return runner_env(spec, self.hosts)

    def job(self, spec: ExecutionSpec, reservation: str | None = None) -> Job:
        """The batch job of ``spec`` (raises :class:`ProbeUnsupported`, ``FieldRefError``)."""
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
        """Create-if-absent, submitted before this returns (:meth:`queue`, then :meth:`flush`)."""
        self.queue(spec)
        self.flush()

    def queue(self, spec: ExecutionSpec) -> None:
        """Record the intent of ``spec`` (before anything is submitted) and hold it for the next
        :meth:`flush`. An execution submitted (or refused) before is left as it is; one that
        cannot run at all (a probe the script does not run) is recorded as ended at once."""
        files = self.files(spec.namespace, spec.run, spec.name)
        with locked(files.lock):
            record = files.read()
            if record is not None and (record.get("job_id") or record.get("ended")):
                return  # submitted (or refused) before: left as it is
            if record is None:
                record = {"spec": spec_to_json(spec), "created_at": host_now().isoformat()}
                try:
                    job = self.job(spec)
                except (ProbeUnsupported, FieldRefError) as e:
                    write_json(files.record, {**record, "ended": _cannot_run(e)})
                    return
                record["probe"] = job.probe is not None
                write_json(files.record, record)  # the intent, before anything is submitted
        self._queued[(spec.namespace, spec.name)] = spec

    def queued(self) -> list[ExecutionSpec]:
        """The executions held for the next :meth:`flush`, in the order they were queued."""
        return list(self._queued.values())

    def drop(self, namespace: str, name: str) -> None:
        """Hold ``name`` no longer: it is being deleted before it was submitted."""
        self._queued.pop((namespace, name), None)

    def flush(self) -> None:
        """Submit every execution held, in one window for all of their nodes (one per round
        where a node has two). Under each execution's lock, in name order: one that was
        submitted meanwhile is left as it is, a job found by its name is adopted, an sbatch a
        killed engine may still have running is waited for; the rest are submitted. A
        transient sbatch failure stops the round (the window still closes) and is raised once
        it has: what was not submitted reads as absent, and the engine creates it again."""
        held, self._queued = list(self._queued.values()), {}
        if not held:
            return
        batch = sorted(
            ((spec, self.files(spec.namespace, spec.run, spec.name)) for spec in held),
            key=lambda item: str(item[1].record),
        )
        with contextlib.ExitStack() as locks:
            for _, files in batch:
                locks.enter_context(locked(files.lock))
            due = self._due(batch)
            for window in rounds(due, lambda item: item[0].node):
                self._submit_window(window)

    def _due(
        self, batch: Sequence[tuple[ExecutionSpec, JobFiles]]
    ) -> list[tuple[ExecutionSpec, JobFiles, dict[str, Any], Job]]:
        """What of ``batch`` (locked) is still to be submitted, its script written; ONE squeue
        per run uid for the jobs a crash between sbatch and the record may have left."""
        by_uid: dict[str, dict[str, JobFiles]] = {}
        for spec, files in batch:
            by_uid.setdefault(spec.run_uid, {})[spec.name] = files
        rows = {uid: self._rows(names, uid) for uid, names in by_uid.items()}
        due = []
        for spec, files in batch:
            record = files.read()
            if record is None or record.get("job_id") or record.get("ended"):
                continue  # deleted, or submitted (refused) meanwhile
            found = _newest(_ours(rows[spec.run_uid].get(spec.name, []), files))
            if found is not None:  # submitted before the record was updated (a crash)
                write_json(files.record, {**record, "job_id": found.job_id})
                continue
            if in_flight(record, self.slurm.timeout):
                continue  # an sbatch of a process that died may still land: not a second one
            try:
                job = self.job(spec)
            except FieldRefError as e:  # the node's address stopped resolving meanwhile
                write_json(files.record, {**record, "ended": _cannot_run(e)})
                continue
            write_atomically(files.script, render(job))
            files.script.chmod(0o755)
            due.append((spec, files, record, job))
        return due

    def _submit_window(
        self, window: Sequence[tuple[ExecutionSpec, JobFiles, dict[str, Any], Job]]
    ) -> None:
        owners = {spec.node: _owner(spec) for spec, _, _, _ in window}
        failure: SlurmCommandError | None = None
        with open_all(self.doors, owners) as reservations:
            allocating: list[str] = []
            for spec, files, record, job in window:
                reservation = reservations.get(spec.node)
                if reservation is not None:
                    job = dataclasses.replace(job, reservation=reservation)
                job_id, failure = self._submit(files, record, job)
                if failure is not None:
                    break  # the controller is in trouble: the rest are created again later
                if reservation is not None and job_id is not None:
                    allocating.append(job_id)
            if allocating:
                await_allocations(self.slurm, allocating, self.allocation_wait)
        if failure is not None:
            raise failure

    def _submit(
        self, files: JobFiles, record: dict[str, Any], job: Job
    ) -> tuple[str | None, SlurmCommandError | None]:
        """sbatch ``job``, its record marked ``submitting`` first and given the job id (or the
        lasting refusal) after: the job id (None: refused), or a transient failure, the mark
        taken back."""
        marked = {**record, "submitting": host_now().isoformat()}
        write_json(files.record, marked)
        done = self.slurm.call(*sbatch_argv(job), check=False)
        said = refusal(done.returncode, done.stderr)
        if said is not None:  # the controller will never take this job as asked
            ended = refused_end(host_now(), SUBMIT_REFUSED, f"sbatch refused it: {said}")
            write_json(files.record, {**marked, "ended": ended})
            return None, None
        if done.returncode != 0:  # transient: the engine's next pass tries again
            write_json(files.record, record)
            said = (done.stderr or done.stdout).strip() or "no message"
            return None, SlurmCommandError(f"sbatch: exit {done.returncode}: {said}")
        job_id = done.stdout.strip().split(";")[0]
        write_json(files.record, {**marked, "job_id": job_id})
        return job_id, None

    def _reopen(self, stuck: Sequence[tuple[JobFiles, ExecutionSpec, str]]) -> None:
        """Open the nodes' window again for jobs of ours that wait on their drained nodes (all
        of them in one window).

        An engine killed inside a window leaves its job submitted and the node resumed; the
        engine that resumes (or the reaper) drains the node again, and a job Slurm had not yet
        allocated would then wait on it until the engine's scheduling grace calls it overdue.
        When the drain is this run's, the window opens as it did for the submit (the job holds
        the run's reservation) until Slurm allocates the job; a drain that is not ours opens
        nothing, and the job waits as it should."""
        ordered = sorted(stuck, key=lambda item: str(item[0].record))
        with contextlib.ExitStack() as locks:
            for files, _, _ in ordered:
                locks.enter_context(locked(files.lock))
            for window in rounds(ordered, lambda item: item[1].node):
                owners = {spec.node: _owner(spec) for _, spec, _ in window}
                with open_all(self.doors, owners) as reservations:
                    ids = [job for _, spec, job in window if reservations.get(spec.node)]
                    if ids:
                        await_allocations(self.slurm, ids, self.allocation_wait)

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
        stuck: list[tuple[JobFiles, ExecutionSpec, str]] = []
        for files, record in owned:
            execution = self._observe(files, record, rows, stuck)
            if execution is not None:
                found.append(execution)
        if stuck:
            self._reopen(stuck)
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
        self,
        files: JobFiles,
        record: dict[str, Any],
        rows: Mapping[str, list[QueueRow]],
        stuck: list[tuple[JobFiles, ExecutionSpec, str]],
    ) -> Execution | None:
        """The execution of ``record`` as Slurm shows it; a job of ours pending on its drained
        node is added to ``stuck``, for the window to open again."""
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
                if (spec.namespace, spec.name) in self._queued:
                    return base  # held for this process's next flush: as good as submitted
                return None  # an intent nothing was ever submitted for (module docstring)
            end = vanished(files.runner_exit())
            finished = files.exited_at() or host_now()
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
            return self._record_end(files, base, end, row.start, row.end or host_now())
        if row.state in PENDING_STATES:
            reason = row.reason if row.reason not in ("", "None", "(null)") else ""
            if reason.startswith(NODE_NOT_AVAILABLE):
                stuck.append((files, spec, row.job_id))
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
        self.drop(namespace, name)  # never submitted, if it was still held
        files = self.dir.find(namespace, name)
        if files is not None:
            self._delete([files])

    def delete_owned(self, namespace: str, run: str, run_uid: str) -> None:
        """Delete every execution of the run ``run`` with uid ``run_uid``: one scancel and one
        wait for all of them, however many nodes the run had."""
        for spec in self.queued():
            if (spec.namespace, spec.run, spec.run_uid) == (namespace, run, run_uid):
                self.drop(namespace, spec.name)
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


def _cannot_run(e: Exception) -> dict[str, Any]:
    """The end of an execution that cannot run as asked: an Error attempt, never a pass."""
    reason = UNRESOLVED_FIELD_REF if isinstance(e, FieldRefError) else PROBE_UNSUPPORTED
    return refused_end(host_now(), reason, str(e))


def _owner(spec: ExecutionSpec) -> str:
    """The run a node must be cordoned for to open for ``spec``: ``<namespace>/<name>/<uid>``."""
    return f"{spec.namespace}/{spec.run}/{spec.run_uid}"


def _replace(execution: Execution, **changes: Any) -> Execution:
    return dataclasses.replace(execution, **changes)
