"""The stand-in's own tests: the project's k8s_api fixtures (registered here until the lead
adds tests/k8s_api.py to tests/conftest.py) and a raw HTTP client on the stand-in, for the
status codes, reasons and content types a typed client would hide."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.k8s_api import K8sAPI, k8s_api, kubectl  # noqa: F401 (fixtures)

RUNS = "/apis/burnin.glimmer.ai/v1alpha1/namespaces/default/burninruns"
PODS = "/api/v1/namespaces/default/pods"
NODES = "/api/v1/nodes"
MERGE = {"Content-Type": "application/merge-patch+json"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}


@pytest.fixture
def http(k8s_api: K8sAPI) -> Iterator[httpx.Client]:  # noqa: F811 (the fixture above)
    with httpx.Client(base_url=k8s_api.url, timeout=10) as client:
        yield client


def run_body(name: str = "smoke", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInRun",
        "metadata": {"name": name},
        "spec": {"profileRef": "host", "target": {"nodeNames": ["node-a"]}, **spec},
    }


def pod_body(name: str = "runner", node: str | None = None, **labels: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "runner", "image": "glimmer/runner:1", "command": ["true"]}],
        "restartPolicy": "Never",
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
    }


def node_body(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def eventually(check: Callable[[], Any], what: str = "the condition", timeout: float = 30) -> Any:
    """Poll until ``check`` returns something truthy; the timeout only bounds a broken run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.05)
    raise AssertionError(f"never happened: {what}")
