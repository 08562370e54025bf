"""A host's half of a Pair or Group test, for burn-in on bare metal without a cluster (§8).

On bare metal no process sees both ends of a link or every rank of a collective: each host runs
its OWN half (``glimmer run --backend local --role server|client`` or ``--rank i``). The engine
stays as it is; what changes is the plan it is given. :func:`as_halves` turns every Pair and
Group test of the profile into a Node test, so the engine runs it as one execution on this node,
harvests it through the runner contract and judges it by its own gates and the empty-harvest
rule, as for any Node test. Which planned tests were halves, and of what scope, comes back
beside the transformed inputs: the substrate (``backends/local/halves``) adds the rendezvous
variables to those executions, and :func:`relabel` names their results as the link or rank they
are about.

Why a scope change and not a new unit kind: a Pair unit needs two targets and a Group unit one
per rank (the plan refuses anything else, §2.4), and both wait for executions this host will
never see. A half is exactly a Node unit — one node, one execution, one result — so nothing in
the engine or the verdict layer is restated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from glimmer.api.profile import BurnInProfile
from glimmer.api.result import TestResult
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.contract.vocab import Scope
from glimmer.plan.builtin import profile_or_builtin
from glimmer.plan.env import PEER_HOST, ROOT_HOST, PairRole
from glimmer.plan.resolve import ResolveError, plan_tests
from glimmer.plan.units import scope_of

HALF_SCOPES = (Scope.PAIR, Scope.GROUP)


@dataclass(frozen=True)
class PairHalf:
    """This host's end of every Pair test: its role, the server's address (the client's only)
    and the peer's name (for messages and for naming the link)."""

    role: PairRole
    peer_host: str | None
    peer_node: str


@dataclass(frozen=True)
class GroupHalf:
    """This host's rank in every Group test, the rank count and rank 0's address and name
    (rank 0 may give its own listen address, or none)."""

    rank: int
    nranks: int
    root_host: str | None
    root_node: str


Half = PairHalf | GroupHalf


@dataclass(frozen=True)
class Halved:
    """The inputs the engine is given, and which planned tests are halves (name -> the scope
    they were written with)."""

    profiles: dict[str, BurnInProfile]
    tests: dict[str, BurnInTestSpec]
    scopes: dict[str, Scope]

    def of_scope(self, scope: Scope) -> list[str]:
        """The planned tests that were written with ``scope``, in plan order."""
        return [name for name, written in self.scopes.items() if written is scope]


def _as_node(spec: BurnInTestSpec, server: bool) -> BurnInTestSpec:
    scope = scope_of(spec)
    if scope not in HALF_SCOPES:
        return spec
    update: dict[str, object] = {"scope": Scope.NODE}
    if server and scope is Scope.PAIR:
        update["thresholds"] = None
    return spec.model_copy(update=update, deep=True)


def _profile_as_node(profile: BurnInProfile, server: bool) -> BurnInProfile:
    entries = [
        entry.model_copy(update={"inline": _as_node(entry.inline, server)})
        if entry.inline is not None
        else entry
        for entry in profile.spec.tests
    ]
    spec = profile.spec.model_copy(update={"tests": entries})
    return profile.model_copy(update={"spec": spec})


def as_halves(
    ref: str,
    profiles: Mapping[str, BurnInProfile],
    tests: Mapping[str, BurnInTestSpec],
    *,
    server: bool = False,
) -> Halved:
    """The profile ``ref`` (given or built in) and its tests with every Pair and Group test made
    a Node test, and the planned tests that were. A profile that does not resolve is given back
    as it was: the caller's own checks name what is wrong with it.

    ``server``: this host is the server of every link, whose half is judged by its runner
    alone, so its Pair tests lose their gates. A link's gates are about what the client
    measures (tcp-baseline's server prints no throughput at all): on the server they would fail
    closed on readings it never takes, and the server's record is not the link's verdict."""
    found = profile_or_builtin(ref, profiles.get(ref), tests)
    if found is None:
        return Halved(dict(profiles), dict(tests), {})
    profile, known = found
    try:
        planned = plan_tests(profile, known)
    except ResolveError:
        return Halved(dict(profiles), dict(tests), {})
    scopes = {p.name: scope_of(p.spec) for p in planned if scope_of(p.spec) in HALF_SCOPES}
    if not scopes:
        return Halved(dict(profiles), dict(tests), {})
    halved_tests = {name: _as_node(spec, server) for name, spec in known.items()}
    return Halved({**profiles, ref: _profile_as_node(profile, server)}, halved_tests, scopes)


def half_nodes(scope: Scope, half: Half | None, node: str) -> list[str]:
    """The nodes a half of ``scope`` is about: a link names ``[server, client]``, so the
    client's ``[peerNode, node]`` and the server's ``[node, peerNode]``; a rank names its own
    node (the collective is named by ``glimmer merge``, in rank order), as does a half run
    without its flags (the runner skips: there is no link to name)."""
    if scope is Scope.PAIR and isinstance(half, PairHalf) and half.peer_node:
        return [half.peer_node, node] if half.role == "client" else [node, half.peer_node]
    return [node]


def relabel_result(result: TestResult, halved: Halved, half: Half | None) -> TestResult:
    """``result`` named as what it is about: a half's scope as written and its link's nodes;
    any other result unchanged."""
    scope = halved.scopes.get(result.name)
    if scope is None:
        return result
    nodes = half_nodes(scope, half, (result.nodes or [""])[0])
    return result.model_copy(update={"scope": scope, "nodes": nodes})


def relabel(run: BurnInRun, halved: Halved, half: Half | None) -> BurnInRun:
    """The run with every half's result relabelled (:func:`relabel_result`)."""
    status = run.status
    if status is None or not status.results or not halved.scopes:
        return run
    results = [relabel_result(r, halved, half) for r in status.results]
    return run.model_copy(update={"status": status.model_copy(update={"results": results})})


PAIR_NAMES = ("BURNIN_ROLE", PEER_HOST, "BURNIN_PEER_NODE")
GROUP_NAMES = ("BURNIN_RANK", "BURNIN_NRANKS", ROOT_HOST, "BURNIN_ROOT_NODE")
RENDEZVOUS_NAMES = frozenset(PAIR_NAMES + GROUP_NAMES)


def _pair_env(half: PairHalf) -> list[tuple[str, str | None]]:
    return [
        ("BURNIN_ROLE", half.role),
        (PEER_HOST, half.peer_host),
        (PAIR_NAMES[2], half.peer_node),
    ]


def _group_env(half: GroupHalf) -> list[tuple[str, str | None]]:
    return [
        ("BURNIN_RANK", str(half.rank)),
        ("BURNIN_NRANKS", str(half.nranks)),
        (ROOT_HOST, half.root_host),
        ("BURNIN_ROOT_NODE", half.root_node),
    ]


def half_variables(scope: Scope, half: Half | None) -> list[tuple[str, str]]:
    """The rendezvous variables a half of a test written with ``scope`` is given: those of
    ``half`` when it is a half of that scope, each only when a flag gave it a value."""
    if scope is Scope.PAIR and isinstance(half, PairHalf):
        return [(k, v) for k, v in _pair_env(half) if v]
    if scope is Scope.GROUP and isinstance(half, GroupHalf):
        return [(k, v) for k, v in _group_env(half) if v]
    return []
