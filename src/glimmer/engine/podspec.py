"""The runner execution, built in one place for every scope (§2.16).

Names, labels, the never-evict annotation, the one extra toleration (the run's own cordon
taint), placement by hostname, the deadline and the environment come from here, so Node, Pair
and Group executions cannot drift apart. Image resolution may fail; that failure becomes an
Error attempt of the unit (the caller's business), never a run refusal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from glimmer.api.pinned import PlannedTest
from glimmer.api.run import BurnInRun
from glimmer.engine.backend import ExecutionSpec
from glimmer.engine.keys import (
    ATTEMPT_LABEL,
    HOSTNAME_LABEL,
    NODE_LABEL,
    PAIR_ROLE_LABEL,
    RANK_LABEL,
    RUN_LABEL,
    SAFE_TO_EVICT,
    TEST_LABEL,
    UNSCHEDULABLE_TAINT,
)
from glimmer.engine.names import execution_name
from glimmer.plan.env import (
    GroupPlace,
    PairPlace,
    active_deadline_seconds,
    effective_env,
    execution_duration,
    runner_env,
)
from glimmer.plan.images import resolve_image

_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
MAX_VOLUME_NAME = 63


@dataclass(frozen=True)
class Placement:
    """Where one execution of a unit goes and what it is in the unit."""

    node: str
    unit_nodes: tuple[str, ...]
    role: str = ""  # "", server, client, rank-<i>
    place: PairPlace | GroupPlace | None = None
    service: str = ""


def volume_name(index: int, mount_path: str) -> str:
    """``host-<i>-<mountPath lower-cased, non-alphanumerics as '-'>``, at most 63 characters."""
    slug = _NOT_ALNUM.sub("-", mount_path.lower())
    return f"host-{index}-{slug.strip('-')}"[:MAX_VOLUME_NAME].strip("-")


def _volumes(test: PlannedTest) -> tuple[Mapping[str, Any], ...]:
    runner = test.spec.runner
    out = []
    for i, mount in enumerate((runner.host_paths if runner else None) or ()):
        host_path: dict[str, Any] = {"path": mount.path}
        if mount.type:
            host_path["type"] = mount.type
        out.append(
            {
                "name": volume_name(i, mount.mount_path),
                "hostPath": host_path,
                "mountPath": mount.mount_path,
                "readOnly": mount.read_only,
            }
        )
    return tuple(out)


def _tolerations(run: BurnInRun) -> tuple[Mapping[str, Any], ...]:
    own = [
        t.model_dump(by_alias=True, exclude_none=True) for t in run.spec.target.tolerations or ()
    ]
    own.append({"key": UNSCHEDULABLE_TAINT, "operator": "Exists", "effect": "NoSchedule"})
    return tuple(own)


def _labels(run: BurnInRun, test: PlannedTest, where: Placement, attempt: int) -> dict[str, str]:
    labels = {
        RUN_LABEL: run.name,
        TEST_LABEL: test.name,
        NODE_LABEL: where.node,
        ATTEMPT_LABEL: str(attempt),
    }
    if isinstance(where.place, PairPlace):
        labels[PAIR_ROLE_LABEL] = where.place.role
    elif isinstance(where.place, GroupPlace):
        labels[RANK_LABEL] = str(where.place.rank)
    return labels


def _pod(run: BurnInRun, test: PlannedTest, where: Placement) -> dict[str, Any]:
    spec = test.spec
    runner = spec.runner
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "nodeSelector": {HOSTNAME_LABEL: where.node},
        "hostNetwork": spec.host_network,
    }
    if runner is not None:
        if runner.priority_class_name:
            pod["priorityClassName"] = runner.priority_class_name
        if runner.command:
            pod["command"] = list(runner.command)
        if runner.args:
            pod["args"] = list(runner.args)
        if runner.readiness_probe:
            pod["readinessProbe"] = dict(runner.readiness_probe)
        security: dict[str, Any] = {}
        if runner.privileged:
            security["privileged"] = True
        if runner.run_as_user is not None:
            security["runAsUser"] = runner.run_as_user
        if security:
            pod["securityContext"] = security
    if spec.resources is not None:
        pod["resources"] = spec.resources.model_dump(by_alias=True, exclude_none=True)
    if where.service:
        pod["hostname"] = where.role
        pod["subdomain"] = where.service
        if spec.host_network:
            pod["dnsPolicy"] = "ClusterFirstWithHostNet"
    return pod


def build_execution(
    run: BurnInRun,
    test: PlannedTest,
    test_index: int,
    attempt: int,
    where: Placement,
    vendor: str = "",
) -> ExecutionSpec:
    """The execution of ``attempt`` of ``test`` at ``where``. Raises ``ImageError``."""
    spec = test.spec
    image = resolve_image(spec, vendor)
    env = effective_env(runner_env(spec, attempt, test.axes, where.place))
    place = where.place
    return ExecutionSpec(
        name=execution_name(
            run.name, run.metadata.uid or "", test_index, where.node, attempt, where.role
        ),
        namespace=run.metadata.namespace or "default",
        run=run.name,
        run_uid=run.metadata.uid or "",
        test=test.name,
        test_index=test_index,
        kind=spec.kind,
        scope=str(spec.scope.value),
        node=where.node,
        unit_nodes=where.unit_nodes,
        attempt=attempt,
        role=where.role,
        rank=place.rank if isinstance(place, GroupPlace) else None,
        nranks=place.nranks if isinstance(place, GroupPlace) else None,
        image=image,
        env=tuple((n, v.value) for n, v in env.items() if v.value is not None),
        duration_seconds=execution_duration(spec),
        active_deadline_seconds=active_deadline_seconds(spec),
        labels=_labels(run, test, where, attempt),
        annotations={SAFE_TO_EVICT: "false"},
        tolerations=_tolerations(run),
        volumes=_volumes(test),
        test_spec=spec,
        service=where.service,
        pod=_pod(run, test, where),
    )
