"""The dry run's view of a plan: the planner's own decision, the first execution, unknown nodes."""

from plan_builders import T0, gate, node, profile, run, spec

from glimmer.api.profile import BurnInProfile
from glimmer.api.target import TargetSelector
from glimmer.api.test import BurnInTestSpec
from glimmer.plan.decision import Admitted, Refused
from glimmer.plan.preview import SERVICE_PLACEHOLDER, first_execution, preview
from glimmer.plan.targets import unknown_node_names

NODES = [node("gpu-01"), node("gpu-02"), node("gpu-03")]


def _profile(scope: str = "Node") -> tuple[BurnInProfile, dict[str, BurnInTestSpec]]:
    tests = {"t": spec("clockprobe", scope=scope, durationSeconds=60, thresholds=[gate("x")])}
    return profile({"testRef": "t"}), tests


def test_a_node_plan_previews_its_first_execution_with_its_environment() -> None:
    prof, tests = _profile()
    decision = preview(run(nodes=["gpu-02", "gpu-01"]), prof, tests, NODES, T0)
    assert isinstance(decision, Admitted)
    first = first_execution(decision.plan, "lab")
    assert first is not None
    assert (first.test, first.node, first.role, first.duration_seconds) == ("t", "gpu-02", "", 60)
    assert dict(first.env) == {"BURNIN_DURATION_SECONDS": "60", "BURNIN_ATTEMPT": "1"}


def test_a_pair_plan_previews_the_server_with_a_placeholder_service() -> None:
    prof, tests = _profile("Pair")
    decision = preview(
        run(nodes=["gpu-01", "gpu-02"], maxConcurrentNodes=2), prof, tests, NODES, T0
    )
    assert isinstance(decision, Admitted)
    first = first_execution(decision.plan, "lab")
    assert first is not None and first.role == "server"
    env = dict(first.env)
    assert env["BURNIN_ROLE"] == "server" and env["BURNIN_PEER_NODE"] == "gpu-02"
    assert SERVICE_PLACEHOLDER in env["BURNIN_PEER_HOST"]


def test_the_preview_refuses_what_start_refuses() -> None:
    prof, tests = _profile("Pair")
    decision = preview(run(nodes=["gpu-01", "gpu-02", "gpu-03"]), prof, tests, NODES, T0)
    assert isinstance(decision, Refused) and "exactly 2 targets" in decision.message


def test_unknown_node_names_are_named_once_in_the_order_given() -> None:
    target = TargetSelector(node_names=["gpu-09", "gpu-01", "gpu-09", "gpu-07"])
    assert unknown_node_names(target, NODES) == ["gpu-09", "gpu-07"]
    assert unknown_node_names(TargetSelector(node_selector={"a": "b"}), NODES) == []
