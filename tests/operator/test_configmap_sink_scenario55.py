"""Scenario 55 on a cluster, over HTTP against the API stand-in: a run delivering to a
ConfigMap sink and to a broken webhook still reaches its verdict (a sink failure never changes
it); the ConfigMap holds each envelope under its deliveryId; the terminal envelope stays owed
(``pending-terminal-delivery``) and is re-sent until the webhook accepts it, after which the
mark goes; each sink's status says what happened to it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.client import connect
from glimmer.contract.vocab import Phase
from glimmer.engine.keys import PENDING_DELIVERY_ANNOTATION
from glimmer.engine.reconciler import Engine
from glimmer.operator.configmap_sink import read_sink
from glimmer.operator.sinks import ClusterSinks
from glimmer.sinks.envelope import RUN_PHASE_CHANGED, TEST_COMPLETED, delivery_id
from glimmer.sinks.sender import OPERATOR_POLICY, Sender
from tests.backends.kubernetes.kube_cluster import FastClock, drive_on_standin
from tests.backends.kubernetes.pod_driver import PodDriver
from tests.k8s_api import K8sAPI
from tests.operator.operator_objects import eventually
from tests.sinks.receiver import Receiver
from tests.sinks.sink_doubles import FakeClock

NS = "default"
API = "/apis/burnin.glimmer.ai/v1alpha1/namespaces/default"
MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    got = Receiver().start()
    yield got
    got.stop()


def created(http: httpx.Client, path: str, body: dict[str, Any]) -> None:
    answer = http.post(path, json=body)
    assert answer.status_code == 201, answer.text


def objects(http: httpx.Client) -> None:
    created(
        http,
        "/api/v1/nodes",
        {"metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}}},
    )
    kind = {"apiVersion": "burnin.glimmer.ai/v1alpha1"}
    gate = [{"metric": "miscompares", "comparison": "Equal", "value": "0"}]
    test = {"kind": "gpu-burn", "durationSeconds": 300, "thresholds": gate}
    created(
        http,
        f"{API}/burnintests",
        {**kind, "kind": "BurnInTest", "metadata": {"name": "burn"}, "spec": test},
    )
    profile = {"tests": [{"testRef": "burn"}], "sinks": ["results", "hook"]}
    created(
        http,
        f"{API}/burninprofiles",
        {**kind, "kind": "BurnInProfile", "metadata": {"name": "prof"}, "spec": profile},
    )
    sinks = {
        "results": {"type": "ConfigMap", "configMap": {"name": "burnin-results"}},
        "hook": {"type": "Webhook", "webhook": {"url": "http://127.0.0.1:9/down"}},
    }
    for name, spec in sinks.items():
        created(
            http,
            f"{API}/burninsinks",
            {**kind, "kind": "BurnInSink", "metadata": {"name": name}, "spec": spec},
        )
    run = {"profileRef": "prof", "target": {"nodeNames": ["n1"]}}
    created(
        http,
        f"{API}/burninruns",
        {**kind, "kind": "BurnInRun", "metadata": {"name": "run"}, "spec": run},
    )


def sink_status(http: httpx.Client, name: str) -> dict[str, Any]:
    found: dict[str, Any] = http.get(f"{API}/burninsinks/{name}").json().get("status") or {}
    return found


def test_a_broken_sink_never_changes_the_verdict_and_the_terminal_envelope_stays_owed(
    k8s_api: K8sAPI, receiver: Receiver
) -> None:
    with httpx.Client(base_url=k8s_api.url, timeout=30) as http:
        objects(http)
        client = connect(k8s_api.kubeconfig)
        clock = FastClock()
        # The operator's retry policy on a clock that never sleeps: retries counted, not waited.
        sinks = ClusterSinks(client, sender=Sender(OPERATOR_POLICY, FakeClock()))
        backend = KubernetesBackend(client, clock=clock, sinks=sinks)
        output = "miscompares=0\niterations=12\nburn finished: no wrong answers\n"
        driver = PodDriver(client, k8s_api.log_dir, 4.5, output=output)
        final = drive_on_standin(backend, driver, "run", clock=clock)
        assert final is not None and final.status is not None
        assert final.status.phase is Phase.PASSED  # the broken webhook changed nothing
        uid = final.metadata.uid or ""
        assert (final.metadata.annotations or {})[PENDING_DELIVERY_ANNOTATION] == "Passed"

        held = read_sink(client, NS, "burnin-results")
        expected = {
            delivery_id(uid, RUN_PHASE_CHANGED, "Running"),
            delivery_id(uid, TEST_COMPLETED, "burn/n1"),
            delivery_id(uid, RUN_PHASE_CHANGED, "Passed"),
        }
        assert set(held) == expected
        assert all(held[key]["deliveryId"] == key for key in held)
        assert sink_status(http, "results")["lastDelivery"]
        assert sink_status(http, "hook")["lastError"]

        # The receiver comes up: the owed terminal envelope goes out, and the mark goes.
        fixed = {"spec": {"webhook": {"url": receiver.url}}}
        assert http.patch(f"{API}/burninsinks/hook", json=fixed, headers=MERGE).status_code == 200
        engine = Engine(backend)

        def delivered() -> bool:
            engine.reconcile(NS, "run")
            run = backend.get_run(NS, "run")
            return run is not None and PENDING_DELIVERY_ANNOTATION not in (
                run.metadata.annotations or {}
            )

        eventually(delivered, "the owed terminal envelope accepted")
        terminal = delivery_id(uid, RUN_PHASE_CHANGED, "Passed")
        assert terminal in receiver.stored
        assert receiver.stored[terminal].envelope()["phase"] == "Passed"
        assert "lastError" not in sink_status(http, "hook")
        after = backend.get_run(NS, "run")
        assert after is not None and after.status is not None
        assert after.status.phase is Phase.PASSED
