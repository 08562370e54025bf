"""Delivery from the operator to the cluster's BurnInSinks (§5.1, §5.5–5.7, scenario 55) over
HTTP against the API stand-in: the ConfigMap sink stores each envelope under its deliveryId;
a sink's ``lastDelivery``/``lastError`` land on its status through the status subresource
(cleared on success); a missing or broken sink is a failed delivery, never an exception; a
webhook's bearer token comes from the Secret in the sink's namespace; 400 is not retried, 500
is; a Prometheus sink feeds the process's exporter."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from lightkube import Client
from lightkube.resources.core_v1 import Namespace, Secret

from glimmer.api.run import BurnInRun
from glimmer.backends.kubernetes.client import connect
from glimmer.backends.kubernetes.resources import SINKS
from glimmer.operator.configmap_sink import read_sink
from glimmer.operator.sinks import ClusterSinks, cluster_of
from glimmer.sinks.envelope import RUN_PHASE_CHANGED, Transition, delivery_id
from glimmer.sinks.sender import OPERATOR_POLICY, Sender
from tests.k8s_api import K8sAPI
from tests.sinks.receiver import Receiver
from tests.sinks.sink_doubles import FakeClock

NS = "default"


@pytest.fixture
def client(k8s_api: K8sAPI) -> Client:
    return connect(k8s_api.kubeconfig)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    got = Receiver().start()
    yield got
    got.stop()


def sinks(client: Client) -> ClusterSinks:
    # The operator's policy on a clock that never sleeps: retries are counted, not waited.
    return ClusterSinks(client, sender=Sender(OPERATOR_POLICY, FakeClock()))


def make_sink(client: Client, name: str, **spec: Any) -> None:
    body = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInSink",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }
    client.create(SINKS.from_dict(body), namespace=NS)


def sink_status(client: Client, name: str) -> dict[str, Any]:
    found: dict[str, Any] = client.get(SINKS, name, namespace=NS).to_dict().get("status") or {}
    return found


def terminal(*names: str, phase: str = "Passed") -> Transition:
    run = BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "accept-1", "namespace": NS, "uid": "run-uid-1"},
            "spec": {"profileRef": "host", "target": {"nodeNames": ["node-a"]}},
            "status": {"phase": phase},
        }
    )
    return Transition(RUN_PHASE_CHANGED, phase, run, sinks=names)


def test_a_configmap_sink_stores_the_envelope_under_its_delivery_id_and_records_delivery(
    client: Client,
) -> None:
    make_sink(client, "results", type="ConfigMap", configMap={"name": "burnin-results"})
    assert sinks(client).deliver(terminal("results"))
    key = delivery_id("run-uid-1", RUN_PHASE_CHANGED, "Passed")
    held = read_sink(client, NS, "burnin-results")
    assert list(held) == [key]
    assert held[key]["phase"] == "Passed" and held[key]["run"]["uid"] == "run-uid-1"
    status = sink_status(client, "results")
    assert status["lastDelivery"].endswith("Z")
    assert "lastError" not in status


def test_a_broken_sink_fails_the_delivery_with_its_error_on_its_status_and_others_still_get_it(
    client: Client,
) -> None:
    make_sink(client, "results", type="ConfigMap", configMap={"name": "burnin-results"})
    make_sink(client, "hook", type="Webhook", webhook={"url": "http://127.0.0.1:9/hook"})
    assert not sinks(client).deliver(terminal("hook", "results"))
    assert sink_status(client, "hook")["lastError"]
    assert "lastDelivery" not in sink_status(client, "hook")
    assert len(read_sink(client, NS, "burnin-results")) == 1


def test_a_sink_that_does_not_exist_is_a_failed_delivery_not_an_exception(
    client: Client,
) -> None:
    assert not sinks(client).deliver(terminal("nowhere"))


def test_success_after_a_failure_clears_the_last_error(client: Client, receiver: Receiver) -> None:
    receiver.script = ["400"]
    make_sink(client, "hook", type="Webhook", webhook={"url": receiver.url})
    delivering = sinks(client)
    assert not delivering.deliver(terminal("hook"))
    assert "400" in sink_status(client, "hook")["lastError"]
    assert delivering.deliver(terminal("hook", phase="Failed"))
    status = sink_status(client, "hook")
    assert "lastError" not in status and status["lastDelivery"]


def test_a_webhook_answering_400_is_not_retried_and_500_is(
    client: Client, receiver: Receiver
) -> None:
    make_sink(client, "hook", type="Webhook", webhook={"url": receiver.url})
    receiver.script = ["400"]
    assert not sinks(client).deliver(terminal("hook"))
    assert len(receiver.requests) == 1
    receiver.script = ["500"]
    assert sinks(client).deliver(terminal("hook", phase="Failed"))
    assert len(receiver.requests) == 3  # the 500, then the retry the receiver accepted


def test_the_webhook_bearer_token_is_read_from_the_secret_in_the_sinks_namespace(
    client: Client, receiver: Receiver
) -> None:
    token = base64.b64encode(b"s3cret\n").decode()
    secret = {"metadata": {"name": "hook-token", "namespace": NS}, "data": {"token": token}}
    client.create(Secret.from_dict(secret), namespace=NS)  # type: ignore[call-overload]
    ref = {"name": "hook-token", "key": "token"}
    make_sink(client, "hook", type="Webhook", webhook={"url": receiver.url, "tokenSecretRef": ref})
    assert sinks(client).deliver(terminal("hook"))
    [seen] = receiver.requests
    assert seen.headers["Authorization"] == "Bearer s3cret"
    assert seen.key == delivery_id("run-uid-1", RUN_PHASE_CHANGED, "Passed")


def test_a_token_secret_that_is_missing_fails_the_sink_for_good(
    client: Client, receiver: Receiver
) -> None:
    ref = {"name": "absent", "key": "token"}
    make_sink(client, "hook", type="Webhook", webhook={"url": receiver.url, "tokenSecretRef": ref})
    assert not sinks(client).deliver(terminal("hook"))
    assert receiver.requests == []
    assert "not found" in sink_status(client, "hook")["lastError"]


def test_a_prometheus_sink_feeds_the_process_exporter(client: Client) -> None:
    make_sink(client, "metrics", type="Prometheus")
    delivering = sinks(client)
    assert delivering.deliver(terminal("metrics"))
    assert delivering.exporter is not None
    assert 'burnin_run_phase{namespace="default",run="accept-1"' in (
        delivering.exporter.exposition()
    )


def test_envelopes_name_the_cluster_by_the_kube_system_namespace_uid(client: Client) -> None:
    make_sink(client, "results", type="ConfigMap", configMap={"name": "burnin-results"})
    cluster = cluster_of(client, "lab-east")
    delivering = ClusterSinks(client, cluster=cluster, sender=Sender(OPERATOR_POLICY, FakeClock()))
    assert delivering.deliver(terminal("results"))
    [held] = read_sink(client, NS, "burnin-results").values()
    uid = client.get(Namespace, "kube-system").metadata.uid  # type: ignore[union-attr]
    assert held["cluster"] == {"name": "lab-east", "uid": uid}
