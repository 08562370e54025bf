"""Test support for the operator's reconcilers (K5's): objects created over the API stand-in,
a backend on it, and polling that bounds a broken run without asserting on time."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from lightkube import Client

from glimmer.api.meta import API_VERSION
from glimmer.api.run import BurnInRun
from glimmer.backends.kubernetes.resources import NODES


def node(client: Client, name: str, *, unschedulable: bool = False, **annotations: str) -> None:
    """A Node labelled with its hostname, with ``annotations`` and schedulability as given."""
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name},
            "annotations": dict(annotations),
        },
        "spec": {"unschedulable": unschedulable},
    }
    client.create(NODES.from_dict(body))


def read_node(client: Client, name: str) -> dict[str, Any]:
    found: dict[str, Any] = client.get(NODES, name).to_dict()
    return found


def run(name: str, node_name: str = "node-a", namespace: str = "default") -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": API_VERSION,
            "kind": "BurnInRun",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"profileRef": "host", "target": {"nodeNames": [node_name]}},
        }
    )


def eventually(check: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    """Poll until ``check`` returns something truthy; the timeout only bounds a broken run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.05)
    raise AssertionError(f"never happened: {what}")
