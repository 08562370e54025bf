"""A pod of a built-in kind runs that kind: the engine resolves the kind's default image (one
of glimmer's per-kind tags, contract/images.py), backends/kubernetes/podspec.py renders it with
no command and no args, and the image's entrypoint (read from its Containerfile stage) starts
the runner of that kind. A test's own command and args still win."""

from __future__ import annotations

from typing import Any

import pytest
from engine_world import ScriptedRunner, run_object, spec_of, world

from glimmer.backends.kubernetes.podspec import pod_of
from glimmer.contract.images import ENTRYPOINT
from glimmer.contract.kinds import BUILT_IN, KindSpec
from glimmer.contract.vocab import Scope
from glimmer.engine.backend import ExecutionSpec
from tests.deploy.containerfile import runs

WITH_DEFAULT = [k for k in BUILT_IN.values() if k.default_image is not None]


def _specs(kind: KindSpec, **runner: Any) -> list[ExecutionSpec]:
    node = Scope.NODE in kind.scopes
    fields: dict[str, Any] = {"runner": runner} if runner else {}
    if not node:
        fields.update(scope="Pair", hostNetwork=True)
    targets = ["node-000"] if node else ["node-000", "node-001"]
    tests = {"t": spec_of(kind.name, **fields)}
    w = world(len(targets), tests, [{"testRef": "t"}], runner=ScriptedRunner(default="ok"))
    w.submit(run_object(targets=targets, maxConcurrentNodes=len(targets)))
    w.drive()
    made = w.backend.executions("default", "run", w.run().metadata.uid)
    assert made, f"no execution of {kind.name}"
    return [e.spec for e in made]


def _container(spec: ExecutionSpec) -> dict[str, Any]:
    (container,) = pod_of(spec)["spec"]["containers"]
    assert isinstance(container, dict)
    return container


def _runs(container: dict[str, Any]) -> list[str]:
    return runs(container["image"], container.get("command", []), container.get("args", []))


@pytest.mark.parametrize("kind", WITH_DEFAULT, ids=lambda k: k.name)
def test_a_rendered_pod_of_a_kind_runs_that_kind(kind: KindSpec) -> None:
    for spec in _specs(kind):
        container = _container(spec)
        assert container["image"] == kind.default_image
        assert "command" not in container and "args" not in container
        assert _runs(container) == [*ENTRYPOINT, kind.name]


def test_a_tests_own_args_follow_the_kind_in_its_default_image() -> None:
    (spec,) = _specs(BUILT_IN["gemm-sweep"], args=["--verbose"])
    assert _runs(_container(spec)) == [*ENTRYPOINT, "gemm-sweep", "--verbose"]


def test_a_tests_own_command_replaces_the_entrypoint_of_its_default_image() -> None:
    (spec,) = _specs(BUILT_IN["gpu-burn"], command=["/bin/burn"], args=["--all"])
    container = _container(spec)
    assert container["image"] == BUILT_IN["gpu-burn"].default_image
    assert _runs(container) == ["/bin/burn", "--all"]
