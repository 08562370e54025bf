"""The runner's environment and time budget (§2.16, §3.5), one pure function each, shared by
every scope and every backend.

Order of the environment (later duplicates win, as in a pod spec):

1. ``BURNIN_DURATION_SECONDS``, ``BURNIN_ATTEMPT``;
2. ``BURNIN_RESOURCE_LIMITS`` (``name=quantity`` sorted by name, canonical quantities), only
   when the test sets limits;
3. ``BURNIN_VARIANT_<AXIS>`` per axis, sorted by axis, upper-cased;
4. Pair: ``BURNIN_ROLE``, ``BURNIN_PEER_HOST``, ``BURNIN_PEER_NODE``; Group: ``BURNIN_RANK``,
   ``BURNIN_NRANKS``, ``BURNIN_ROOT_HOST``, ``BURNIN_ROOT_NODE`` and no ``BURNIN_ROLE`` (a rank
   is not a server or a client, and a Pair-only runner must see it is not in a pair). The
   ``*_HOST`` values here are the neutral ``<role>.<rendezvous>``; the engine replaces them with
   the substrate's address for that role when it creates the execution;
5. ``spec.runner.env``, last, so a test can override anything above.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from glimmer.api.k8s import EnvVar
from glimmer.api.overlay import variant_env
from glimmer.api.test import BurnInTestSpec
from glimmer.contract.vocab import Scope
from glimmer.plan.quantity import canonical_quantity
from glimmer.plan.units import scope_of

DEFAULT_DURATION_SECONDS = 600
# activeDeadlineSeconds = execution + 120 s; a Group rank also waits for peers the engine has
# not created yet (workers start only once rank 0 is Ready), hence 300 s more there.
DEADLINE_GRACE_SECONDS = 120
GROUP_RENDEZVOUS_GRACE_SECONDS = 300
# How long an execution may stay unscheduled or unstarted before it is overdue.
SCHEDULING_GRACE_SECONDS = 300

PairRole = Literal["server", "client"]


def is_segmented(spec: BurnInTestSpec) -> bool:
    return spec.soak is not None and spec.soak.segment_seconds > 0


def execution_duration(spec: BurnInTestSpec) -> int:
    """Seconds one execution runs: one segment of a segmented soak, else ``durationSeconds``,
    else the kind default of 600."""
    if spec.soak is not None and spec.soak.segment_seconds > 0:
        return spec.soak.segment_seconds
    return spec.duration_seconds or DEFAULT_DURATION_SECONDS


def active_deadline_seconds(spec: BurnInTestSpec) -> int:
    """The execution's hard deadline: its duration + 120 s, + 300 s more at Group scope."""
    deadline = execution_duration(spec) + DEADLINE_GRACE_SECONDS
    if scope_of(spec) is Scope.GROUP:
        deadline += GROUP_RENDEZVOUS_GRACE_SECONDS
    return deadline


def pod_window_seconds(spec: BurnInTestSpec) -> int:
    """How long an execution may exist without completing before it is overdue:
    (duration + 120 s) + 300 s of scheduling grace. Also sizes the heat declaration."""
    return execution_duration(spec) + DEADLINE_GRACE_SECONDS + SCHEDULING_GRACE_SECONDS


PEER_HOST = "BURNIN_PEER_HOST"
ROOT_HOST = "BURNIN_ROOT_HOST"


def rendezvous_host(role: str, service: str) -> str:
    """``<role>.<rendezvous>``: the execution of ``role`` named within its rendezvous, before a
    substrate says how it is reached (the engine asks it when creating the execution)."""
    return f"{role}.{service}"


@dataclass(frozen=True)
class PairPlace:
    """This execution's end of a link."""

    role: PairRole
    peer_host: str
    peer_node: str


@dataclass(frozen=True)
class GroupPlace:
    """This execution's rank in a collective."""

    rank: int
    nranks: int
    root_host: str
    root_node: str


def pair_place(role: PairRole, peer_node: str, service: str, namespace: str = "") -> PairPlace:
    """The Pair environment of ``role``, whose peer is the other role on ``peer_node``.
    ``namespace`` no longer shapes the name (the substrate's address does); it stays in the
    signature the units and the preview call."""
    peer: PairRole = "client" if role == "server" else "server"
    return PairPlace(role, rendezvous_host(peer, service), peer_node)


def group_place(
    rank: int, nranks: int, root_node: str, service: str, namespace: str = ""
) -> GroupPlace:
    """The Group environment of ``rank`` among ``nranks``, rank 0 being on ``root_node``
    (``namespace``: as for :func:`pair_place`)."""
    return GroupPlace(rank, nranks, rendezvous_host("rank-0", service), root_node)


def peer_role(place: PairPlace | GroupPlace) -> str:
    """The role whose address ``place`` is given: a Pair end's peer, a Group rank's rank 0."""
    if isinstance(place, PairPlace):
        return "client" if place.role == "server" else "server"
    return "rank-0"


def address_env(place: PairPlace | GroupPlace) -> str:
    """The variable that carries the address of :func:`peer_role`."""
    return PEER_HOST if isinstance(place, PairPlace) else ROOT_HOST


def resource_limits(spec: BurnInTestSpec) -> str | None:
    """``name=quantity,...`` of the test's resource limits, sorted, canonical; None if unset."""
    limits = spec.resources.limits if spec.resources is not None else None
    if not limits:
        return None
    return ",".join(f"{name}={canonical_quantity(limits[name])}" for name in sorted(limits))


def _var(name: str, value: str | int) -> EnvVar:
    return EnvVar(name=name, value=str(value))


def runner_env(
    spec: BurnInTestSpec,
    attempt: int,
    axes: Mapping[str, str] | None = None,
    place: PairPlace | GroupPlace | None = None,
) -> list[EnvVar]:
    """The runner's environment, in order, duplicates kept (the later one wins)."""
    env = [
        _var("BURNIN_DURATION_SECONDS", execution_duration(spec)),
        _var("BURNIN_ATTEMPT", attempt),
    ]
    limits = resource_limits(spec)
    if limits is not None:
        env.append(_var("BURNIN_RESOURCE_LIMITS", limits))
    env += variant_env(axes or {})
    if isinstance(place, PairPlace):
        env += [
            _var("BURNIN_ROLE", place.role),
            _var(PEER_HOST, place.peer_host),
            _var("BURNIN_PEER_NODE", place.peer_node),
        ]
    elif isinstance(place, GroupPlace):
        env += [
            _var("BURNIN_RANK", place.rank),
            _var("BURNIN_NRANKS", place.nranks),
            _var(ROOT_HOST, place.root_host),
            _var("BURNIN_ROOT_NODE", place.root_node),
        ]
    if spec.runner is not None:
        # The test's own variables as they are: callers read them and never change one (a deep
        # copy of each, per execution, was 2 % of a fleet's run).
        env += spec.runner.env or ()
    return env


def effective_env(env: Sequence[EnvVar]) -> dict[str, EnvVar]:
    """The environment a process sees: one variable per name, the later duplicate winning."""
    merged: dict[str, EnvVar] = {}
    for var in env:
        merged[var.name] = var
    return merged
