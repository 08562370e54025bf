import pytest
from hypothesis import given
from hypothesis import strategies as st
from plan_builders import node, run
from pydantic import ValidationError

from glimmer.api.target import TargetSelector
from glimmer.plan.nodes import NodeInfo
from glimmer.plan.targets import TargetError, resolve_quietly, resolve_targets

NODES = [node("gpu-03", pool="a"), node("gpu-01", pool="a", rack="r1"), node("cpu-01", pool="b")]


def test_node_names_are_taken_verbatim_order_and_duplicates_kept() -> None:
    target = TargetSelector(node_names=["gpu-02", "gpu-01", "gpu-02"])
    assert resolve_targets(target, NODES) == ["gpu-02", "gpu-01", "gpu-02"]


def test_node_names_win_over_a_selector() -> None:
    target = TargetSelector(node_names=["x"], node_selector={"pool": "a"})
    assert resolve_targets(target, NODES) == ["x"]


def test_selector_matches_every_label_in_node_list_order() -> None:
    assert resolve_targets(TargetSelector(node_selector={"pool": "a"}), NODES) == [
        "gpu-03",
        "gpu-01",
    ]
    both = TargetSelector(node_selector={"pool": "a", "rack": "r1"})
    assert resolve_targets(both, NODES) == ["gpu-01"]


def test_empty_node_names_fall_back_to_the_selector() -> None:
    target = TargetSelector(node_names=[], node_selector={"pool": "b"})
    assert resolve_targets(target, NODES) == ["cpu-01"]


def test_selector_matching_nothing_is_an_error_naming_the_selector() -> None:
    with pytest.raises(TargetError) as caught:
        resolve_targets(TargetSelector(node_selector={"pool": "z", "a": "1"}), NODES)
    assert caught.value.message == "target nodeSelector a=1,pool=z matches no nodes"


def test_a_target_with_neither_names_nor_selector_selects_no_nodes() -> None:
    with pytest.raises(TargetError) as caught:
        resolve_targets(run(nodes=[]).spec.target, NODES)
    assert caught.value.message == "target selects no nodes"


def test_quiet_resolution_of_nothing_is_an_empty_list() -> None:
    assert resolve_quietly(TargetSelector(node_selector={"pool": "z"}), NODES) == []


def test_node_info_is_read_only_and_compares_by_value() -> None:
    labels = {"pool": "a"}
    info = NodeInfo("n", labels)
    labels["pool"] = "b"  # the caller's dict is copied, not shared
    assert info.labels["pool"] == "a"
    with pytest.raises(TypeError):
        info.labels["pool"] = "c"  # type: ignore[index]
    assert info == NodeInfo("n", {"pool": "a"})


LABEL_NAME = st.from_regex(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?", fullmatch=True)
OPERATOR_SIGN = st.sampled_from(["!", "=", "(", ")", ",", " "])


@given(key=LABEL_NAME, value=st.one_of(st.just(""), LABEL_NAME))
def test_a_selector_of_kubernetes_labels_loads(key: str, value: str) -> None:
    assert TargetSelector(node_selector={key: value}).node_selector == {key: value}


@given(key=LABEL_NAME, sign=OPERATOR_SIGN, at=st.integers(min_value=0, max_value=64))
def test_a_selector_with_an_operator_written_into_it_is_refused_at_load(
    key: str, sign: str, at: int
) -> None:
    written = key[:at] + sign + key[at:]
    for selector in ({written: "x"}, {"x": written}):
        with pytest.raises(ValidationError, match="operators such as"):
            TargetSelector(node_selector=selector)
