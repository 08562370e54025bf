"""The substrates the conformance suite runs on: the table of ``conftest.py``'s docstring."""

from __future__ import annotations

import dataclasses
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
from glimmer.backends.base import selector_matches
from glimmer.backends.common.drivers import drive as virtual_clock_drive
from glimmer.backends.common.drivers import drive_wall_clock
from glimmer.backends.common.run_store import FileRunStore
from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.client import connect
from glimmer.backends.kubernetes.resources import PROFILES, TESTS
from glimmer.backends.kubernetes.wire import for_cluster
from glimmer.backends.local.backend import LocalBackend
from glimmer.backends.sim.backend import SimBackend
from glimmer.backends.slurm.backend import SlurmBackend
from glimmer.backends.slurm.commands import Slurm
from glimmer.engine.backend import (
    Backend,
    Execution,
    ExecutionIndex,
    ExecutionSpec,
    NodeView,
    NotFound,
    RunStore,
)
from glimmer.engine.reconciler import Engine
from glimmer.sinks.envelope import Transition
from tests.backends.kubernetes.pod_driver import PodDriver

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
    uses_cluster: bool = False  # a real Slurm cluster: the test holds it (conftest.py)
    uses_k8s_api: bool = False  # an API stand-in per instance, started for the test (conftest.py)


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


# -- slurm: a real Slurm cluster (tests/slurm_cluster.py), one batch job per execution ----------
# The world's nodes are the cluster's first three under the world's names and labels
# (RenamedNodes), so the tests read as they do everywhere. Time is scaled as on the local
# substrate, less steeply: an execution's window counts from before its submit, which waits for
# the node's window (the drain lifted, the job allocated: about a second), and a loaded host may
# take as long again to start the job. At SLURM_SCALE engine seconds per host second a 300 s
# test's 720 s window is 7.2 host seconds: room for that and a runner of SLURM_RUNNER_SECONDS.
# The 400 s run deadline still falls while the first wave runs: its second execution is created
# a window (about 100 engine seconds) after the first and lives 250 after that at least.
SLURM_SCALE = 100.0
SLURM_RUNNER_SECONDS = 2.5
SLURM_RUNNER = f"import time\ntime.sleep({SLURM_RUNNER_SECONDS})\n"


class SlurmFastClock(LocalFastClock):
    """SLURM_SCALE engine seconds per host second."""

    def from_host(self, moment: datetime) -> datetime:
        return self.origin + (moment - self.origin) * SLURM_SCALE

    def host_seconds(self, seconds: float) -> float:
        return seconds / SLURM_SCALE


class RenamedNodes:
    """The slurm backend with the world's node names and labels on the cluster's nodes: every
    node call and every execution's node translated on the way in and back on the way out
    (the engine and the tests see ``node-000``; Slurm runs the job on ``n1``). Everything else
    is the backend's own."""

    def __init__(self, inner: SlurmBackend, names: Mapping[str, str], world: World) -> None:
        self.inner = inner
        self.to_slurm = dict(names)
        self.to_world = {v: k for k, v in names.items()}
        self.labels = {n.name: dict(n.labels) for n in world.nodes}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _view(self, view: NodeView) -> NodeView:
        name = self.to_world[view.name]
        labels = {**view.labels, "kubernetes.io/hostname": name, **self.labels[name]}
        return dataclasses.replace(view, name=name, labels=labels)

    def _spec(self, spec: ExecutionSpec, names: Mapping[str, str]) -> ExecutionSpec:
        return dataclasses.replace(
            spec,
            node=names.get(spec.node, spec.node),
            unit_nodes=tuple(names.get(n, n) for n in spec.unit_nodes),
        )

    def get_node(self, name: str) -> NodeView | None:
        slurm = self.to_slurm.get(name)
        found = self.inner.get_node(slurm) if slurm is not None else None
        return self._view(found) if found is not None else None

    def list_nodes(self, selector: Mapping[str, str] | None = None) -> list[NodeView]:
        views = [self._view(v) for v in self.inner.list_nodes() if v.name in self.to_world]
        return [v for v in views if selector_matches(v.labels, selector)]

    def update_node(self, name: str, **changes: Any) -> NodeView:
        slurm = self.to_slurm.get(name)
        if slurm is None:
            raise NotFound(f"node {name} not found")
        return self._view(self.inner.update_node(slurm, **changes))

    def create_execution(self, spec: ExecutionSpec) -> None:
        self.inner.create_execution(self._spec(spec, self.to_slurm))

    def executions(self, namespace: str, run: str, run_uid: str) -> ExecutionIndex:
        found: list[Execution] = [
            dataclasses.replace(e, spec=self._spec(e.spec, self.to_world))
            for e in self.inner.executions(namespace, run, run_uid)
        ]
        return ExecutionIndex(found)


def slurm_maker(cluster: Any) -> Callable[[Path, World], Backend]:
    """The slurm substrate's ``make`` on ``cluster`` (a tests.slurm_cluster.SlurmCluster; None
    for the run store alone, which never calls Slurm)."""

    def make(tmp_path: Path, world: World) -> Backend:
        tmp_path.mkdir(parents=True, exist_ok=True)
        script = tmp_path / "conformance_runner.py"
        script.write_text(SLURM_RUNNER)
        slurm = cluster.slurm if cluster is not None else Slurm()
        backend = SlurmBackend(
            tmp_path / "state",
            slurm,
            partition=cluster.partition if cluster is not None else None,
            runner_command=[sys.executable, str(script)],
            profiles=world.profiles,
            tests=dict(world.tests),
            clock=SlurmFastClock(),
        )
        slurm_nodes = cluster.nodes if cluster is not None else ()
        names = {n.name: s for n, s in zip(world.nodes, slurm_nodes, strict=False)}
        return RenamedNodes(backend, names, world)  # type: ignore[return-value]

    return make


def slurm_submit(salt: str) -> Callable[[Any, BurnInRun], BurnInRun]:
    """The slurm substrate's ``submit``: a uid from the name and ``salt``, one salt per test.
    Slurm remembers ended jobs (MinJobAge) cluster-wide and a job is found by its name and its
    run's uid, so a fixed uid would meet the jobs of an earlier test's run of the same name;
    every instance within one test gets the same uid, so the same names."""

    def submit(backend: Any, run: BurnInRun) -> BurnInRun:
        meta = run.metadata.model_copy(update={"uid": f"uid-{run.name}-{salt}"})
        return backend.submit(run.model_copy(update={"metadata": meta}))  # type: ignore[no-any-return]

    return submit


def _slurm_drive(backend: Any, engine: Engine, namespace: str, name: str) -> BurnInRun:
    final = drive_wall_clock(
        backend,
        engine,
        namespace,
        name,
        poll=0.2 * SLURM_SCALE,  # a pass every 0.2 host s: each is several Slurm calls on 2 cores
        sleep=lambda seconds: time.sleep(seconds / SLURM_SCALE),
        max_passes=MAX_PASSES,
    )
    assert final is not None
    return final


def _slurm_let_time_pass(backend: Any, seconds: float) -> None:
    # Host time passes as it does, until no job of the cluster is left (the lock is ours).
    slurm = backend.slurm  # through any wrapper, to the SlurmBackend's
    until = time.monotonic() + seconds / SLURM_SCALE
    while time.monotonic() < until and slurm.run("squeue", "-h", "-o", "%i").strip():
        time.sleep(0.1)


# -- kubernetes: the API stand-in over real HTTP (tools/k8s_standin), one per instance --------
# Each ``make`` is a cluster of its own (a fresh stand-in, as each local instance has a state
# directory of its own): the world's nodes are Node objects created in it, its profile and tests
# BurnInProfile and BurnInTest objects, and the backend reads them over HTTP like any client.
# Pods are run by tests/backends/kubernetes/pod_driver.PodDriver — a minimal kubelet that
# writes each pod's status (Running, then Succeeded with exit 0) and its empty log — stepped
# while the drive sleeps. The cluster's timestamps have whole seconds, so a pod's creation may
# read up to a host second early: at K8S_SCALE engine seconds per host second that is 100
# engine seconds, and a runner of K8S_RUNNER_SECONDS (450 engine seconds, past the 400 s run
# deadline) still ends well inside a 300 s test's 720 s window.
K8S_SCALE = 100.0
K8S_RUNNER_SECONDS = 4.5


class K8sFastClock(LocalFastClock):
    """K8S_SCALE engine seconds per host second."""

    def from_host(self, moment: datetime) -> datetime:
        return self.origin + (moment - self.origin) * K8S_SCALE

    def host_seconds(self, seconds: float) -> float:
        return seconds / K8S_SCALE


# Starts a fresh API stand-in for an instance: its kubeconfig and its pod log folder.
StartAPI = Callable[[Path], tuple[Path, Path]]


def _k8s_world(client: Any, world: World) -> None:
    """The world's nodes, profile and tests as objects in the cluster."""
    from lightkube import ApiError
    from lightkube.types import PatchType

    from glimmer.backends.kubernetes.resources import NODES

    for view in world.nodes:
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": view.name}}
        node["metadata"]["labels"] = dict(view.labels)
        try:
            client.create(NODES.from_dict(node))
        except ApiError as e:
            if e.status.code != 409:
                raise
        info = {"kernelVersion": view.kernel, "osImage": view.os_image, "architecture": view.arch}
        client.patch(
            NODES.Status,
            view.name,
            {"status": {"nodeInfo": info}},
            patch_type=PatchType.MERGE,
        )
    for name, spec in world.tests.items():
        test = {
            "apiVersion": API,
            "kind": "BurnInTest",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": spec.model_dump(mode="json", by_alias=True, exclude_unset=True),
        }
        try:
            client.create(TESTS.from_dict(test), namespace=NAMESPACE)
        except ApiError as e:
            if e.status.code != 409:
                raise
    for prof in world.profiles.values():
        try:
            client.create(PROFILES.from_dict(for_cluster(prof)), namespace=NAMESPACE)
        except ApiError as e:
            if e.status.code != 409:
                raise


def kubernetes_maker(start_api: StartAPI | None) -> Callable[[Path, World], Backend]:
    """The kubernetes substrate's ``make``: each instance on a stand-in ``start_api`` starts
    (conftest.py binds it; None only in the table)."""

    def make(tmp_path: Path, world: World) -> Backend:
        if start_api is None:
            raise AssertionError("the kubernetes substrate is bound to its API in conftest.py")
        tmp_path.mkdir(parents=True, exist_ok=True)
        kubeconfig, log_dir = start_api(tmp_path)
        client = connect(kubeconfig)
        _k8s_world(client, world)
        backend = KubernetesBackend(client, clock=K8sFastClock())
        backend.pod_driver = PodDriver(client, log_dir, K8S_RUNNER_SECONDS)  # type: ignore[attr-defined]
        return backend  # type: ignore[return-value]

    return make


def _pod_driver(backend: Any) -> PodDriver:
    driver: PodDriver = _underlying(backend).pod_driver
    return driver


def _k8s_drive(backend: Any, engine: Engine, namespace: str, name: str) -> BurnInRun:
    driver = _pod_driver(backend)
    final = drive_wall_clock(
        backend,
        engine,
        namespace,
        name,
        poll=LOCAL_POLL * K8S_SCALE,
        sleep=lambda seconds: driver.sleep(seconds / K8S_SCALE),
        max_passes=MAX_PASSES,
    )
    assert final is not None
    return final


def _k8s_let_time_pass(backend: Any, seconds: float) -> None:
    # Host time passes as it does, the pods stepped, until none is left running.
    driver = _pod_driver(backend)
    until = time.monotonic() + seconds / K8S_SCALE
    while time.monotonic() < until and driver.step():
        time.sleep(0.02)


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
    Substrate(
        "slurm",
        make=slurm_maker(None),  # conftest.py binds it to the cluster the test holds
        submit=lambda backend, run: backend.submit(_with_uid(run)),
        drive=_slurm_drive,
        let_time_pass=_slurm_let_time_pass,
        refuse_sinks=_local_refuse,
        detects_stale_writes=True,
        uses_cluster=True,
    ),
    Substrate(
        "kubernetes",
        make=kubernetes_maker(None),  # conftest.py binds it to the stand-ins the test starts
        # The API server fills the uid (and refuses a name it already holds).
        submit=lambda backend, run: backend.submit(run),
        drive=_k8s_drive,
        let_time_pass=_k8s_let_time_pass,
        refuse_sinks=_local_refuse,
        detects_stale_writes=True,
        uses_k8s_api=True,
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
    uses_k8s_api: bool = False


def _file_store(tmp_path: Path, world: World) -> FileRunStore:
    return FileRunStore(tmp_path / "runs", profiles=world.profiles, tests=dict(world.tests))


def _with_uid(run: BurnInRun) -> BurnInRun:
    meta = run.metadata.model_copy(update={"uid": f"uid-{run.name}"})
    return run.model_copy(update={"metadata": meta})


STORES: tuple[StoreSubstrate, ...] = (
    *(
        StoreSubstrate(s.name, s.make, s.submit, s.detects_stale_writes, s.uses_k8s_api)
        for s in SUBSTRATES
    ),
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
