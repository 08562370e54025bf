"""The ConfigMap sink on a cluster (§5.6, scenario 55) over HTTP against the API stand-in: each
envelope under its deliveryId in the named ConfigMap (created if missing, other keys kept), an
identical re-send writes nothing, a changed one overwrites; past the 900 KiB budget it rolls
over to ``<name>-0001`` …, and an envelope bigger than one object is stored as parts that read
back whole; a refused write is a retryable failure."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from lightkube import Client

from glimmer.backends.kubernetes.client import connect
from glimmer.operator.configmap_sink import (
    BUDGET_BYTES,
    CONFIGMAPS,
    ConfigMapSink,
    object_name,
    read_sink,
)
from glimmer.sinks.base import encode
from glimmer.sinks.errors import DeliveryError
from tests.k8s_api import K8sAPI
from tools.k8s_standin.background import api_in_thread
from tools.k8s_standin.kubeconfig import write_kubeconfig

NS = "default"


@pytest.fixture
def client(k8s_api: K8sAPI) -> Client:
    return connect(k8s_api.kubeconfig)


def envelope(n: int, padding: str = "") -> dict[str, Any]:
    return {
        "version": "burnin.glimmer.ai/v1alpha1",
        "deliveryId": hashlib.sha256(str(n).encode()).hexdigest()[:32],
        "reason": "TestCompleted",
        "phase": "Running",
        "padding": padding,
    }


def send(sink: ConfigMapSink, env: dict[str, Any]) -> None:
    sink.send(env, encode(env), 15.0)


def stored(client: Client, name: str) -> dict[str, Any]:
    found: dict[str, Any] = client.get(CONFIGMAPS, name, namespace=NS).to_dict()
    return found


def size(obj: dict[str, Any]) -> int:
    return sum(len(k.encode()) + len(v.encode()) for k, v in (obj.get("data") or {}).items())


def test_each_envelope_is_stored_under_its_delivery_id_in_a_configmap_created_if_missing(
    client: Client,
) -> None:
    sink = ConfigMapSink(client, NS, "results")
    first, second = envelope(1), envelope(2)
    send(sink, first)
    send(sink, second)
    data = stored(client, "results")["data"]
    assert set(data) == {first["deliveryId"], second["deliveryId"]}
    assert read_sink(client, NS, "results") == {
        first["deliveryId"]: first,
        second["deliveryId"]: second,
    }


def test_an_identical_resend_writes_nothing_and_a_changed_one_overwrites(client: Client) -> None:
    sink = ConfigMapSink(client, NS, "results")
    env = envelope(1)
    send(sink, env)
    version = stored(client, "results")["metadata"]["resourceVersion"]
    send(sink, env)
    assert stored(client, "results")["metadata"]["resourceVersion"] == version
    more = {**env, "phase": "Passed"}
    send(sink, more)
    assert read_sink(client, NS, "results") == {env["deliveryId"]: more}


def test_keys_someone_else_put_in_the_configmap_are_kept(client: Client) -> None:
    body = {"metadata": {"name": "results", "namespace": NS}, "data": {"README": "ours"}}
    client.create(CONFIGMAPS.from_dict(body), namespace=NS)  # type: ignore[call-overload]
    send(ConfigMapSink(client, NS, "results"), envelope(1))
    assert stored(client, "results")["data"]["README"] == "ours"


def test_past_the_budget_it_rolls_over_to_numbered_configmaps_each_within_it(
    client: Client,
) -> None:
    budget = 2_000
    sink = ConfigMapSink(client, NS, "results", budget=budget)
    sent = [envelope(n, "x" * 500) for n in range(8)]
    for env in sent:
        send(sink, env)
    names = [object_name("results", i) for i in range(3)]
    assert names[1:] == ["results-0001", "results-0002"]
    objects = [stored(client, n) for n in names]
    assert all(0 < size(o) <= budget for o in objects)
    assert read_sink(client, NS, "results") == {e["deliveryId"]: e for e in sent}


def test_an_envelope_bigger_than_one_configmap_is_stored_as_parts_that_read_back_whole(
    client: Client,
) -> None:
    budget = 1_000
    sink = ConfigMapSink(client, NS, "results", budget=budget)
    big = envelope(1, "é€" * 900)  # multi-byte characters: no part may split one
    send(sink, big)
    keys = [k for i in range(6) for k in _keys(client, object_name("results", i))]
    assert len(keys) > 2 and all(k.endswith(".part") for k in keys)
    assert read_sink(client, NS, "results") == {big["deliveryId"]: big}
    assert all(size(stored(client, object_name("results", i))) <= budget for i in range(2))


def _keys(client: Client, name: str) -> list[str]:
    try:
        return list(stored(client, name).get("data") or {})
    except Exception:
        return []


def test_the_default_budget_is_the_configmap_sinks_900_kib() -> None:
    assert BUDGET_BYTES == 900 * 1024


def test_a_refused_write_is_a_retryable_failure(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    with api_in_thread(log_dir=logs, conflict_every=1) as running:
        client = connect(write_kubeconfig(tmp_path / "kubeconfig", running.url))
        with pytest.raises(DeliveryError) as raised:
            send(ConfigMapSink(client, NS, "results"), envelope(1))
    assert not raised.value.permanent


def test_a_value_that_is_not_a_delivery_id_is_refused_for_good(client: Client) -> None:
    with pytest.raises(DeliveryError) as raised:
        send(ConfigMapSink(client, NS, "results"), {"deliveryId": "../etc"})
    assert raised.value.permanent


class RacedCreate(ConfigMapSink):
    """A sink that another writer beats to creating the ConfigMap, between read and write."""

    def _read(self) -> Any:
        objects = super()._read()
        body = {"metadata": {"name": self.name, "namespace": NS}, "data": {"other": "writer"}}
        self.client.create(CONFIGMAPS.from_dict(body), namespace=NS)  # type: ignore[call-overload]
        return objects


def test_a_concurrent_create_is_a_retryable_failure_and_the_retry_keeps_both(
    client: Client,
) -> None:
    env = envelope(1)
    with pytest.raises(DeliveryError) as raised:
        send(RacedCreate(client, NS, "results"), env)
    assert not raised.value.permanent
    send(ConfigMapSink(client, NS, "results"), env)  # the next attempt reads again
    data = stored(client, "results")["data"]
    assert data["other"] == "writer" and env["deliveryId"] in data
