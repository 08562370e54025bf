"""The kubernetes substrate's tests run against the API stand-in over real HTTP (tests/k8s_api:
a fresh API per test, the glimmer CRDs registered); ``cluster`` is a backend on it, with the
Nodes a test names created as core/v1 Node objects."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from lightkube import Client

from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.client import connect
from tests.k8s_api import K8sAPI, k8s_api, kubectl

__all__ = ["k8s_api", "kubectl"]


@pytest.fixture
def client(k8s_api: K8sAPI) -> Iterator[Client]:
    found = connect(k8s_api.kubeconfig)
    yield found
    found._client._client.close()  # the httpx pool, not left to the garbage collector


@pytest.fixture
def backend(client: Client) -> KubernetesBackend:
    return KubernetesBackend(client)


NodeMaker = Callable[..., None]
