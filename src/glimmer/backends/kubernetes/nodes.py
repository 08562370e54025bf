"""Nodes on Kubernetes: core/v1 Node objects, read fresh every time and changed in one patch.

Every read is a GET or a LIST against the API server — no informer, no cache — because the
engine decides cordons and releases from what it reads (§2.10: a node's stamp is read
uncached). A change (schedulability and the run's stamps together) is ONE JSON merge patch
carrying the ``metadata.resourceVersion`` that the fresh read returned, so a write that raced
another writer's is refused (409, :class:`~glimmer.engine.backend.Conflict`) instead of
overwriting what it never saw; the pass is retried from a new read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lightkube import Client
from lightkube.types import PatchType

from glimmer.backends.kubernetes.errors import api_call
from glimmer.backends.kubernetes.resources import NODES, as_dict
from glimmer.engine.backend import NodeView, NotFound


def node_view(node: Mapping[str, Any]) -> NodeView:
    """The engine's view of a Node object (plain JSON data)."""
    meta = node.get("metadata") or {}
    info = (node.get("status") or {}).get("nodeInfo") or {}
    return NodeView(
        name=str(meta.get("name", "")),
        labels=dict(meta.get("labels") or {}),
        unschedulable=bool((node.get("spec") or {}).get("unschedulable", False)),
        annotations=dict(meta.get("annotations") or {}),
        kernel=str(info.get("kernelVersion", "")),
        os_image=str(info.get("osImage", "")),
        arch=str(info.get("architecture", "")),
    )


def node_patch(
    node: Mapping[str, Any],
    unschedulable: bool | None,
    annotations: Mapping[str, str | None] | None,
) -> dict[str, Any] | None:
    """The merge patch that sets ``unschedulable`` and ``annotations`` (None deletes a key) on
    ``node`` as read, its resourceVersion the precondition; None when nothing would change."""
    meta = node.get("metadata") or {}
    current = meta.get("annotations") or {}
    changed: dict[str, str | None] = {}
    for key, value in (annotations or {}).items():
        if value is None:
            if key in current:
                changed[key] = None  # merge-patch null: delete the key
        elif current.get(key) != value:
            changed[key] = value
    patch: dict[str, Any] = {}
    if changed:
        patch["metadata"] = {"annotations": changed}
    was = bool((node.get("spec") or {}).get("unschedulable", False))
    if unschedulable is not None and unschedulable != was:
        patch["spec"] = {"unschedulable": unschedulable}
    if not patch:
        return None
    patch.setdefault("metadata", {})["resourceVersion"] = meta.get("resourceVersion")
    return patch


class KubeNodes:
    """The cluster's nodes through ``client`` (the engine's ``Nodes``)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def _read(self, name: str) -> dict[str, Any] | None:
        try:
            with api_call(f"get node {name}"):
                return as_dict(self.client.get(NODES, name))
        except NotFound:
            return None

    def get_node(self, name: str) -> NodeView | None:
        node = self._read(name)
        return node_view(node) if node is not None else None

    def list_nodes(self, selector: Mapping[str, str] | None = None) -> list[NodeView]:
        with api_call("list nodes"):
            found = self.client.list(NODES, labels=dict(selector) if selector else None)
            return [node_view(as_dict(n)) for n in found]

    def update_node(
        self,
        name: str,
        *,
        unschedulable: bool | None = None,
        annotations: Mapping[str, str | None] | None = None,
    ) -> NodeView:
        node = self._read(name)
        if node is None:
            raise NotFound(f"node {name} not found")
        patch = node_patch(node, unschedulable, annotations)
        if patch is None:
            return node_view(node)
        with api_call(f"patch node {name}"):
            patched = self.client.patch(NODES, name, patch, patch_type=PatchType.MERGE)
        return node_view(as_dict(patched))
