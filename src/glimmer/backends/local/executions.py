"""Executions as processes on this host, each under a detached supervisor
(:mod:`.supervise`), each described by its record (:mod:`.records`).

``create_execution`` writes the record (the claim: spec, launch request, creation time) and
spawns a supervisor, which runs the runner and fills the record in. A record is read back as an
:class:`~glimmer.engine.backend.Execution`:

* not started yet (no runner recorded) and its supervisor alive or not yet there: Pending;
* started and its supervisor alive: Running (and Ready: nothing here probes readiness, as a
  pod without a readiness probe is Ready once its containers run);
* an exit recorded: Succeeded on 0, Failed otherwise; a deadline kill is ``DeadlineExceeded``;
* a supervisor gone without an exit recorded: Failed, reason ``Vanished`` — never Succeeded,
  since nobody saw the runner's end (a runner it left behind is stopped when that is read).

A record whose supervisor never claimed it within :data:`CLAIM_GRACE` host seconds was left by a
process killed between writing it and spawning the supervisor: nothing ever ran under it, so it
reads as absent, and the engine's next create of that name spawns the supervisor it lacks.

Under a container runtime (:mod:`.runtimes`) the supervisor runs the runtime's client with the
§8.2 command line (:mod:`.containers`) instead of the runner; the record keeps the runtime and
the container's name, so a stop — by the supervisor, by a delete, or by a later glimmer that
finds the supervisor gone — also removes the container. A runtime that does not answer, or a
container without an image, is recorded as ended at once (exit -1, never ran): an Error
attempt, with no supervisor.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from glimmer.backends.common.specs import RecordSpecs, spec_to_json
from glimmer.backends.local import field_refs
from glimmer.backends.local.clock import SubstrateClock
from glimmer.backends.local.containers import (
    ContainerRuntime,
    DeviceScan,
    asks_memlock,
    char_devices,
    container_name,
)
from glimmer.backends.local.procs import ProcessId, alive, stop
from glimmer.backends.local.records import RecordDir, RecordPath, now_text, parse_time
from glimmer.backends.local.runtimes import PROCESS, RuntimeChoice, Unavailable
from glimmer.backends.local.supervise import DEADLINE_REASON, remove_container
from glimmer.engine.backend import (
    ExecPhase,
    Execution,
    ExecutionIndex,
    ExecutionSpec,
    LogUnavailable,
    Rendezvous,
)

CLAIM_GRACE = 5.0  # host seconds a supervisor may take to claim its record
STOP_GRACE = 1.0  # host seconds between SIGTERM and SIGKILL
PARENT_ENV = ("PATH", "HOME", "LANG")  # what a runner inherits from glimmer's environment
VANISHED = "Vanished"
VANISHED_MESSAGE = (
    "the supervisor of this execution is gone and recorded no exit (killed, or the host "
    "rebooted); the runner's end was never seen"
)
POD_REASONS = (DEADLINE_REASON, VANISHED)
RUNTIME_UNAVAILABLE = "RuntimeUnavailable"
NO_IMAGE = "NoImage"
NO_IMAGE_MESSAGE = (
    'test "{test}": no image for kind "{kind}"; give runner.image or run without a container '
    "runtime"
)
UNRESOLVED_FIELD_REF = "FieldRefUnresolved"  # a valueFrom this host knows and cannot answer
NEVER_RAN = -1  # the exit code of an execution refused before anything ran (§3.1)
SUPERVISOR_MODULE = "glimmer.backends.local.supervise"


def default_runner_command() -> tuple[str, ...]:
    """``glimmer-runner`` from the same install as this interpreter (the kind follows)."""
    return (str(Path(sys.executable).parent / "glimmer-runner"),)


def _identity(value: object) -> ProcessId | None:
    return ProcessId.from_json(value)


class ProcessExecutions:
    """The :class:`~glimmer.engine.backend.Executions` of this host, under ``root``.

    ``runtime`` is ``process`` (each runner a plain process), ``auto``, ``docker``, ``podman``
    or ``nerdctl`` (:mod:`.runtimes`); ``runtime_path`` is where runtime programs are looked up
    (default: PATH) and ``device_scan`` how the devices of a mounted host path are found
    (:mod:`.containers`) — both for tests."""

    def __init__(
        self,
        root: Path,
        clock: SubstrateClock,
        runner_command: Sequence[str] | None = None,
        *,
        stop_grace: float = STOP_GRACE,
        runtime: str = PROCESS,
        runtime_path: str | None = None,
        device_scan: DeviceScan = char_devices,
    ) -> None:
        self.records = RecordDir(root)
        self.clock = clock
        self.runner_command = tuple(runner_command or default_runner_command())
        self.stop_grace = stop_grace
        self.runtime = RuntimeChoice(runtime, runtime_path)
        self.device_scan = device_scan
        self._spawned: list[subprocess.Popen[bytes]] = []
        self._specs = RecordSpecs()

    # -- launching ------------------------------------------------------------------------------
    def argv(self, spec: ExecutionSpec) -> list[str]:
        """The runner's command line: the test's own command when it names one, else the runner
        command with the kind (``glimmer-runner <kind>``); the test's args after either."""
        if spec.command:
            return [*spec.command, *spec.args]
        return [*self.runner_command, spec.kind, *spec.args]

    def env(self, spec: ExecutionSpec) -> dict[str, str]:
        """The spec's environment, plus PATH, HOME and LANG from glimmer's own where it sets
        none of them (a runner must find its tools)."""
        env = {name: os.environ[name] for name in PARENT_ENV if name in os.environ}
        env.update(dict(spec.env))
        return env

    def launch(
        self, spec: ExecutionSpec, runtime: ContainerRuntime | None = None
    ) -> dict[str, Any]:
        """What the supervisor is asked to run: command line, environment, deadline in host
        seconds, the stop grace, whether memlock is raised, and which runtime runs it.

        As a process (``runtime`` None): the runner's command line and environment; memlock
        raised for a mount under /dev/infiniband (§8.2). A process sees the host's own files and
        devices, so hostPaths need nothing else; one offered at another path is not remapped
        (that takes a container runtime): the runner sees the host as it is and reports what it
        finds, as it must without a mount.

        As a container: the runtime's command line (:mod:`.containers`), run with glimmer's own
        environment (the runtime's client needs its DOCKER_HOST, XDG_RUNTIME_DIR...; the runner
        gets only the spec's, as ``-e``), the container's name and how to remove it — recorded,
        so whoever reads the record later stops that container, whatever runtime it runs now."""
        common = {
            "deadline": self.clock.host_seconds(spec.deadline_seconds),
            "grace": self.stop_grace,
        }
        if runtime is None:
            return {
                "runtime": PROCESS,
                "argv": self.argv(spec),
                "env": self.env(spec),
                **common,
                "memlock": asks_memlock(spec),
            }
        name = container_name(spec)
        return {
            "runtime": runtime.name,
            "argv": runtime.run_argv(spec, self.device_scan),
            "env": None,
            **common,
            "memlock": False,  # asked of the runtime (--ulimit), not of its client
            "container": name,
            "remove": runtime.remove_argv(name),
        }

    def _spawn(self, path: RecordPath) -> None:
        self._reap()
        self._spawned.append(
            subprocess.Popen(
                [sys.executable, "-m", SUPERVISOR_MODULE, str(path.record)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        )

    def _reap(self) -> None:
        # The spawned process forks the supervisor and exits at once; reap it, never wait.
        self._spawned = [p for p in self._spawned if p.poll() is None]

    def create_execution(self, spec: ExecutionSpec) -> None:
        path = self.records.of(spec.namespace, spec.run, spec.name)
        if _standing(path.read()):
            return  # checked before the runtime is asked, which may take seconds
        runtime = self.runtime.current()
        with path.locked():
            record = path.read()
            if _standing(record):
                return  # it exists (or its supervisor is on its way): left as it is
            if record is None:
                record = self._new_record(spec, path, runtime)
                path.write(record)
                if record.get("exit_code") is not None:
                    return  # refused before anything ran: nothing to supervise
        self._spawn(path)

    def _new_record(
        self, spec: ExecutionSpec, path: RecordPath, runtime: ContainerRuntime | Unavailable | None
    ) -> dict[str, Any]:
        """The claim of a new execution, or its end already when it cannot run: a runtime that
        was asked for and does not answer, or a container without an image. Either is an
        Error attempt (exit -1, never ran), not a Fail: nothing was measured."""
        created = now_text()
        record: dict[str, Any] = {"spec": spec_to_json(spec), "created_at": created}
        if isinstance(runtime, Unavailable):
            return {**record, **_refused(runtime.runtime, RUNTIME_UNAVAILABLE, runtime.message)}
        if runtime is not None and not spec.image:
            message = NO_IMAGE_MESSAGE.format(test=spec.test, kind=spec.kind)
            return {**record, **_refused(runtime.name, NO_IMAGE, message)}
        # valueFrom entries this host answers (§8.2), judged now: the record keeps the spec as
        # the engine asked it, the launch the environment the runner gets.
        try:
            runnable = field_refs.resolved(spec)
        except field_refs.FieldRefError as e:
            runs_as = runtime.name if runtime is not None else PROCESS
            return {**record, **_refused(runs_as, UNRESOLVED_FIELD_REF, str(e))}
        # The runner works in a folder of its own: never in whatever directory glimmer was
        # started from, which may go away while it runs.
        return {**record, "launch": {**self.launch(runnable, runtime), "cwd": str(path.work)}}

    # -- observing ------------------------------------------------------------------------------
    def executions(self, namespace: str, run: str, run_uid: str) -> ExecutionIndex:
        self._reap()
        found = []
        for path in self.records.of_run(namespace, run):
            record = path.read()
            if record is None or record.get("spec", {}).get("run_uid") != run_uid:
                continue
            execution = self._observe(path, record)
            if execution is not None:
                found.append(execution)
        return ExecutionIndex(found)

    def all_executions(self) -> list[Execution]:
        """Every execution recorded on this host, of every run."""
        found = []
        for path in self.records.all():
            record = path.read()
            execution = self._observe(path, record) if record is not None else None
            if execution is not None:
                found.append(execution)
        return found

    def _time(self, value: object) -> datetime | None:
        moment = parse_time(value)
        return self.clock.from_host(moment) if moment is not None else None

    def _observe(self, path: RecordPath, record: dict[str, Any]) -> Execution | None:
        supervisor = _identity(record.get("supervisor"))
        if supervisor is None and record.get("exit_code") is None and _orphaned(record):
            return None  # nothing ever ran under it (see the module docstring)
        spec = self._specs.of(record)
        created = self._time(record["created_at"])
        assert created is not None
        started = self._time(record.get("started_at"))
        base = Execution(spec=spec, phase=ExecPhase.PENDING, created_at=created, started_at=started)
        exit_code = record.get("exit_code")
        if exit_code is not None:
            return self._ended(base, record, int(exit_code))
        if supervisor is None or alive(supervisor):
            if started is None:
                return base
            return _replace(base, phase=ExecPhase.RUNNING, ready=True)
        runner = _identity(record.get("runner"))
        if alive(runner):
            stop([runner], self.stop_grace)  # unsupervised: its result could never be seen
        remove_container(record.get("launch") or {})  # a container outlives its client
        ended = self._vanished(path)
        return self._ended(base, ended, int(ended["exit_code"])) if ended is not None else None

    def _vanished(self, path: RecordPath) -> dict[str, Any] | None:
        """Record the supervisor's disappearance as the end (exit -1, ``Vanished``), so every
        later read sees the same end; the record as it stands then (None: deleted)."""
        with path.locked():
            record = path.read()
            if record is None or record.get("exit_code") is not None:
                return record  # deleted, or the end was written after all
            record.update(
                finished_at=now_text(), exit_code=-1, reason=VANISHED, message=VANISHED_MESSAGE
            )
            path.write(record)
            return record

    def _ended(self, base: Execution, record: dict[str, Any], exit_code: int) -> Execution:
        reason = str(record.get("reason") or "")
        message = str(record.get("message") or "")
        succeeded = exit_code == 0 and not reason
        ended = _replace(
            base,
            phase=ExecPhase.SUCCEEDED if succeeded else ExecPhase.FAILED,
            finished_at=self._time(record.get("finished_at")),
            exit_code=exit_code,
            container_reason="Completed" if succeeded else "Error",
        )
        if reason in POD_REASONS:  # the execution's account, as a pod's deadline is
            return _replace(ended, reason=reason, message=message)
        if reason:  # the runner's own account (it could not be started)
            return _replace(ended, container_reason=reason, container_message=message)
        return ended

    # -- stopping -------------------------------------------------------------------------------
    def delete_execution(self, namespace: str, name: str) -> None:
        path = self.records.find(namespace, name)
        if path is None:
            return
        with path.locked():
            record = path.read()
            if record is None:
                return
            # Marked first: a supervisor arriving late claims nothing, and a crash before the
            # files go leaves a record a later delete (terminate sweeps) finishes.
            path.write({**record, "deleting": True})
        processes = [_identity(record.get("supervisor")), _identity(record.get("runner"))]
        stop(processes, self.stop_grace)
        if record.get("exit_code") is None:  # else its supervisor saw the container end
            remove_container(record.get("launch") or {})  # a container outlives its client
        path.remove()

    def delete_owned(self, namespace: str, run: str, run_uid: str) -> None:
        """Delete every execution of the run ``run`` with uid ``run_uid``."""
        for path in list(self.records.of_run(namespace, run)):
            record = path.read()
            if record is not None and record["spec"].get("run_uid") == run_uid:
                self.delete_execution(namespace, record["spec"]["name"])

    def read_log(self, namespace: str, name: str) -> str:
        path = self.records.find(namespace, name)
        if path is None:
            raise LogUnavailable(f"execution {name} not found")
        try:
            return path.log.read_text(errors="replace")
        except FileNotFoundError:
            raise LogUnavailable(f"execution {name} has no log (it never started)") from None

    # -- rendezvous -----------------------------------------------------------------------------
    def ensure_rendezvous(self, service: Rendezvous) -> None:
        """Nothing to create: every role of a rendezvous on one host is reached on loopback."""

    def rendezvous_address(self, namespace: str, rendezvous: str, role: str) -> str:
        """A loopback address of its own for each (rendezvous, role): every address of
        127.0.0.0/8 reaches this host on Linux, and a retry's rendezvous never resolves to the
        address a dead attempt's peer was given."""
        digest = hashlib.sha256(f"{namespace}\0{rendezvous}\0{role}".encode()).digest()
        return f"127.{digest[0] % 254 + 1}.{digest[1]}.{digest[2] % 254 + 1}"


def _standing(record: Mapping[str, Any] | None) -> bool:
    """Whether a record stands: supervised, ended, or with its supervisor on its way."""
    return record is not None and bool(
        record.get("supervisor") or record.get("exit_code") is not None or not _orphaned(record)
    )


def _refused(runtime: str, reason: str, message: str) -> dict[str, Any]:
    """The end of an execution that never ran, as its record holds it."""
    now = now_text()
    return {
        "launch": {"runtime": runtime},
        "started_at": now,
        "finished_at": now,
        "exit_code": NEVER_RAN,
        "reason": reason,
        "message": message,
    }


def _orphaned(record: Mapping[str, Any]) -> bool:
    """Unclaimed for longer than a supervisor takes to start."""
    created = parse_time(record.get("created_at"))
    if created is None:
        return True
    return (datetime.now(UTC) - created).total_seconds() > CLAIM_GRACE


def _replace(execution: Execution, **changes: Any) -> Execution:
    return dataclasses.replace(execution, **changes)
