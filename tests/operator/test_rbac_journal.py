"""The least-privilege ClusterRole (glimmer.operator.rbac) against what the operator really
sends: the operator is driven against the API stand-in, the stand-in's request journal read
back, and every (verb, API group, resource) it used must be granted — and every grant used.

Two drives, their journals joined:

* the whole operator in-process (kopf in a thread, KopfRunner): the run handlers and every
  reconciler of this package on one registry, leader election through the peering object, the
  cluster's BurnInSinks as the backend's sinks; on a stand-in cluster whose kubelet runs the
  runner pods as real processes: a BurnInRun of a short host test delivering to a ConfigMap,
  a Prometheus and a webhook sink (its token from a Secret) to its verdict; a node's hardware
  label changed (drift, an Event); an orphan stamp reaped; a schedule firing a run that is
  cancelled and then removed by the schedule's history limit; a fingerprint deleted and
  recaptured;
* a Pair run through the engine over the kubernetes backend (what the run handlers call), its
  pods stepped by the test's pod driver: the rendezvous Service and the lingering server's
  deletion, which no Node-scope run needs.

Requests are told apart by their User-Agent: lightkube's (``python-httpx2``) and kopf's are the
operator's; the test's own setup goes through plain httpx, the kubelet has its own.
"""

from __future__ import annotations

import base64
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kopf.testing import KopfRunner

from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.client import connect
from glimmer.contract.vocab import Phase
from glimmer.engine.keys import CORDON_OWNER, PRIOR_UNSCHEDULABLE
from glimmer.engine.reconciler import Engine
from glimmer.operator import exporter, fingerprints, schedules
from glimmer.operator.context import OperatorContext
from glimmer.operator.main import ensure_peering
from glimmer.operator.options import checked
from glimmer.operator.rbac import GRANTS, unobserved_pairs, used_pairs
from glimmer.operator.registry import build_registry
from glimmer.operator.settings import operator_settings
from glimmer.operator.sinks import ClusterSinks, cluster_of
from tests.backends.kubernetes.kube_cluster import FastClock, drive_on_standin
from tests.backends.kubernetes.pod_driver import PodDriver
from tests.k8s_api import K8sAPI
from tests.operator.conftest import apply_peering_crds, apply_short_tests, run_body
from tests.operator.operator_objects import eventually
from tests.sinks.receiver import Receiver
from tools.k8s_standin.cluster import standin_cluster
from tools.k8s_standin.journal import read

NS = "default"
API = "/apis/burnin.glimmer.ai/v1alpha1/namespaces/default"
Used = set[tuple[str, str, str]]


def operator_requests(journal: Path) -> Used:
    """(verb, group, resource) of every resource request the operator made."""
    used: Used = set()
    for entry in read(journal):
        agent = str(entry.get("user_agent", ""))
        if not (agent.startswith("python-httpx2") or agent.startswith("kopf")):
            continue
        if entry.get("verb"):
            used.add((entry["verb"], entry["group"], entry["resource"]))
    return used


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    got = Receiver().start()
    yield got
    got.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def created(http: httpx.Client, path: str, body: dict[str, Any]) -> None:
    answer = http.post(path, json=body)
    assert answer.status_code == 201, answer.text


def setup_sinks(http: httpx.Client, hook_url: str) -> None:
    token = base64.b64encode(b"hook-token").decode()
    secret = {"metadata": {"name": "hook"}, "data": {"token": token}}
    created(http, f"/api/v1/namespaces/{NS}/secrets", secret)
    sinks = {
        "results": {"type": "ConfigMap", "configMap": {"name": "burnin-results"}},
        "metrics": {"type": "Prometheus"},
        "hook": {
            "type": "Webhook",
            "webhook": {"url": hook_url, "tokenSecretRef": {"name": "hook", "key": "token"}},
        },
    }
    for name, spec in sinks.items():
        body = {"apiVersion": "burnin.glimmer.ai/v1alpha1", "kind": "BurnInSink"}
        created(http, f"{API}/burninsinks", {**body, "metadata": {"name": name}, "spec": spec})
    profile = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInProfile",
        "metadata": {"name": "rbac-host"},
        "spec": {
            "tests": [{"testRef": "host-kernel-and-links"}],
            "sinks": ["results", "metrics", "hook"],
        },
    }
    created(http, f"{API}/burninprofiles", profile)


def phase(http: httpx.Client, name: str) -> str:
    got = http.get(f"{API}/burninruns/{name}")
    if got.status_code != 200:
        return ""
    return str((got.json().get("status") or {}).get("phase", ""))


def drive_whole_operator(tmp_path: Path, hook: Receiver, monkeypatch: pytest.MonkeyPatch) -> Used:
    with (
        standin_cluster(1, tmp_path / "cluster", network="host") as cluster,
        httpx.Client(base_url=cluster.url, timeout=30) as http,
    ):
        assert cluster.journal is not None
        monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))  # kopf's login reads it
        [node] = cluster.nodes
        apply_peering_crds(http)
        apply_short_tests(http, tmp_path)
        setup_sinks(http, hook.url)
        client = connect(cluster.kubeconfig)
        backend = KubernetesBackend(client, sinks=ClusterSinks(client, cluster=cluster_of(client)))
        context = OperatorContext.over(backend, None, identity="rbac-test")
        ensure_peering(
            checked(kubeconfig=cluster.kubeconfig, all_namespaces=True, peering="glimmer-operator")
        )
        registry = build_registry(context)
        schedules.register(registry, context)
        fingerprints.register(registry, context)
        exporter.register(registry, context, host="127.0.0.1", port=free_port())
        runner = KopfRunner(
            ["run", "--all-namespaces", "--peering", "glimmer-operator", "--priority", "100"],
            registry=registry,
            settings=operator_settings(),
            timeout=300,
        )
        with runner as kopf_run:
            # A run to its verdict, delivering to every kind of sink.
            created(http, f"{API}/burninruns", run_body("accept", [node], profileRef="rbac-host"))
            eventually(lambda: phase(http, "accept") == "Passed", "the run passed", 240)
            eventually(lambda: hook.requests, "the webhook got the envelopes")
            # Drift: a hardware label changes under the fingerprint.
            label = {"metadata": {"labels": {"nvidia.com/gpu.product": "NVIDIA-H200"}}}
            merge = {"Content-Type": "application/merge-patch+json"}
            http.patch(f"/api/v1/nodes/{node}", json=label, headers=merge)
            http.patch(
                f"/api/v1/nodes/{node}",
                json={"metadata": {"labels": {"nvidia.com/gpu.product": "NVIDIA-B200"}}},
                headers=merge,
            )
            eventually(
                lambda: any(
                    e["reason"] == "HardwareDrift"
                    for e in http.get(f"/api/v1/namespaces/{NS}/events").json()["items"]
                ),
                "a HardwareDrift event",
            )
            # An orphan stamp, reaped.
            orphan = {CORDON_OWNER: "default/gone/0000", PRIOR_UNSCHEDULABLE: "false"}
            http.patch(
                f"/api/v1/nodes/{node}",
                json={"metadata": {"annotations": orphan}, "spec": {"unschedulable": True}},
                headers=merge,
            )
            eventually(
                lambda: not http.get(f"/api/v1/nodes/{node}").json()["spec"].get("unschedulable"),
                "the orphan stamp reaped",
            )
            # A schedule fires; its run is cancelled, then pruned by the history limit.
            schedule = {
                "apiVersion": "burnin.glimmer.ai/v1alpha1",
                "kind": "BurnInSchedule",
                "metadata": {"name": "often"},
                "spec": {
                    "schedule": "@every 2s",
                    "profileRef": "rbac-host",
                    "target": {"nodeNames": [node]},
                    "failedRunsHistoryLimit": 0,
                },
            }
            created(http, f"{API}/burninschedules", schedule)
            status_of = f"{API}/burninschedules/often"
            fired = eventually(
                lambda: (http.get(status_of).json().get("status") or {}).get("lastRunName"),
                "the schedule fired",
            )
            http.patch(f"{status_of}", json={"spec": {"suspend": True}}, headers=merge)
            pods = f"/api/v1/namespaces/{NS}/pods"
            selector = {"labelSelector": f"burnin.glimmer.ai/run={fired}"}
            eventually(lambda: http.get(pods, params=selector).json()["items"], "its first pod")
            http.patch(
                f"{API}/burninruns/{fired}",
                json={"spec": {"cancel": True, "cancelPolicy": "Immediate"}},
                headers=merge,
            )
            eventually(
                lambda: http.get(f"{API}/burninruns/{fired}").status_code == 404,
                "the cancelled run pruned by the schedule's history limit",
                120,
            )
            # A fingerprint deleted by a human is recaptured.
            fingerprint = f"{API.replace(NS, 'default')}/nodefingerprints/{node}"
            http.delete(fingerprint)
            eventually(lambda: http.get(fingerprint).status_code == 200, "recaptured")
        assert kopf_run.exit_code == 0, kopf_run.output[-4000:]
        return operator_requests(cluster.journal)


def driver_client(k8s_api: K8sAPI) -> Any:
    """A client for the pod driver that says it is not the operator: it plays the kubelet."""
    client = connect(k8s_api.kubeconfig)
    client._client._client.headers["User-Agent"] = "glimmer-test-pod-driver"
    return client


def drive_pair_through_the_engine(k8s_api: K8sAPI) -> Used:
    with httpx.Client(base_url=k8s_api.url, timeout=30) as http:
        for name in ("n1", "n2"):
            labels = {"kubernetes.io/hostname": name}
            created(http, "/api/v1/nodes", {"metadata": {"name": name, "labels": labels}})
        test = {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInTest",
            "metadata": {"name": "link"},
            "spec": {
                "kind": "tcp-baseline",
                "scope": "Pair",
                "durationSeconds": 60,
                "runner": {"image": "glimmer/runner:test"},
            },
        }
        created(http, f"{API}/burnintests", test)
        profile = {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInProfile",
            "metadata": {"name": "pair"},
            "spec": {"tests": [{"testRef": "link"}]},
        }
        created(http, f"{API}/burninprofiles", profile)
        # Collected by its TTL once it settles: the backend then deletes its pods and Service.
        run = run_body(
            "pair", ["n1", "n2"], profileRef="pair", maxConcurrentNodes=2, ttlSecondsAfterFinished=1
        )
        created(http, f"{API}/burninruns", run)
    client = connect(k8s_api.kubeconfig)
    clock = FastClock()
    backend = KubernetesBackend(client, clock=clock)
    driver = PodDriver(driver_client(k8s_api), k8s_api.log_dir, 1.0, output="bandwidthGbps=9.4\n")
    final = drive_on_standin(backend, driver, "pair", clock=clock)
    assert final is not None and final.status is not None
    assert final.status.phase is Phase.PASSED, final.status
    engine = Engine(backend)

    def collected() -> bool:
        engine.reconcile(NS, "pair")  # the pass that finds its TTL spent deletes it
        return backend.get_run(NS, "pair") is None

    eventually(collected, "the run collected by its TTL")
    return operator_requests(k8s_api.journal)


def test_every_request_the_operator_makes_is_granted_and_every_grant_is_used(
    k8s_api: K8sAPI, tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POD_NAMESPACE", NS)  # as the Deployment sets it
    used = drive_whole_operator(tmp_path, receiver, monkeypatch)
    used |= drive_pair_through_the_engine(k8s_api)
    granted = used_pairs()
    missing, unused = sorted(used - granted), sorted(granted - used - unobserved_pairs())
    assert missing == [], f"used but not granted (add to glimmer.operator.rbac): {missing}"
    assert unused == [], f"granted but never used (drop from the ClusterRole): {unused}"


def test_every_grant_names_why_and_no_resource_is_listed_twice() -> None:
    keys = [(g.group, g.resource) for g in GRANTS]
    assert len(keys) == len(set(keys))
    assert all(g.why and g.verbs == tuple(sorted(g.verbs)) for g in GRANTS)
    assert not any("*" in g.verbs or g.resource == "*" for g in GRANTS)
    assert all(set(g.unobserved) <= set(g.verbs) for g in GRANTS)
