"""The runner execution, built in one place for every scope (§2.16).

Names, identity labels, placement on the node, the deadline, the environment, the mounts and
the privileges come from here, so Node, Pair and Group executions cannot drift apart. The
request is substrate-neutral: how it becomes a Pod (or a Slurm step, or a process) is the
substrate's (:mod:`glimmer.backends.kubernetes.podspec` for a Pod). Image resolution may fail;
that failure becomes an Error attempt of the unit (the caller's business), never a run refusal.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from glimmer.api.k8s import ResourceRequirements
from glimmer.api.pinned import PlannedTest
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.engine.backend import (
    Backend,
    ExecutionSpec,
    Mount,
    Privileges,
    Resources,
    Seat,
)
from glimmer.engine.keys import (
    ATTEMPT_LABEL,
    NODE_LABEL,
    PAIR_ROLE_LABEL,
    RANK_LABEL,
    RUN_LABEL,
    TEST_LABEL,
)
from glimmer.engine.names import execution_name
from glimmer.plan.env import (
    GroupPlace,
    PairPlace,
    active_deadline_seconds,
    address_env,
    effective_env,
    execution_duration,
    peer_role,
    runner_env,
)
from glimmer.plan.images import ImageError, resolve_image
from glimmer.plan.quantity import canonical_quantity


@dataclass(frozen=True)
class Placement:
    """Where one execution of a unit goes and what it is in the unit."""

    node: str
    unit_nodes: tuple[str, ...]
    role: str = ""  # "", server, client, rank-<i>
    place: PairPlace | GroupPlace | None = None
    service: str = ""


def _mounts(spec: BurnInTestSpec) -> tuple[Mount, ...]:
    runner = spec.runner
    return tuple(
        Mount(m.path, m.mount_path, m.read_only, str(m.type or ""))
        for m in (runner.host_paths if runner else None) or ()
    )


def _pairs(quantities: dict[str, object] | None) -> tuple[tuple[str, str], ...]:
    return tuple((name, canonical_quantity(str(q))) for name, q in (quantities or {}).items())


def _resources(resources: ResourceRequirements | None) -> Resources:
    if resources is None:
        return Resources()
    return Resources(_pairs(dict(resources.limits or {})), _pairs(dict(resources.requests or {})))


def _privileges(spec: BurnInTestSpec) -> Privileges:
    runner = spec.runner
    return Privileges(
        privileged=bool(runner and runner.privileged),
        run_as_user=runner.run_as_user if runner else None,
        host_network=bool(spec.host_network),
    )


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


def _seat(where: Placement, env_names: frozenset[str], overridden: frozenset[str]) -> Seat | None:
    if not where.service or where.place is None:
        return None
    variable = address_env(where.place)
    # A test that sets the variable itself keeps its value: the substrate is not asked.
    owned = variable if variable in env_names and variable not in overridden else ""
    return Seat(where.service, peer_role(where.place), owned)


def _image_if_any(spec: BurnInTestSpec, vendor: str) -> str:
    try:
        return resolve_image(spec, vendor)
    except ImageError:
        return ""  # the substrate runs no image: nothing is missing


@dataclass(frozen=True)
class Fixed:
    """What an execution of one attempt of one test at one place is whatever its node: the
    same for every node of a Node test, so an engine builds it once (:func:`build_execution`'s
    ``memo``)."""

    image: str
    env: tuple[tuple[str, str], ...]
    env_names: frozenset[str]
    overridden: frozenset[str]
    duration_seconds: int
    deadline_seconds: int
    command: tuple[str, ...]
    args: tuple[str, ...]
    mounts: tuple[Mount, ...]
    resources: Resources
    privileges: Privileges


# Parts kept per memo before it starts over (Pair and Group places differ per unit).
MAX_FIXED = 4096
FixedKey = tuple[int, int, PairPlace | GroupPlace | None, str, bool]


def _fixed(
    test: PlannedTest, attempt: int, place: PairPlace | GroupPlace | None, vendor: str, images: bool
) -> Fixed:
    spec = test.spec
    image = resolve_image(spec, vendor) if images else _image_if_any(spec, vendor)
    env = effective_env(runner_env(spec, attempt, test.axes, place))
    runner = spec.runner
    return Fixed(
        image=image,
        env=tuple((n, v.value) for n, v in env.items() if v.value is not None),
        env_names=frozenset(env),
        overridden=frozenset(v.name for v in (runner.env if runner else None) or ()),
        duration_seconds=execution_duration(spec),
        deadline_seconds=active_deadline_seconds(spec),
        command=tuple(runner.command or ()) if runner else (),
        args=tuple(runner.args or ()) if runner else (),
        mounts=_mounts(spec),
        resources=_resources(spec.resources),
        privileges=_privileges(spec),
    )


def build_execution(
    run: BurnInRun,
    test: PlannedTest,
    test_index: int,
    attempt: int,
    where: Placement,
    vendor: str = "",
    *,
    images: bool = True,
    memo: dict[FixedKey, Fixed] | None = None,
) -> ExecutionSpec:
    """The execution of ``attempt`` of ``test`` at ``where``. Raises ``ImageError`` when
    ``images`` (the substrate runs images) and none resolves; without, the image is the one
    the test names, or "".

    ``memo`` keeps what does not depend on the node (:class:`Fixed`) for the caller, keyed by
    test index: it must be dropped when the plan changes. A failed image resolution is never
    kept, so it raises again for the next node."""
    place = where.place
    fixed: Fixed | None = None
    key: FixedKey = (test_index, attempt, place, vendor, images)
    if memo is not None:
        fixed = memo.get(key)
    if fixed is None:
        fixed = _fixed(test, attempt, place, vendor, images)
        if memo is not None:
            if len(memo) >= MAX_FIXED:
                memo.clear()
            memo[key] = fixed
    spec = test.spec
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
        image=fixed.image,
        env=fixed.env,
        duration_seconds=fixed.duration_seconds,
        deadline_seconds=fixed.deadline_seconds,
        labels=_labels(run, test, where, attempt),
        test_spec=spec,
        command=fixed.command,
        args=fixed.args,
        mounts=fixed.mounts,
        resources=fixed.resources,
        privileges=fixed.privileges,
        seat=_seat(where, fixed.env_names, fixed.overridden),
    )


def addressed(spec: ExecutionSpec, backend: Backend) -> ExecutionSpec:
    """``spec`` with its rendezvous address variable set to the substrate's answer for the peer
    (or root) role; unchanged for a Node execution or one whose test sets the variable."""
    seat = spec.seat
    if seat is None or not seat.address_env:
        return spec
    address = backend.rendezvous_address(spec.namespace, seat.rendezvous, seat.peer_role)
    env = tuple((k, address if k == seat.address_env else v) for k, v in spec.env)
    return spec if env == spec.env else dataclasses.replace(spec, env=env)
