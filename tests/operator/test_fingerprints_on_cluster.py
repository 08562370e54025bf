"""The NodeFingerprint reconciler over HTTP against the API stand-in (§7.2, scenario 58 on a
cluster): the fingerprint is created and its status written through the status subresource,
nothing is written when nothing changed, a kernel upgrade raises sticky drift with a
HardwareDrift Event about the Node, operator labels never drift; and through kopf, a Node
event fingerprints the node and reaps an orphan stamp, a deleted fingerprint is recaptured."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import kopf
import pytest
from kopf.testing import KopfRunner
from lightkube import Client

from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.client import connect
from glimmer.backends.kubernetes.resources import EVENTS, NODES
from glimmer.engine.keys import CORDON_OWNER, PRIOR_UNSCHEDULABLE
from glimmer.operator.context import OperatorContext
from glimmer.operator.fingerprints import FINGERPRINTS, fingerprint_node, register
from tests.k8s_api import K8sAPI
from tests.operator.operator_objects import eventually, read_node

NS = "default"
T0 = datetime(2026, 11, 1, tzinfo=UTC)
LABELS = {
    "kubernetes.io/hostname": "gpu-01",
    "kubernetes.io/arch": "arm64",
    "nvidia.com/gpu.product": "NVIDIA-GB10",
    "nvidia.com/gpu.count": "1",
}


@pytest.fixture
def client(k8s_api: K8sAPI) -> Client:
    return connect(k8s_api.kubeconfig)


def node_body(name: str = "gpu-01", kernel: str = "6.8.0", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {**LABELS, "kubernetes.io/hostname": name, **labels}},
        "status": {"nodeInfo": {"kernelVersion": kernel, "osImage": "Ubuntu 24.04"}},
    }


def upgraded(node: dict[str, Any], kernel: str) -> dict[str, Any]:
    """``node`` as read, with a new kernel reported."""
    return {**node, "status": {"nodeInfo": {**node["status"]["nodeInfo"], "kernelVersion": kernel}}}


def make_node(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    made: dict[str, Any] = client.create(NODES.from_dict(body)).to_dict()
    return made


def stored(client: Client, name: str = "gpu-01") -> dict[str, Any]:
    found: dict[str, Any] = client.get(FINGERPRINTS, name, namespace=NS).to_dict()
    return found


def drifted(fingerprint: dict[str, Any]) -> dict[str, Any]:
    conditions = fingerprint["status"]["conditions"]
    found: dict[str, Any] = next(c for c in conditions if c["type"] == "Drifted")
    return found


def drift_events(client: Client) -> list[dict[str, Any]]:
    events = [e.to_dict() for e in client.list(EVENTS, namespace="default")]
    return [e for e in events if e["reason"] == "HardwareDrift"]


def test_a_node_gets_a_fingerprint_with_its_identity_and_a_baseline(client: Client) -> None:
    node = make_node(client, node_body())
    fingerprint_node(client, node, NS, T0)
    found = stored(client)
    assert found["spec"]["nodeName"] == "gpu-01"
    assert found["metadata"]["labels"]["burnin.glimmer.ai/node"] == "gpu-01"
    status = found["status"]
    assert status["kernel"] == "6.8.0"
    assert status["osImage"] == "Ubuntu 24.04"
    assert status["digest"].startswith("v1:")
    assert status["gpus"][0]["vendor"] == "nvidia"
    assert status["gpus"][0]["model"] == "NVIDIA-GB10"
    assert drifted(found)["status"] == "False"
    assert drifted(found)["reason"] == "BaselineCaptured"
    assert drift_events(client) == []


def test_an_unchanged_node_writes_nothing(client: Client) -> None:
    node = make_node(client, node_body())
    fingerprint_node(client, node, NS, T0)
    # The second look turns BaselineCaptured into DigestStable; after that, nothing moves.
    fingerprint_node(client, node, NS, T0 + timedelta(hours=1))
    version = stored(client)["metadata"]["resourceVersion"]
    seen = fingerprint_node(client, node, NS, T0 + timedelta(hours=2))
    assert not seen.changed
    assert stored(client)["metadata"]["resourceVersion"] == version


def test_a_kernel_upgrade_raises_sticky_drift_and_a_hardware_drift_event_on_the_node(
    client: Client,
) -> None:
    node = make_node(client, node_body())
    fingerprint_node(client, node, NS, T0)
    fingerprint_node(client, upgraded(node, "6.11.0"), NS, T0 + timedelta(days=1))
    condition = drifted(stored(client))
    assert (condition["status"], condition["reason"]) == ("True", "DigestChanged")
    assert "6.8.0" in condition["message"] and "6.11.0" in condition["message"]
    [event] = drift_events(client)
    assert event["type"] == "Warning"
    assert event["involvedObject"]["kind"] == "Node"
    assert event["involvedObject"]["name"] == "gpu-01"
    assert event["involvedObject"]["uid"] == node["metadata"]["uid"]
    # Sticky: the same (new) identity seen again does not clear it.
    fingerprint_node(client, upgraded(node, "6.11.0"), NS, T0 + timedelta(days=2))
    assert drifted(stored(client))["status"] == "True"


def test_operator_and_verdict_labels_never_cause_drift(client: Client) -> None:
    node = make_node(client, node_body())
    fingerprint_node(client, node, NS, T0)
    relabelled = node_body(**{"burnin.glimmer.ai/last-verdict": "Passed"})
    fingerprint_node(client, relabelled, NS, T0 + timedelta(hours=1))
    assert drifted(stored(client))["status"] == "False"
    assert drift_events(client) == []


def test_a_fingerprint_of_that_name_for_another_node_is_left_alone(client: Client) -> None:
    make_node(client, node_body())
    foreign = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "NodeFingerprint",
        "metadata": {"name": "gpu-01", "namespace": NS},
        "spec": {"nodeName": "some-other-node"},
    }
    client.create(FINGERPRINTS.from_dict(foreign), namespace=NS)
    version = stored(client)["metadata"]["resourceVersion"]
    seen = fingerprint_node(client, node_body(), NS, T0)
    assert seen.conflict is not None
    assert stored(client)["metadata"]["resourceVersion"] == version


def operator(context: OperatorContext) -> KopfRunner:
    registry = kopf.OperatorRegistry()
    kopf.on.login(registry=registry)(kopf.login_with_kubeconfig)
    register(registry, context)
    settings = kopf.OperatorSettings()
    settings.posting.enabled = False
    return KopfRunner(
        ["run", "--standalone", "--all-namespaces"],
        registry=registry,
        settings=settings,
        timeout=60,
    )


def test_through_kopf_a_node_event_fingerprints_the_node_and_reaps_an_orphan_stamp(
    k8s_api: K8sAPI, client: Client
) -> None:
    context = OperatorContext.over(KubernetesBackend(client), NS, identity="test")
    orphan = node_body("gpu-02")
    orphan["metadata"]["annotations"] = {
        CORDON_OWNER: "default/gone/0000",
        PRIOR_UNSCHEDULABLE: "false",
    }
    orphan["spec"] = {"unschedulable": True}
    with operator(context) as kopf_run:
        make_node(client, node_body())
        make_node(client, orphan)
        eventually(lambda: _exists(client, "gpu-01"), "gpu-01's fingerprint")
        eventually(
            lambda: not read_node(client, "gpu-02")["spec"].get("unschedulable"),
            "gpu-02 released by the reaper",
        )
        assert CORDON_OWNER not in (
            read_node(client, "gpu-02")["metadata"].get("annotations") or {}
        )
        client.delete(FINGERPRINTS, "gpu-01", namespace=NS)
        eventually(lambda: _exists(client, "gpu-01"), "gpu-01's fingerprint recaptured")
    assert kopf_run.exit_code == 0, kopf_run.output
    assert "finalizers" not in read_node(client, "gpu-01")["metadata"]


def _exists(client: Client, name: str) -> bool:
    try:
        return bool(stored(client, name).get("status", {}).get("digest"))
    except Exception:
        return False


def test_fingerprints_live_in_the_configured_namespace_else_the_pods_else_startup_fails(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    from glimmer.operator import fingerprints

    monkeypatch.setattr(fingerprints, "SERVICE_ACCOUNT_NAMESPACE", tmp_path / "absent")
    monkeypatch.delenv("POD_NAMESPACE", raising=False)
    assert fingerprints.fingerprint_namespace("lab") == "lab"
    with pytest.raises(fingerprints.NoNamespace):
        fingerprints.fingerprint_namespace(None)
    monkeypatch.setenv("POD_NAMESPACE", "glimmer-system")
    assert fingerprints.fingerprint_namespace(None) == "glimmer-system"
    monkeypatch.delenv("POD_NAMESPACE")
    account = tmp_path / "namespace"
    account.write_text("ops\n")
    monkeypatch.setattr(fingerprints, "SERVICE_ACCOUNT_NAMESPACE", account)
    assert fingerprints.fingerprint_namespace(None) == "ops"
