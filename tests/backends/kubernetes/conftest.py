"""The kubernetes substrate's tests run against the API stand-in over real HTTP (``k8s_api``
of tests/k8s_api.py: a fresh API per test, the glimmer CRDs registered): ``client`` talks to
it, ``backend`` is the substrate on it, ``make_nodes`` creates core/v1 Node objects,
``journal`` reads back every request the API was sent, and ``conflicting`` starts a stand-in
that answers 409 to every second write."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kube_cluster import Journal, create_nodes, read_journal
from lightkube import Client

from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.client import connect
from tests.k8s_api import K8sAPI
from tools.k8s_standin.background import api_in_thread
from tools.k8s_standin.kubeconfig import write_kubeconfig


@pytest.fixture
def client(k8s_api: K8sAPI) -> Client:
    return connect(k8s_api.kubeconfig)


@pytest.fixture
def backend(client: Client) -> KubernetesBackend:
    return KubernetesBackend(client)


@pytest.fixture
def make_nodes(client: Client) -> Callable[..., None]:
    def make(*names: str, **labels: str) -> None:
        create_nodes(client, *names, **labels)

    return make


@pytest.fixture
def journal(k8s_api: K8sAPI) -> Journal:
    def read() -> list[dict[str, Any]]:
        return read_journal(k8s_api.journal)

    return read


@pytest.fixture
def conflicting(tmp_path: Path) -> Iterator[Client]:
    """A client of a stand-in that answers 409 Conflict, without effect, to every second
    write (the first write succeeds, the second is refused, the third succeeds...)."""
    logs = tmp_path / "conflicting-logs"
    logs.mkdir()
    with api_in_thread(log_dir=logs, conflict_every=2) as running:
        yield connect(write_kubeconfig(tmp_path / "conflicting-kubeconfig", running.url))
