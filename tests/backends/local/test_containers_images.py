"""A container of a built-in kind runs that kind: the engine's request for a test that names no
image carries the kind's default image (one of glimmer's per-kind tags), the §8.2 command line
(backends/local/containers.py) adds nothing after it, and the image's entrypoint (read from its
Containerfile stage) starts the runner of that kind. A test's own command and args still win,
as ``--entrypoint`` and the words after the image."""

from __future__ import annotations

from typing import Any

import pytest
from engine_world import ScriptedRunner, run_object, spec_of, world

from glimmer.backends.local.containers import ContainerRuntime
from glimmer.contract.images import ENTRYPOINT
from glimmer.contract.kinds import BUILT_IN, KindSpec
from glimmer.contract.vocab import Scope
from glimmer.engine.backend import ExecutionSpec
from tests.deploy.containerfile import runs

RUNTIMES = [ContainerRuntime(name, name) for name in ("docker", "podman", "nerdctl")]
NODE_KINDS = [
    k for k in BUILT_IN.values() if k.default_image is not None and Scope.NODE in k.scopes
]


def _spec(kind: str, **runner: Any) -> ExecutionSpec:
    test = spec_of(kind, **({"runner": runner} if runner else {}))
    w = world(1, {"t": test}, [{"testRef": "t"}], runner=ScriptedRunner(default="ok"))
    w.submit(run_object(targets=["node-000"]))
    w.drive()
    (made,) = w.backend.executions("default", "run", w.run().metadata.uid)
    return made.spec


def _runs(runtime: ContainerRuntime, spec: ExecutionSpec) -> list[str]:
    """What the container started by ``runtime``'s command line runs: ``--entrypoint`` and the
    words after the image, or the image's entrypoint and those words."""
    argv = runtime.run_argv(spec, scan=lambda _path: [])
    at = argv.index(spec.image)
    after = argv[at + 1 :]
    if "--entrypoint" in argv[:at]:
        return [argv[argv.index("--entrypoint") + 1], *after]
    return runs(spec.image, [], after)


@pytest.mark.parametrize("runtime", RUNTIMES, ids=lambda r: r.name)
@pytest.mark.parametrize("kind", NODE_KINDS, ids=lambda k: k.name)
def test_a_container_of_a_kind_runs_that_kind(kind: KindSpec, runtime: ContainerRuntime) -> None:
    spec = _spec(kind.name)
    assert spec.image == kind.default_image
    argv = runtime.run_argv(spec, scan=lambda _path: [])
    assert argv[-1] == spec.image  # nothing after the image: its entrypoint names the kind
    assert _runs(runtime, spec) == [*ENTRYPOINT, kind.name]


def test_a_tests_own_args_follow_the_kind_in_its_default_image() -> None:
    spec = _spec("memory-stress", args=["--verbose"])
    assert _runs(RUNTIMES[0], spec) == [*ENTRYPOINT, "memory-stress", "--verbose"]


def test_a_tests_own_command_replaces_the_entrypoint_of_its_default_image() -> None:
    spec = _spec("clockprobe", command=["/bin/probe", "-x"], args=["--all"])
    assert spec.image == BUILT_IN["clockprobe"].default_image
    assert _runs(RUNTIMES[0], spec) == ["/bin/probe", "-x", "--all"]
