"""Execution specs for the slurm substrate's job tests: a shell command as the test's runner
command, so a job's behaviour (exit code, environment, a listening port) is the test's own."""

from __future__ import annotations

import uuid
from typing import Any

from glimmer.api.test import BurnInTestSpec
from glimmer.engine.backend import ExecutionSpec, Resources, Seat

NAMESPACE = "default"
RUN = "run"
# Slurm keeps ended jobs listed by name for MinJobAge (300 s): a rerun on the same cluster must
# never find the jobs of the run before it, so names and uids carry this session's token.
TOKEN = uuid.uuid4().hex[:8]
UID = f"uid-{TOKEN}"
OTHER_UID = f"uid-other-{TOKEN}"


def n(name: str) -> str:
    """The execution (job) name ``name`` has in this session."""
    return f"{name}-{TOKEN}"


def spec(
    name: str,
    node: str,
    script: str,
    *,
    env: tuple[tuple[str, str], ...] = (),
    deadline: int = 120,
    probe: dict[str, Any] | None = None,
    role: str = "",
    unit_nodes: tuple[str, ...] | None = None,
    seat: Seat | None = None,
    run_uid: str = UID,
    gpus: int = 0,
) -> ExecutionSpec:
    """An execution named :func:`n` (``name``) running ``sh -c <script>`` on ``node``."""
    runner: dict[str, Any] = {"command": ["/bin/sh", "-c", script]}
    if probe is not None:
        runner["readinessProbe"] = probe
    test: dict[str, Any] = {"kind": "host-health", "durationSeconds": 5, "runner": runner}
    resources: tuple[tuple[str, str], ...] = ()
    if gpus:
        test["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
        resources = (("nvidia.com/gpu", str(gpus)),)
    return ExecutionSpec(
        name=n(name),
        namespace=NAMESPACE,
        run=RUN,
        run_uid=run_uid,
        test="t",
        test_index=0,
        kind="host-health",
        scope="Node" if not role else ("Pair" if role in ("server", "client") else "Group"),
        node=node,
        unit_nodes=unit_nodes or (node,),
        attempt=1,
        role=role,
        rank=int(role[5:]) if role.startswith("rank-") else None,
        nranks=len(unit_nodes) if unit_nodes and role.startswith("rank-") else None,
        image="",
        env=(("BURNIN_ATTEMPT", "1"), *env),
        duration_seconds=5,
        deadline_seconds=deadline,
        labels={"burnin.glimmer.ai/run": RUN},
        test_spec=BurnInTestSpec.model_validate(test),
        command=("/bin/sh", "-c", script),
        resources=Resources(limits=resources),
        seat=seat,
    )
