"""A small simulated world for engine tests: nodes, tests, a profile, a run, and a scripted
runner whose output per (test, node, attempt) a test can set."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.sim.backend import RunnerReply, RunnerRequest, SimBackend
from glimmer.backends.sim.driver import Drive, drive
from glimmer.backends.sim.faults import ExecutionFault
from glimmer.engine.backend import NodeView
from glimmer.engine.keys import CORDON_OWNER
from glimmer.engine.reconciler import Engine

API = "burnin.glimmer.ai/v1alpha1"

Script = Callable[[RunnerRequest], RunnerReply | None]


@dataclass
class ScriptedRunner:
    """Replies by the first matching rule; the default reply passes with ``default`` output."""

    default: str = ""
    rules: list[tuple[dict[str, Any], RunnerReply]] = field(default_factory=list)
    calls: list[RunnerRequest] = field(default_factory=list)

    def on(self, reply: RunnerReply, **match: Any) -> ScriptedRunner:
        """Reply ``reply`` to executions matching ``match`` (test, node, attempt, role)."""
        self.rules.append((match, reply))
        return self

    def __call__(self, request: RunnerRequest) -> RunnerReply:
        self.calls.append(request)
        spec = request.spec
        for match, reply in self.rules:
            if all(getattr(spec, k) == v for k, v in match.items()):
                return reply
        return RunnerReply(self.default, 0)


def nodes(n: int, prefix: str = "node", **kwargs: Any) -> list[NodeView]:
    return [
        NodeView(
            name=f"{prefix}-{i:03d}",
            labels={"kubernetes.io/hostname": f"{prefix}-{i:03d}", "pool": "gpu"},
            kernel="6.8",
            os_image="ubuntu",
            arch="amd64",
            **kwargs,
        )
        for i in range(n)
    ]


def spec_of(kind: str = "gpu-burn", **fields: Any) -> BurnInTestSpec:
    body: dict[str, Any] = {"kind": kind, "durationSeconds": 600}
    body.update(fields)
    return BurnInTestSpec.model_validate(body)


def profile(entries: Sequence[Mapping[str, Any]], name: str = "prof", **spec: Any) -> BurnInProfile:
    return BurnInProfile.model_validate(
        {
            "apiVersion": API,
            "kind": "BurnInProfile",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"tests": list(entries), **spec},
        }
    )


def run_object(
    name: str = "run", targets: Sequence[str] = (), profile_ref: str = "prof", **spec: Any
) -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": API,
            "kind": "BurnInRun",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"profileRef": profile_ref, "target": {"nodeNames": list(targets)}, **spec},
        }
    )


@dataclass
class World:
    backend: SimBackend
    engine: Engine
    runner: ScriptedRunner

    def submit(self, run: BurnInRun) -> BurnInRun:
        return self.backend.submit(run)

    def drive(self, name: str = "run", **kwargs: Any) -> Drive:
        return drive(self.backend, self.engine, "default", name, **kwargs)

    def run(self, name: str = "run") -> BurnInRun:
        found = self.backend.get_run("default", name)
        assert found is not None
        return found

    def pass_(self, name: str = "run") -> float | None:
        return self.engine.reconcile("default", name).requeue_after


def world(
    node_count: int,
    tests: Mapping[str, BurnInTestSpec],
    entries: Sequence[Mapping[str, Any]],
    *,
    runner: ScriptedRunner | None = None,
    faults: Sequence[ExecutionFault] = (),
    seed: int = 7,
    node_list: Sequence[NodeView] | None = None,
    backend_cls: type[SimBackend] = SimBackend,
    **profile_spec: Any,
) -> World:
    runner = runner or ScriptedRunner()
    backend = backend_cls(
        list(node_list) if node_list is not None else nodes(node_count),
        runner=runner,
        seed=seed,
        faults=faults,
        profiles={"prof": profile(entries, **profile_spec)},
        tests=dict(tests),
    )
    return World(backend, Engine(backend), runner)


class Recorder(SimBackend):
    """A simulator that also keeps the order of every action the engine asked for."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log: list[tuple[str, str]] = []

    def write_status(self, run: Any, status: Any) -> Any:
        self.log.append(("status", str(status.phase)))
        return super().write_status(run, status)

    def write_metadata(self, run: Any, **kwargs: Any) -> Any:
        self.log.append(
            (
                "metadata",
                repr(sorted((kwargs.get("annotations") or {}).items()))
                + repr(kwargs.get("finalizers")),
            )
        )
        return super().write_metadata(run, **kwargs)

    def delete_execution(self, namespace: str, name: str) -> None:
        self.log.append(("delete", name))
        super().delete_execution(namespace, name)

    def create_execution(self, spec: Any) -> None:
        self.log.append(("create", spec.name))
        super().create_execution(spec)

    def update_node(self, name: str, **kwargs: Any) -> Any:
        self.log.append(("node", f"{name} {kwargs}"))
        return super().update_node(name, **kwargs)

    def deliver(self, delivery: Any) -> bool:
        self.log.append(("deliver", f"{delivery.reason} {delivery.key}"))
        return super().deliver(delivery)

    def kinds(self) -> list[str]:
        return [k for k, _ in self.log]


def reply(stdout: str = "", exit_code: int = 0) -> RunnerReply:
    return RunnerReply(stdout, exit_code)


GATE_MISCOMPARES = {"metric": "miscompares", "comparison": "Equal", "value": "0"}


class Interlock(SimBackend):
    """A simulator that measures the interlock at every instant the engine acts, and after
    every event: how many nodes carry a live execution, and how many carry this run's cordon.
    ``worst`` is the most of each seen; ``outside`` counts cordons the stored status did not
    account for, checked by :meth:`after_pass` once a pass has written what it decided."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.worst = [0, 0]
        self.outside: list[tuple[float, str]] = []

    def measure(self) -> None:
        loaded = {
            e.node
            for table in self._runs_exec.values()
            for e in table.live()  # every run
        }
        cordoned = [n for n in self.nodes.values() if n.annotations.get(CORDON_OWNER)]
        self.worst[0] = max(self.worst[0], len(loaded))
        self.worst[1] = max(self.worst[1], len(cordoned))

    def after_pass(self) -> None:
        """Every cordon this run holds is in its stored ``status.cordonedNodes``."""
        for run in self.runs.values():
            owner = f"{run.metadata.namespace}/{run.name}/{run.metadata.uid}"
            held = set((run.status.cordoned_nodes if run.status else None) or ())
            for node in self.nodes.values():
                if node.annotations.get(CORDON_OWNER) == owner and node.name not in held:
                    self.outside.append((self.t, node.name))

    def update_node(self, name: str, **kwargs: Any) -> Any:
        out = super().update_node(name, **kwargs)
        self.measure()
        return out

    def create_execution(self, spec: Any) -> None:
        super().create_execution(spec)
        self.measure()

    def _apply(self, event: Any) -> bool:
        applied = super()._apply(event)
        self.measure()
        return applied
