"""The status is the checkpoint: kill the engine anywhere, resume with a new engine from only
the stored run, and end exactly where an uninterrupted engine ends — same verdict, same
results (timestamps included), every cordon released, nothing created twice. After every pass
no cordon of the run is missing from its stored status, and at every call and event the run
holds no more nodes under load or cordoned than its cap — crashed or not, machinery faults or
not."""

from __future__ import annotations

import random
from typing import Any

from engine_world import (
    GATE_MISCOMPARES,
    Interlock,
    ScriptedRunner,
    reply,
    run_object,
    spec_of,
    world,
)

from glimmer.backends.sim.backend import SimBackend
from glimmer.backends.sim.driver import settled
from glimmer.backends.sim.faults import ExecutionFault
from glimmer.contract.vocab import Phase
from glimmer.engine.reconciler import Engine

NODES = 32
CRASHES = 200


class Crash(Exception):
    """The engine process died here."""


class CrashingBackend(Interlock):
    """Raises :class:`Crash` just before or just after the n-th action the engine asks for, and
    measures the interlock at every action and event (:class:`Interlock`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.points: set[int] = set()
        self.step = 0
        self.creates: list[str] = []

    def _tick(self) -> None:
        self.step += 1
        if self.step in self.points:
            self.points.discard(self.step)
            raise Crash(self.step)

    def _guard(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        self._tick()
        out = call(*args, **kwargs)
        self._tick()
        return out

    def update_node(self, name: str, **kw: Any) -> Any:
        return self._guard(super().update_node, name, **kw)

    def create_execution(self, spec: Any) -> None:
        def create() -> None:
            if self.get_execution_known(spec):
                self.creates.append(f"again {spec.name}")
            SimBackend.create_execution(self, spec)
            self.creates.append(spec.name)

        self._guard(create)

    def get_execution_known(self, spec: Any) -> bool:
        return self.executions(spec.namespace, spec.run, spec.run_uid).get(spec.name) is not None

    def delete_execution(self, namespace: str, name: str) -> None:
        self._guard(super().delete_execution, namespace, name)

    def ensure_rendezvous(self, service: Any) -> None:
        self._guard(super().ensure_rendezvous, service)

    def write_status(self, run: Any, status: Any) -> Any:
        return self._guard(super().write_status, run, status)

    def write_metadata(self, run: Any, **kw: Any) -> Any:
        return self._guard(super().write_metadata, run, **kw)

    def deliver(self, delivery: Any) -> bool:
        return bool(self._guard(super().deliver, delivery))


def node_world() -> Any:
    """32 nodes: failures, retries, a never-scheduled, a deleted execution, an unreadable log,
    repeats, checkpoints and a segmented soak, cap 8."""
    tests = {
        "burn": spec_of("gpu-burn", thresholds=[GATE_MISCOMPARES]),
        "twice": spec_of("memory-bw", repeatCount=2, checkpointIntervalSeconds=200),
        "soak": spec_of(
            "thermal-soak",
            durationSeconds=900,
            checkpointIntervalSeconds=120,
            soak={"segmentSeconds": 300},
            thresholds=[{"metric": "gpuTempC", "comparison": "LessThanOrEqual", "value": "80"}],
        ),
    }
    runner = (
        ScriptedRunner(default="miscompares=0\ngpuTempC=70\nelapsedS=300")
        .on(reply("miscompares=4"), test="burn", node="node-003")
        .on(reply("driver reset", 3), test="burn", node="node-005", attempt=1)
        .on(reply("driver reset", 3), test="burn", node="node-007")
        .on(reply("gpuTempC=85\nelapsedS=300"), test="soak", node="node-020", attempt=2)
    )
    faults = [
        ExecutionFault("unschedulable", test="burn", node="node-012", attempt=1),
        ExecutionFault("deleted", test="soak", node="node-010", attempt=2, after=120),
        ExecutionFault("log-unreadable", test="burn", node="node-014", attempt=1),
    ]
    entries = [{"testRef": "burn"}, {"testRef": "twice"}, {"testRef": "soak"}]
    w = world(NODES, tests, entries, runner=runner, faults=faults, backend_cls=CrashingBackend)
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=8, retryOnErrorLimit=1))
    return w


def link_and_collective_world() -> Any:
    """A Pair whose first attempt errors at the server, and a Group whose first root never
    schedules and whose second attempt hangs in a worker, with checkpoints on the collective."""
    tests = {
        "link": spec_of("ib-write-bw", scope="Pair"),
        "ring": spec_of("nccl", scope="Group", checkpointIntervalSeconds=120),
    }
    runner = ScriptedRunner(default="bandwidthGbps=390\nbusBandwidthGBs=400").on(
        reply("port down", 3), test="link", role="server", attempt=1
    )
    faults = [
        ExecutionFault("unschedulable", test="ring", role="rank-0", attempt=1),
        ExecutionFault("hang", test="ring", role="rank-1", attempt=2),
    ]
    entries = [{"testRef": "link"}, {"testRef": "ring"}]
    w = world(3, tests, entries, runner=runner, faults=faults, backend_cls=CrashingBackend)
    w.submit(
        run_object(
            targets=list(w.backend.nodes)[:2], maxConcurrentNodes=3, retryOnErrorLimit=2, name="run"
        )
    )
    return w


def scenario(points: set[int], build: Any = node_world) -> tuple[Any, CrashingBackend, int]:
    w = build()
    backend: CrashingBackend = w.backend  # type: ignore[assignment]
    backend.points = set(points)
    crashes = 0
    engine = Engine(backend)
    for _ in range(100_000):
        try:
            outcome = engine.reconcile("default", "run")
        except Crash:
            crashes += 1
            engine = Engine(backend)  # a new process: nothing but the stored run survives
            continue
        backend.after_pass()
        run = backend.get_run("default", "run")
        assert run is not None
        if settled(run):
            return run, backend, crashes
        if outcome.requeue_after == 0:
            continue
        wake = backend.t + outcome.requeue_after if outcome.requeue_after is not None else 1e18
        assert backend.advance(wake)
    raise AssertionError("the run never settled")


def _fingerprint(run: Any, backend: SimBackend) -> tuple[Any, ...]:
    status = run.status
    results = [r.model_dump(mode="json") for r in status.results]
    nodes = sorted(
        (n.name, n.unschedulable, sorted(n.annotations.items())) for n in backend.nodes.values()
    )
    counters = (status.passed, status.failed, status.errored, status.skipped)
    return status.phase, results, nodes, counters, status.cordoned_nodes


def test_killed_at_200_random_points_ends_exactly_like_an_uninterrupted_run() -> None:
    clean, clean_backend, none = scenario(set())
    assert none == 0
    assert clean.status.phase is Phase.FAILED
    phases = {(r.name, r.nodes[0]): r.phase for r in clean.status.results}
    assert phases[("burn", "node-003")] is Phase.FAILED
    assert phases[("burn", "node-005")] is Phase.PASSED
    assert phases[("burn", "node-007")] is Phase.ERROR
    assert phases[("burn", "node-012")] is Phase.PASSED  # never scheduled, then retried
    total = clean_backend.step
    rng = random.Random(20261002)
    points = set(rng.sample(range(1, total + 1), CRASHES))
    resumed, backend, crashes = scenario(points)
    assert crashes >= CRASHES * 0.9
    assert _fingerprint(resumed, backend) == _fingerprint(clean, clean_backend)
    assert not [c for c in backend.creates if c.startswith("again")]
    assert backend.outside == []
    assert backend.worst[0] <= 8 and backend.worst[1] <= 8
    assert len(set(backend.creates)) == len(set(clean_backend.creates))
    assert all(not n.unschedulable and not n.annotations for n in backend.nodes.values())
    # Every envelope but a checkpoint (never retried, §2.12a) went out at least once.
    announced = {(d.reason, d.key) for d in clean_backend.deliveries if d.reason != "Checkpoint"}
    assert announced <= {(d.reason, d.key) for d in backend.deliveries}


def test_pair_and_group_units_resume_from_a_crash_before_or_after_any_backend_call() -> None:
    clean, clean_backend, _ = scenario(set(), link_and_collective_world)
    results = {r.name: r for r in clean.status.results}
    assert [a.phase for a in results["link"].attempts] == [Phase.ERROR, Phase.PASSED]
    assert results["ring"].error_retries == 2 and results["ring"].phase is Phase.PASSED
    expected = _fingerprint(clean, clean_backend)
    for point in range(1, clean_backend.step + 1):
        resumed, backend, crashes = scenario({point}, link_and_collective_world)
        assert crashes == 1, point
        assert _fingerprint(resumed, backend) == expected, point
        assert not [c for c in backend.creates if c.startswith("again")], point
        assert backend.outside == [], point
        assert backend.worst[0] <= 3 and backend.worst[1] <= 3, point


def faulty_world() -> Any:
    """6 nodes at cap 2 with a machinery fault of every kind the simulator has, on first
    attempts (retried once): evicted before any pass saw it run, deleted mid-run, never
    scheduled, stuck pulling its image, hung, exiting early, and a log that cannot be read."""
    tests = {
        "burn": spec_of("gpu-burn", durationSeconds=300, thresholds=[GATE_MISCOMPARES]),
        "twice": spec_of("memory-bw", repeatCount=2, checkpointIntervalSeconds=100),
    }
    runner = ScriptedRunner(default="miscompares=0").on(
        reply("miscompares=2"), test="burn", node="node-005"
    )
    faults = [
        ExecutionFault("evicted", test="burn", node="node-001", attempt=1, after=0.1),
        ExecutionFault("deleted", test="burn", node="node-002", attempt=1, after=120),
        ExecutionFault("unschedulable", test="burn", node="node-003", attempt=1),
        ExecutionFault("image-pull", test="twice", node="node-000", attempt=1),
        ExecutionFault("hang", test="twice", node="node-004", attempt=1),
        ExecutionFault("early-exit", test="twice", node="node-002", attempt=2, after=30),
        ExecutionFault("log-unreadable", test="burn", node="node-004", attempt=1),
        ExecutionFault("evicted", test="twice", node="node-005", after=0.1),
    ]
    entries = [{"testRef": "burn"}, {"testRef": "twice"}]
    w = world(6, tests, entries, runner=runner, faults=faults, backend_cls=CrashingBackend)
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=2, retryOnErrorLimit=1))
    return w


def test_a_crash_before_or_after_any_backend_call_under_machinery_faults_changes_nothing() -> None:
    clean, clean_backend, _ = scenario(set(), faulty_world)
    assert clean_backend.worst[0] <= 2 and clean_backend.worst[1] <= 2
    assert clean_backend.outside == []
    expected = _fingerprint(clean, clean_backend)
    for point in range(1, clean_backend.step + 1):
        resumed, backend, crashes = scenario({point}, faulty_world)
        assert crashes == 1, point
        assert _fingerprint(resumed, backend) == expected, point  # timestamps included
        assert backend.outside == [], point  # no cordon the stored status does not list
        assert backend.worst[0] <= 2 and backend.worst[1] <= 2, point
        assert not [c for c in backend.creates if c.startswith("again")], point
