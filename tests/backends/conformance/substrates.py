"""The substrates the conformance suite runs on: the table of ``conftest.py``'s docstring."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.drivers import drive as virtual_clock_drive
from glimmer.backends.common.drivers import drive_wall_clock
from glimmer.backends.common.run_store import FileRunStore
from glimmer.backends.local.backend import LocalBackend
from glimmer.backends.sim.backend import SimBackend
from glimmer.engine.backend import Backend, ExecutionSpec, NodeView, RunStore
from glimmer.engine.reconciler import Engine
from glimmer.sinks.envelope import Transition

API = "burnin.glimmer.ai/v1alpha1"
NAMESPACE = "default"
# A drive gives up after this many passes: a rule broken so that the run never settles fails
# its test instead of hanging it (the runs here settle in a few dozen).
MAX_PASSES = 1_000


def node_views(n: int = 3) -> list[NodeView]:
    return [
        NodeView(
            name=f"node-{i:03d}",
            labels={"kubernetes.io/hostname": f"node-{i:03d}", "pool": "gpu" if i else "cpu"},
            kernel="6.8",
            os_image="ubuntu",
            arch="amd64",
        )
        for i in range(n)
    ]


def burn_spec(duration: int = 300) -> BurnInTestSpec:
    return BurnInTestSpec.model_validate({"kind": "gpu-burn", "durationSeconds": duration})


def profile(tests: Mapping[str, BurnInTestSpec], name: str = "prof") -> BurnInProfile:
    return BurnInProfile.model_validate(
        {
            "apiVersion": API,
            "kind": "BurnInProfile",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"tests": [{"testRef": t} for t in tests]},
        }
    )


def run_object(name: str = "run", targets: tuple[str, ...] = (), **spec: Any) -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": API,
            "kind": "BurnInRun",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"profileRef": "prof", "target": {"nodeNames": list(targets)}, **spec},
        }
    )


@dataclass(frozen=True)
class World:
    """What a substrate is built over."""

    nodes: tuple[NodeView, ...] = field(default_factory=lambda: tuple(node_views()))
    tests: Mapping[str, BurnInTestSpec] = field(
        default_factory=lambda: {"burn": burn_spec(300), "soak": burn_spec(600)}
    )

    @property
    def profiles(self) -> dict[str, BurnInProfile]:
        return {"prof": profile(self.tests)}


class RefusingSinks:
    """Sinks that take nothing (a SinkSet's delivery surface: deliver, forget_run)."""

    def __init__(self) -> None:
        self.offered: list[Transition] = []

    def deliver(self, transition: Transition) -> bool:
        self.offered.append(transition)
        return False

    def forget_run(self, uid: str) -> None:
        pass


def _underlying(backend: Any) -> Any:
    """The substrate's own backend behind a recording wrapper (see engine_rules' Wrapper)."""
    return getattr(backend, "inner", backend)


@dataclass(frozen=True)
class Substrate:
    name: str
    make: Callable[[Path, World], Backend]
    submit: Callable[[Any, BurnInRun], BurnInRun]
    drive: Callable[[Any, Engine, str, str], BurnInRun]
    let_time_pass: Callable[[Any, float], None]
    refuse_sinks: Callable[[Any], None]
    detects_stale_writes: bool


def _sim(tmp_path: Path, world: World) -> SimBackend:
    return SimBackend(list(world.nodes), seed=7, profiles=world.profiles, tests=dict(world.tests))


def _sim_on_files(tmp_path: Path, world: World) -> SimBackend:
    store = FileRunStore(tmp_path / "runs", profiles=world.profiles, tests=dict(world.tests))
    return SimBackend(
        list(world.nodes),
        seed=7,
        profiles=world.profiles,
        tests=dict(world.tests),
        store=store,
    )


def _sim_drive(backend: Any, engine: Engine, namespace: str, name: str) -> BurnInRun:
    return virtual_clock_drive(backend, engine, namespace, name, max_passes=MAX_PASSES).run


def _sim_refuse(backend: Any) -> None:
    _underlying(backend).sink_set = RefusingSinks()


SIM = dict(
    submit=lambda backend, run: backend.submit(run),
    drive=_sim_drive,
    let_time_pass=lambda backend, seconds: _underlying(backend).advance_to(
        _underlying(backend).t + seconds
    ),
    refuse_sinks=_sim_refuse,
    detects_stale_writes=True,
)

# -- local: this host, real processes (every node of the world is this host) ---------------------
# The world's tests last 300 s and 600 s, and its deadline test wants a run deadline of 400 s to
# fall while executions run, not while one is starting. Here the local substrate runs real
# processes on a clock counting LOCAL_SCALE engine seconds per host second; the fake runner
# lives LOCAL_RUNNER_SECONDS (402 engine seconds), so the first wave spans the run deadline
# whatever the host's start-up latency (a few tenths of a second, ~100 engine seconds here; a
# supervisor and a runner starting up may take a second on a loaded host, and still end inside
# the 720 s window). It outlives its 300 s test's 420 s deadline on this clock once its start-up is
# counted, so deadlines are enforced LOCAL_DEADLINE_SLACK times later (tests/backends/local
# checks the deadline itself on a clock of its own).
LOCAL_SCALE = 300.0
LOCAL_RUNNER_SECONDS = 1.34
LOCAL_DEADLINE_SLACK = 4.0
LOCAL_RUNNER = f"import time\ntime.sleep({LOCAL_RUNNER_SECONDS})\n"  # passes, printing nothing
LOCAL_POLL = 0.05  # host seconds between passes


class LocalFastClock:
    """The local substrate's clock for this suite: LOCAL_SCALE engine seconds per host second,
    host times (an execution's start and end) mapped on it."""

    def __init__(self) -> None:
        self.origin = datetime.now(UTC)

    def from_host(self, moment: datetime) -> datetime:
        return self.origin + (moment - self.origin) * LOCAL_SCALE

    def now(self) -> datetime:
        return self.from_host(datetime.now(UTC))

    def host_seconds(self, seconds: float) -> float:
        return seconds * LOCAL_DEADLINE_SLACK / LOCAL_SCALE


def _local(tmp_path: Path, world: World) -> LocalBackend:
    tmp_path.mkdir(parents=True, exist_ok=True)
    script = tmp_path / "conformance_runner.py"
    script.write_text(LOCAL_RUNNER)
    return LocalBackend(
        tmp_path / "state",
        [n.name for n in world.nodes],
        runner_command=[sys.executable, str(script)],
        profiles=world.profiles,
        tests=dict(world.tests),
        node_labels={n.name: dict(n.labels) for n in world.nodes},
        clock=LocalFastClock(),
        stop_grace=0.2,
    )


def _local_drive(backend: Any, engine: Engine, namespace: str, name: str) -> BurnInRun:
    final = drive_wall_clock(
        backend,
        engine,
        namespace,
        name,
        poll=LOCAL_POLL * LOCAL_SCALE,
        sleep=lambda seconds: time.sleep(seconds / LOCAL_SCALE),
        max_passes=MAX_PASSES,
    )
    assert final is not None
    return final


def _local_let_time_pass(backend: Any, seconds: float) -> None:
    # Host time passes as it does; waiting longer than every execution lives proves nothing.
    processes = _underlying(backend).processes
    until = time.monotonic() + seconds / LOCAL_SCALE
    while time.monotonic() < until and any(e.live for e in processes.all_executions()):
        time.sleep(0.02)


def _local_refuse(backend: Any) -> None:
    _underlying(backend).delivery.sinks = RefusingSinks()


SUBSTRATES: tuple[Substrate, ...] = (
    Substrate("sim", make=_sim, **SIM),  # type: ignore[arg-type]
    Substrate("sim+file-store", make=_sim_on_files, **SIM),  # type: ignore[arg-type]
    Substrate(
        "local",
        make=_local,
        # A uid from the name, as the simulator's is from its seed: two instances, same names.
        submit=lambda backend, run: backend.submit(_with_uid(run)),
        drive=_local_drive,
        let_time_pass=_local_let_time_pass,
        refuse_sinks=_local_refuse,
        detects_stale_writes=True,
    ),
)


@dataclass(frozen=True)
class StoreSubstrate:
    """A RunStore alone: ``make`` builds it over the world's profiles and tests, ``create``
    stores a new run in it (the store's own way in)."""

    name: str
    make: Callable[[Path, World], RunStore]
    create: Callable[[Any, BurnInRun], BurnInRun]
    detects_stale_writes: bool


def _file_store(tmp_path: Path, world: World) -> FileRunStore:
    return FileRunStore(tmp_path / "runs", profiles=world.profiles, tests=dict(world.tests))


def _with_uid(run: BurnInRun) -> BurnInRun:
    meta = run.metadata.model_copy(update={"uid": f"uid-{run.name}"})
    return run.model_copy(update={"metadata": meta})


STORES: tuple[StoreSubstrate, ...] = (
    *(StoreSubstrate(s.name, s.make, s.submit, s.detects_stale_writes) for s in SUBSTRATES),
    StoreSubstrate(
        "file",
        make=_file_store,
        create=lambda store, run: store.create_run(_with_uid(run)),
        detects_stale_writes=True,
    ),
)


def execution_spec(
    name: str, node: str, *, run: str = "run", run_uid: str = "uid-run", duration: int = 300
) -> ExecutionSpec:
    """A Node-scope execution request as the engine would make one."""
    return ExecutionSpec(
        name=name,
        namespace=NAMESPACE,
        run=run,
        run_uid=run_uid,
        test="burn",
        test_index=0,
        kind="gpu-burn",
        scope="Node",
        node=node,
        unit_nodes=(node,),
        attempt=1,
        role="",
        rank=None,
        nranks=None,
        image="ghcr.io/glimmer/runner:test",
        env=(("BURNIN_TEST", "burn"),),
        duration_seconds=duration,
        deadline_seconds=duration + 600,
        labels={"burnin.glimmer.ai/run": run, "burnin.glimmer.ai/node": node},
        test_spec=burn_spec(duration),
    )
