"""A host's half of a Pair or Group test on bare metal: the plan transform that makes each one
a Node unit on this host, and the relabelling that names its result after the link."""

from __future__ import annotations

from datetime import UTC, datetime

from glimmer.api.profile import BurnInProfile
from glimmer.api.result import TestResult
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.contract.vocab import Phase, Scope
from glimmer.plan.halves import GroupHalf, PairHalf, as_halves, relabel, relabel_result
from glimmer.plan.nodes import NodeInfo
from glimmer.plan.resolve import plan_tests
from glimmer.plan.start import Admitted, start_run

GATE = {"metric": "tcpRetransmits", "comparison": "Equal", "value": "0"}


def _spec(kind: str, scope: str, gates: bool = True) -> BurnInTestSpec:
    data: dict[str, object] = {"kind": kind, "scope": scope, "runner": {"image": "local"}}
    if gates:
        data["thresholds"] = [GATE]
    return BurnInTestSpec.model_validate(data)


def _profile(*entries: dict[str, object]) -> BurnInProfile:
    return BurnInProfile.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInProfile",
            "metadata": {"name": "mixed"},
            "spec": {"tests": list(entries)},
        }
    )


TESTS = {
    "link": _spec("tcp-baseline", "Pair"),
    "ring": _spec("nccl", "Group"),
    "disk": _spec("disk-io", "Node"),
}
PROFILE = _profile(
    {"testRef": "link"},
    {"testRef": "ring"},
    {"testRef": "disk"},
    {"inline": {"kind": "ib-write-bw", "scope": "Pair", "runner": {"image": "x"}}},
)


def test_every_pair_and_group_test_becomes_a_node_test_and_is_remembered_by_its_scope() -> None:
    halved = as_halves("mixed", {"mixed": PROFILE}, TESTS)
    planned = plan_tests(halved.profiles["mixed"], halved.tests)
    assert {p.name: p.spec.scope for p in planned} == {
        "link": Scope.NODE,
        "ring": Scope.NODE,
        "disk": Scope.NODE,
        "inline-3-ib-write-bw": Scope.NODE,
    }
    assert halved.scopes == {
        "link": Scope.PAIR,
        "ring": Scope.GROUP,
        "inline-3-ib-write-bw": Scope.PAIR,
    }
    assert halved.of_scope(Scope.PAIR) == ["link", "inline-3-ib-write-bw"]
    assert TESTS["link"].scope is Scope.PAIR  # the inputs are not changed in place


def test_a_half_plans_as_one_unit_on_this_single_node() -> None:
    halved = as_halves("mixed", {"mixed": PROFILE}, TESTS)
    run = BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "r", "namespace": "default", "uid": "u"},
            "spec": {"profileRef": "mixed", "target": {"nodeNames": ["here"]}},
        }
    )
    decision = start_run(
        run, halved.profiles["mixed"], halved.tests, [NodeInfo("here")], [], datetime.now(UTC)
    )
    assert isinstance(decision, Admitted)  # a Pair test on one node is refused unhalved
    assert decision.plan.targets == ["here"]


def test_the_server_half_of_a_link_carries_no_gates_and_the_client_keeps_them() -> None:
    server = as_halves("mixed", {"mixed": PROFILE}, TESTS, server=True)
    client = as_halves("mixed", {"mixed": PROFILE}, TESTS)
    assert server.tests["link"].thresholds is None
    assert server.tests["ring"].thresholds is not None  # only a link's server loses them
    assert client.tests["link"].thresholds is not None


def test_a_profile_without_pair_or_group_tests_is_given_back_as_it_was() -> None:
    profile = _profile({"testRef": "disk"})
    halved = as_halves("mixed", {"mixed": profile}, TESTS)
    assert halved.scopes == {} and halved.profiles == {"mixed": profile}


def test_an_unknown_profile_is_left_to_the_callers_own_check() -> None:
    halved = as_halves("nope", {}, TESTS)
    assert halved.scopes == {} and halved.profiles == {}


def _result(name: str, node: str) -> TestResult:
    return TestResult(name=name, kind="tcp-baseline", scope=Scope.NODE, phase=Phase.PASSED,
                      nodes=[node])  # fmt: skip


def test_the_client_names_the_link_server_first_and_the_server_names_it_the_same_way() -> None:
    halved = as_halves("mixed", {"mixed": PROFILE}, TESTS)
    client = relabel_result(_result("link", "b"), halved, PairHalf("client", "10.0.0.1", "a"))
    server = relabel_result(_result("link", "a"), halved, PairHalf("server", None, "b"))
    assert client.nodes == ["a", "b"] and client.scope is Scope.PAIR
    assert server.nodes == ["a", "b"]


def test_a_rank_and_a_node_test_keep_their_own_node() -> None:
    halved = as_halves("mixed", {"mixed": PROFILE}, TESTS)
    rank = relabel_result(_result("ring", "r1"), halved, GroupHalf(1, 3, "10.0.0.1", "r0"))
    disk = relabel_result(_result("disk", "r1"), halved, GroupHalf(1, 3, "10.0.0.1", "r0"))
    unflagged = relabel_result(_result("link", "b"), halved, None)
    assert (rank.nodes, rank.scope) == (["r1"], Scope.GROUP)
    assert (disk.nodes, disk.scope) == (["r1"], Scope.NODE)
    assert (unflagged.nodes, unflagged.scope) == (["b"], Scope.PAIR)


def test_relabel_changes_the_runs_results_and_leaves_the_run_read_alone() -> None:
    halved = as_halves("mixed", {"mixed": PROFILE}, TESTS)
    run = BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "r"},
            "spec": {"profileRef": "mixed", "target": {"nodeNames": ["b"]}},
            "status": {"phase": "Passed", "results": [_result("link", "b").model_dump()]},
        }
    )
    labelled = relabel(run, halved, PairHalf("client", "10.0.0.1", "a"))
    assert labelled.status is not None and run.status is not None
    assert (labelled.status.results or [])[0].nodes == ["a", "b"]
    assert (run.status.results or [])[0].nodes == ["b"]
