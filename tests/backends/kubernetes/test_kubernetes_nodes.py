"""Nodes on Kubernetes (backends/kubernetes/nodes.py), over HTTP against the API stand-in:
every read is a fresh GET or LIST, a label selector goes to the server, and a cordon with its
stamps is ONE merge patch carrying the resourceVersion it was read at — refused as Conflict
when the API says 409, and not sent at all when nothing would change."""

from __future__ import annotations

from typing import Any

import pytest
from kube_cluster import Journal, create_nodes
from lightkube import Client
from lightkube.types import PatchType

from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.nodes import KubeNodes, node_patch, node_view
from glimmer.backends.kubernetes.resources import NODES
from glimmer.engine.backend import Conflict, NotFound
from glimmer.engine.keys import CORDON_OWNER, PRIOR_UNSCHEDULABLE

STAMP = "default/run/uid-1"


def _writes(journal: Journal, path: str) -> list[dict[str, Any]]:
    return [e for e in journal() if e["path"] == path and e["method"] != "GET"]


def test_a_node_changed_by_another_client_is_read_changed_at_once(
    backend: KubernetesBackend, client: Client, make_nodes: Any
) -> None:
    make_nodes("n1")
    before = backend.get_node("n1")
    assert before is not None and not before.unschedulable
    client.patch(NODES, "n1", {"spec": {"unschedulable": True}}, patch_type=PatchType.MERGE)
    found = backend.get_node("n1")
    assert found is not None and found.unschedulable
    (listed,) = backend.list_nodes()
    assert listed.unschedulable


def test_list_nodes_sends_the_selector_to_the_server(
    backend: KubernetesBackend, make_nodes: Any, journal: Journal
) -> None:
    make_nodes("n1", "n2", pool="gpu")
    make_nodes("n3", pool="cpu")
    assert sorted(n.name for n in backend.list_nodes({"pool": "gpu"})) == ["n1", "n2"]
    lists = [e for e in journal() if e["method"] == "GET" and e["path"] == "/api/v1/nodes"]
    assert lists[-1]["query"].get("labelSelector") == "pool=gpu"


def test_a_cordon_and_its_stamps_are_one_patch_with_the_resource_version_read(
    backend: KubernetesBackend, make_nodes: Any, journal: Journal
) -> None:
    make_nodes("n1")
    updated = backend.update_node(
        "n1", unschedulable=True, annotations={CORDON_OWNER: STAMP, PRIOR_UNSCHEDULABLE: "false"}
    )
    assert updated.unschedulable and updated.annotations[CORDON_OWNER] == STAMP
    (write,) = _writes(journal, "/api/v1/nodes/n1")
    assert write["method"] == "PATCH"
    released = backend.update_node(
        "n1", unschedulable=False, annotations={CORDON_OWNER: None, PRIOR_UNSCHEDULABLE: None}
    )
    assert not released.unschedulable and released.annotations == {}
    assert len(_writes(journal, "/api/v1/nodes/n1")) == 2


def test_an_update_that_changes_nothing_sends_no_write(
    backend: KubernetesBackend, make_nodes: Any, journal: Journal
) -> None:
    make_nodes("n1")
    backend.update_node("n1", unschedulable=True, annotations={CORDON_OWNER: STAMP})
    again = backend.update_node(
        "n1", unschedulable=True, annotations={CORDON_OWNER: STAMP, "absent": None}
    )
    assert again.unschedulable and dict(again.annotations) == {CORDON_OWNER: STAMP}
    assert len(_writes(journal, "/api/v1/nodes/n1")) == 1


def test_the_patch_names_the_resource_version_it_was_computed_from() -> None:
    node = {
        "metadata": {"name": "n1", "resourceVersion": "42", "annotations": {"keep": "1", "x": "2"}},
        "spec": {},
    }
    patch = node_patch(node, True, {"x": None, "new": "v", "keep": "1", "gone": None})
    assert patch == {
        "metadata": {"resourceVersion": "42", "annotations": {"x": None, "new": "v"}},
        "spec": {"unschedulable": True},
    }
    assert node_patch(node, False, {"keep": "1"}) is None


def test_a_node_write_the_api_refuses_with_409_raises_conflict_and_changes_nothing(
    conflicting: Client,
) -> None:
    create_nodes(conflicting, "n1")  # the first write goes through; the second is refused
    nodes = KubeNodes(conflicting)
    with pytest.raises(Conflict):
        nodes.update_node("n1", unschedulable=True, annotations={CORDON_OWNER: STAMP})
    found = nodes.get_node("n1")
    assert found is not None and not found.unschedulable and CORDON_OWNER not in found.annotations
    assert nodes.update_node("n1", unschedulable=True).unschedulable  # the third goes through


def test_a_node_view_carries_labels_annotations_and_node_info() -> None:
    view = node_view(
        {
            "metadata": {"name": "n1", "labels": {"a": "1"}, "annotations": {"b": "2"}},
            "spec": {"unschedulable": True},
            "status": {
                "nodeInfo": {"kernelVersion": "6.8", "osImage": "Ubuntu", "architecture": "arm64"}
            },
        }
    )
    assert (view.name, dict(view.labels), dict(view.annotations)) == ("n1", {"a": "1"}, {"b": "2"})
    assert (view.unschedulable, view.kernel, view.os_image, view.arch) == (
        True,
        "6.8",
        "Ubuntu",
        "arm64",
    )


def test_an_unknown_node_reads_as_none_and_its_update_raises_not_found(
    backend: KubernetesBackend,
) -> None:
    assert backend.get_node("missing") is None
    with pytest.raises(NotFound):
        backend.update_node("missing", unschedulable=True)
