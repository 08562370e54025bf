"""The registry's kubernetes entry (backends/common/registry.py) builds the backend over the
cluster a kubeconfig names; ``glimmer run --backend kubernetes`` reaches it through that
entry (tests/operator/test_run_backend_kubernetes.py)."""

from __future__ import annotations

from kube_cluster import create_nodes
from lightkube import Client

from glimmer.backends.common.registry import KUBERNETES, REGISTRY
from glimmer.backends.kubernetes.backend import KubernetesBackend
from tests.k8s_api import K8sAPI


def test_the_kubernetes_entry_builds_a_backend_on_the_cluster_a_kubeconfig_names(
    k8s_api: K8sAPI, client: Client
) -> None:
    create_nodes(client, "n1", "n2")
    backend = KUBERNETES.backend(k8s_api.kubeconfig)
    assert isinstance(backend, KubernetesBackend)
    assert sorted(n.name for n in backend.list_nodes()) == ["n1", "n2"]
    assert KUBERNETES.drive.__name__ == "drive_wall_clock"


def test_the_kubernetes_entry_reads_kubeconfig_from_the_environment_when_none_is_given(
    k8s_api: K8sAPI, client: Client
) -> None:
    create_nodes(client, "n1")  # the k8s_api fixture points $KUBECONFIG at the stand-in
    assert [n.name for n in KUBERNETES.backend().list_nodes()] == ["n1"]
    assert REGISTRY["kubernetes"].available
