"""Nodes (engine/backend.py, ``Nodes``): read fresh, a cordon and its stamps in one update,
and a NodeView once handed out never changes."""

from __future__ import annotations

import pytest

from glimmer.engine.backend import Backend, NotFound

STAMP = "burnin.glimmer.ai/cordoned-by"


def test_a_node_update_is_visible_to_the_next_get_node_and_list_nodes(backend: Backend) -> None:
    backend.get_node("node-001")  # a read first: a caching backend would now hold it
    backend.list_nodes()
    backend.update_node("node-001", unschedulable=True, annotations={STAMP: "run"})
    node = backend.get_node("node-001")
    assert node is not None and node.unschedulable and node.annotations[STAMP] == "run"
    (listed,) = [n for n in backend.list_nodes() if n.name == "node-001"]
    assert listed.unschedulable and listed.annotations[STAMP] == "run"


def test_list_nodes_returns_only_the_nodes_whose_labels_include_the_selector(
    backend: Backend,
) -> None:
    assert sorted(n.name for n in backend.list_nodes()) == ["node-000", "node-001", "node-002"]
    assert sorted(n.name for n in backend.list_nodes(None)) == [
        "node-000",
        "node-001",
        "node-002",
    ]
    gpu = backend.list_nodes({"pool": "gpu"})
    assert sorted(n.name for n in gpu) == ["node-001", "node-002"]
    both = {"pool": "gpu", "kubernetes.io/hostname": "node-002"}
    assert [n.name for n in backend.list_nodes(both)] == ["node-002"]
    assert backend.list_nodes({"pool": "none"}) == []


def test_update_node_returns_cordon_and_stamps_together_from_one_call(backend: Backend) -> None:
    updated = backend.update_node(
        "node-002", unschedulable=True, annotations={STAMP: "run", "other": "x"}
    )
    assert updated.unschedulable and updated.annotations == {STAMP: "run", "other": "x"}
    assert backend.get_node("node-002") == updated


def test_update_node_with_none_deletes_an_annotation_and_keeps_the_others(
    backend: Backend,
) -> None:
    backend.update_node("node-000", annotations={STAMP: "run", "other": "x"})
    updated = backend.update_node("node-000", unschedulable=False, annotations={STAMP: None})
    assert dict(updated.annotations) == {"other": "x"} and not updated.unschedulable
    node = backend.get_node("node-000")
    assert node is not None and dict(node.annotations) == {"other": "x"}


def test_update_node_leaves_what_it_was_not_asked_to_change(backend: Backend) -> None:
    backend.update_node("node-000", unschedulable=True, annotations={STAMP: "run"})
    backend.update_node("node-000", annotations={"other": "x"})
    node = backend.get_node("node-000")
    assert node is not None and node.unschedulable
    assert dict(node.annotations) == {STAMP: "run", "other": "x"}
    backend.update_node("node-000", unschedulable=False)
    node = backend.get_node("node-000")
    assert node is not None and not node.unschedulable
    assert dict(node.annotations) == {STAMP: "run", "other": "x"}


def test_update_node_of_an_unknown_node_raises_not_found(backend: Backend) -> None:
    with pytest.raises(NotFound):
        backend.update_node("node-999", unschedulable=True)
    assert backend.get_node("node-999") is None


def test_a_node_view_handed_out_is_not_changed_by_a_later_update(backend: Backend) -> None:
    got = backend.get_node("node-001")
    (listed,) = backend.list_nodes({"kubernetes.io/hostname": "node-001"})
    assert got is not None
    before = (got.unschedulable, dict(got.annotations), listed.unschedulable)
    backend.update_node("node-001", unschedulable=True, annotations={STAMP: "run"})
    backend.update_node("node-001", annotations={"other": "x"})
    assert (got.unschedulable, dict(got.annotations), listed.unschedulable) == before
    assert dict(listed.annotations) == before[1]
