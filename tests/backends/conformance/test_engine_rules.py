"""The engine's rules that rest on the substrate, held by driving a real small run with
:class:`~glimmer.engine.reconciler.Engine` on each substrate through a thin recording wrapper:
execution names are deterministic (a fresh engine replanning the run creates nothing twice),
an execution is deleted only after the status that records its result was written, and the
interlock (``maxConcurrentNodes``) holds at every create and every cordon.

A drive is most of these tests' time (20 s on Slurm, 18 on the Kubernetes stand-in): the
interlock test and the two-instance test's first instance read the same drive of a fresh
instance (``first_drives``, one per substrate and module), recorded whole while the test that
made it held the substrate; neither changes it."""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from substrates import NAMESPACE, Substrate, World, run_object

from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.contract.vocab import TERMINAL_PHASES, Phase
from glimmer.engine.backend import ExecutionSpec, NodeView
from glimmer.engine.keys import CORDON_OWNER
from glimmer.engine.reconciler import Engine

CAP = 2
TARGETS = ("node-000", "node-001", "node-002")


class Recording:
    """Forwards every attribute to the substrate's backend (``inner``) and records the calls
    these rules are about, measuring the interlock as each create and cordon is asked for."""

    def __init__(self, inner: Any) -> None:
        object.__setattr__(self, "inner", inner)
        object.__setattr__(self, "calls", [])
        object.__setattr__(self, "loaded_at_create", [])
        object.__setattr__(self, "cordoned_after_update", [])

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.inner, name, value)

    def create_execution(self, spec: ExecutionSpec) -> None:
        live = self.inner.executions(spec.namespace, spec.run, spec.run_uid).live()
        self.loaded_at_create.append(len({e.node for e in live} | {spec.node}))
        self.calls.append(("create", spec.name))
        self.inner.create_execution(spec)

    def delete_execution(self, namespace: str, name: str) -> None:
        self.calls.append(("delete", name))
        self.inner.delete_execution(namespace, name)

    def write_status(self, run: BurnInRun, status: BurnInRunStatus) -> BurnInRun:
        self.calls.append(("status", status.model_copy(deep=True)))
        return self.inner.write_status(run, status)

    def update_node(self, name: str, **changes: Any) -> Any:
        updated = self.inner.update_node(name, **changes)
        cordoned = [
            n.name
            for n in self.inner.list_nodes()
            if n.unschedulable and n.annotations.get(CORDON_OWNER)
        ]
        self.cordoned_after_update.append(len(cordoned))
        return updated

    def created(self) -> list[str]:
        return [name for kind, name in self.calls if kind == "create"]


def _start(substrate: Substrate, tmp_path: Path, world: World) -> Recording:
    backend = Recording(substrate.make(tmp_path, world))
    substrate.submit(backend, run_object("run", TARGETS, maxConcurrentNodes=CAP))
    return backend


def _driven(substrate: Substrate, tmp_path: Path, world: World) -> tuple[Recording, BurnInRun]:
    backend = _start(substrate, tmp_path, world)
    run = substrate.drive(backend, Engine(backend), NAMESPACE, "run")  # type: ignore[arg-type]
    assert run.status is not None and run.status.phase is Phase.PASSED
    return backend, run


@dataclass(frozen=True)
class FirstDrive:
    """A drive of the run on a fresh instance, as recorded: the substrate entry it was driven
    with (its ``submit`` gives a second instance the same run uid) and the nodes as they were
    when it settled."""

    substrate: Substrate
    backend: Recording
    nodes_after: tuple[NodeView, ...]


@pytest.fixture(scope="module")
def first_drives() -> dict[str, FirstDrive]:
    """The first drive of each substrate in this module, made by whichever test needs it
    first (under that test's hold of the substrate), read by the others."""
    return {}


def _first_drive(
    drives: dict[str, FirstDrive], substrate: Substrate, tmp_path: Path, world: World
) -> FirstDrive:
    if substrate.name not in drives:
        backend, _ = _driven(substrate, tmp_path / "first", world)
        drives[substrate.name] = FirstDrive(substrate, backend, tuple(backend.list_nodes()))
    return drives[substrate.name]


def test_the_same_run_on_two_instances_creates_the_same_execution_names(
    substrate: Substrate, tmp_path: Path, world: World, first_drives: dict[str, FirstDrive]
) -> None:
    drive = _first_drive(first_drives, substrate, tmp_path, world)
    first = drive.backend
    # The second instance is this test's, submitted as the first was (the same run uid).
    again = dataclasses.replace(substrate, submit=drive.substrate.submit)
    second, _ = _driven(again, tmp_path / "second", world)
    assert first.created() == second.created()
    assert len(first.created()) == len(TARGETS) * len(world.tests)


def test_the_interlock_holds_at_every_create_and_every_cordon(
    substrate: Substrate, tmp_path: Path, world: World, first_drives: dict[str, FirstDrive]
) -> None:
    drive = _first_drive(first_drives, substrate, tmp_path, world)
    backend = drive.backend
    assert len(backend.loaded_at_create) == len(TARGETS) * len(world.tests)
    assert max(backend.loaded_at_create) == CAP  # the cap is reached, never passed
    assert backend.cordoned_after_update and max(backend.cordoned_after_update) <= CAP
    assert backend.cordoned_after_update[-1] == 0  # every cordon released at the end
    assert not any(n.unschedulable for n in drive.nodes_after)


def test_a_fresh_engine_replanning_a_run_midway_creates_no_execution_twice(
    substrate: Substrate, tmp_path: Path, world: World
) -> None:
    backend = _start(substrate, tmp_path, world)
    engine = Engine(backend)  # type: ignore[arg-type]
    for _ in range(20):  # until the first wave is out
        engine.reconcile(NAMESPACE, "run")
        if backend.created():
            break
    first_wave = backend.created()
    assert first_wave
    # A restarted process: a new engine with no memory, over the same substrate.
    run = substrate.drive(backend, Engine(backend), NAMESPACE, "run")  # type: ignore[arg-type]
    assert run.status is not None and run.status.phase is Phase.PASSED
    created = Counter(backend.created())
    assert max(created.values()) == 1, created
    assert set(first_wave) <= set(created)
    assert len(created) == len(TARGETS) * len(world.tests)


def _recorded(status: BurnInRunStatus) -> set[str]:
    """Execution names whose attempt the status records as ended."""
    return {
        attempt.pod_name
        for result in status.results or ()
        for attempt in result.attempts or ()
        if attempt.pod_name and attempt.phase in TERMINAL_PHASES
    }


def test_an_execution_is_deleted_only_after_the_status_recording_its_result_is_written(
    substrate: Substrate, tmp_path: Path, world: World
) -> None:
    # The run's deadline falls while executions are live: the engine records them unfinished,
    # then stops them (a passing run deletes nothing; its executions go with the run).
    backend = Recording(substrate.make(tmp_path, world))
    run = run_object("run", TARGETS, maxConcurrentNodes=CAP, deadlineSeconds=400)
    substrate.submit(backend, run)
    final = substrate.drive(backend, Engine(backend), NAMESPACE, "run")  # type: ignore[arg-type]
    assert final.status is not None and final.status.phase in TERMINAL_PHASES
    recorded: set[str] = set()
    deleted = []
    for kind, what in backend.calls:
        if kind == "status":
            recorded |= _recorded(what)
        elif kind == "delete":
            assert what in recorded, f"{what} deleted before a status recorded its result"
            deleted.append(what)
    assert deleted  # the deadline stopped live executions
    assert not list(backend.executions(NAMESPACE, "run", final.metadata.uid or "").live())
