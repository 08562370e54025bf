"""The nodes of the local substrate: this host, its schedulability and annotations in a file.

A node's facts (labels, kernel, OS image, architecture) are read from the host once; what the
engine changes — ``unschedulable`` and the annotations (the cordon and its stamps) — lives in
``<state>/nodes/<name>.json``, changed in ONE atomic write under the node's lock, and read
fresh on every call (two glimmer processes on one host see each other's cordons at once).
"""

from __future__ import annotations

import dataclasses
import os
import platform
import socket
from collections.abc import Mapping, Sequence
from pathlib import Path

from glimmer.backends.base import selector_matches, updated_node
from glimmer.backends.common.files import locked, read_json, write_json
from glimmer.engine.backend import NodeView, NotFound

ARCHES = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64", "ppc64le": "ppc64le"}


def hostname() -> str:
    """This host's name, as a node is named by default."""
    return socket.gethostname()


def _os_image() -> str:
    try:
        text = Path("/etc/os-release").read_text()
    except OSError:
        return ""
    for line in text.splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.partition("=")[2].strip().strip('"')
    return ""


def host_node(name: str, labels: Mapping[str, str] | None = None) -> NodeView:
    """The NodeView of this host under ``name``: labels hostname, arch and os (as a kubelet
    sets them) plus ``labels``; kernel, OS image and architecture read from the host."""
    arch = ARCHES.get(platform.machine(), platform.machine())
    system = platform.system().lower()
    return NodeView(
        name=name,
        labels={
            "kubernetes.io/hostname": name,
            "kubernetes.io/arch": arch,
            "kubernetes.io/os": system,
            **dict(labels or {}),
        },
        kernel=os.uname().release,
        os_image=_os_image(),
        arch=arch,
    )


class NodeFiles:
    """The :class:`~glimmer.engine.backend.Nodes` of this host, state under ``root``."""

    def __init__(self, root: Path, nodes: Sequence[NodeView]) -> None:
        self.root = Path(root)
        self.facts = {n.name: n for n in nodes}

    def _path(self, name: str) -> Path:
        return self.root / f"{name}.json"

    def _view(self, facts: NodeView) -> NodeView:
        state = read_json(self._path(facts.name)) or {}
        return dataclasses.replace(
            facts,
            unschedulable=bool(state.get("unschedulable", facts.unschedulable)),
            annotations=dict(state.get("annotations") or facts.annotations),
        )

    def get_node(self, name: str) -> NodeView | None:
        facts = self.facts.get(name)
        return self._view(facts) if facts is not None else None

    def list_nodes(self, selector: Mapping[str, str] | None = None) -> list[NodeView]:
        return [self._view(n) for n in self.facts.values() if selector_matches(n.labels, selector)]

    def update_node(
        self,
        name: str,
        *,
        unschedulable: bool | None = None,
        annotations: Mapping[str, str | None] | None = None,
    ) -> NodeView:
        facts = self.facts.get(name)
        if facts is None:
            raise NotFound(f"node {name} not found")
        path = self._path(name)
        with locked(path.with_suffix(".lock")):
            node = updated_node(self._view(facts), unschedulable, annotations)
            write_json(
                path,
                {"unschedulable": node.unschedulable, "annotations": dict(node.annotations)},
            )
        return node
