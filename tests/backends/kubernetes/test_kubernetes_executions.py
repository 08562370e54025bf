"""Executions on Kubernetes (backends/kubernetes/executions.py), over HTTP against the API
stand-in: a runner Pod the API accepts, created once however often asked, owned by its run and
carrying the request it was made from; one LIST per observation, matched by run name and uid;
logs through pods/log; headless rendezvous Services that publish not-ready addresses."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from kube_cluster import Journal, create_nodes
from kube_specs import NAMESPACE, node_spec, pair_end
from lightkube import Client
from lightkube.types import PatchType

from glimmer.api.run import BurnInRun
from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.executions import SPEC_ANNOTATION, KubeExecutions, pod_manifest
from glimmer.backends.kubernetes.podspec import SAFE_TO_EVICT, UNSCHEDULABLE_TAINT
from glimmer.backends.kubernetes.resources import PODS, SERVICES, as_dict
from glimmer.engine.backend import Conflict, ExecPhase, LogUnavailable, Rendezvous
from glimmer.engine.keys import RUN_LABEL
from tests.k8s_api import K8sAPI

API = "burnin.glimmer.ai/v1alpha1"


def _pod(client: Client, name: str) -> dict[str, Any]:
    return as_dict(client.get(PODS, name, namespace=NAMESPACE))


def _pod_writes(journal: Journal) -> list[dict[str, Any]]:
    return [e for e in journal() if e["method"] == "POST" and e["path"].endswith("/pods")]


def test_an_execution_is_a_pod_the_api_accepts_owned_by_its_run_and_never_made_twice(
    backend: KubernetesBackend, client: Client, journal: Journal
) -> None:
    spec = node_spec("run-t0-a1-0123abcd", "n1")
    backend.create_execution(spec)
    backend.create_execution(dataclasses.replace(spec, image="other:1", node="n2"))
    assert len(_pod_writes(journal)) == 2  # asked twice, answered AlreadyExists the second time
    pod = _pod(client, spec.name)
    assert pod["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "n1"}  # the first kept
    assert pod["metadata"]["labels"][RUN_LABEL] == "run"
    assert pod["metadata"]["annotations"][SAFE_TO_EVICT] == "false"
    (owner,) = pod["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("BurnInRun", "uid-run", True)
    assert SPEC_ANNOTATION in pod["metadata"]["annotations"]
    (found,) = backend.executions(NAMESPACE, "run", "uid-run")
    assert found.spec == spec and found.phase is ExecPhase.PENDING


def test_a_create_the_api_refuses_with_409_conflict_raises_conflict_and_creates_nothing(
    conflicting: Client,
) -> None:
    create_nodes(conflicting, "n1")  # write 1; the pod is write 2, refused
    pods = KubeExecutions(conflicting)
    spec = node_spec("p", "n1")
    with pytest.raises(Conflict):
        pods.create_execution(spec)
    assert list(pods.executions(NAMESPACE, "run", "uid-run")) == []
    pods.create_execution(spec)  # write 3
    assert [e.name for e in pods.executions(NAMESPACE, "run", "uid-run")] == ["p"]


def test_observing_a_runs_executions_is_one_list_by_its_run_label(
    backend: KubernetesBackend, journal: Journal
) -> None:
    for i in range(3):
        backend.create_execution(node_spec(f"p{i}", f"n{i}"))
    before = len(journal())
    assert len(list(backend.executions(NAMESPACE, "run", "uid-run"))) == 3
    (request,) = journal()[before:]
    assert (request["method"], request["path"]) == ("GET", f"/api/v1/namespaces/{NAMESPACE}/pods")
    assert request["query"]["labelSelector"] == f"{RUN_LABEL}=run"


def test_a_recreated_run_of_the_same_name_owns_none_of_its_predecessors_pods(
    backend: KubernetesBackend, client: Client
) -> None:
    backend.create_execution(node_spec("old", "n1", run_uid="uid-old"))
    backend.create_execution(node_spec("new", "n1", run_uid="uid-new"))
    assert [e.name for e in backend.executions(NAMESPACE, "run", "uid-new")] == ["new"]
    assert [e.name for e in backend.executions(NAMESPACE, "run", "uid-old")] == ["old"]


def test_a_pod_glimmer_did_not_create_is_no_execution_whatever_its_labels(
    backend: KubernetesBackend, client: Client
) -> None:
    backend.create_execution(node_spec("mine", "n1"))
    stray = _pod(client, "mine")
    stray["metadata"] = {
        "name": "stray",
        "namespace": NAMESPACE,
        "labels": stray["metadata"]["labels"],
        "ownerReferences": stray["metadata"]["ownerReferences"],
    }
    stray.pop("status", None)
    client.create(PODS.from_dict(stray), namespace=NAMESPACE)
    assert [e.name for e in backend.executions(NAMESPACE, "run", "uid-run")] == ["mine"]


def test_a_pod_carries_the_runs_own_tolerations_and_the_cordon_toleration(
    backend: KubernetesBackend, client: Client
) -> None:
    run = backend.submit(
        BurnInRun.model_validate(
            {
                "apiVersion": API,
                "kind": "BurnInRun",
                "metadata": {"name": "run", "namespace": NAMESPACE},
                "spec": {
                    "profileRef": "prof",
                    "target": {
                        "nodeNames": ["n1"],
                        "tolerations": [
                            {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}
                        ],
                    },
                },
            }
        )
    )
    backend.create_execution(node_spec("p", "n1", run_uid=run.metadata.uid or ""))
    keys = [t["key"] for t in _pod(client, "p")["spec"]["tolerations"]]
    assert keys == ["gpu", UNSCHEDULABLE_TAINT]


def test_the_log_is_the_runner_containers_and_unavailable_says_why(
    backend: KubernetesBackend, k8s_api: K8sAPI
) -> None:
    with pytest.raises(LogUnavailable, match="never-created"):
        backend.read_log(NAMESPACE, "never-created")
    backend.create_execution(node_spec("p", "n1"))
    with pytest.raises(LogUnavailable, match="waiting to start"):
        backend.read_log(NAMESPACE, "p")
    log = k8s_api.log_dir / NAMESPACE / "p.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("miscompares=0\nburn finished\n")
    assert backend.read_log(NAMESPACE, "p") == "miscompares=0\nburn finished\n"


def test_a_deleted_pod_is_gone_and_deleting_a_missing_one_is_no_error(
    backend: KubernetesBackend,
) -> None:
    backend.create_execution(node_spec("p", "n1"))
    backend.delete_execution(NAMESPACE, "p")
    backend.delete_execution(NAMESPACE, "p")
    assert list(backend.executions(NAMESPACE, "run", "uid-run")) == []


def test_a_rendezvous_is_a_headless_service_publishing_not_ready_addresses_made_once(
    backend: KubernetesBackend, client: Client, journal: Journal
) -> None:
    rendezvous = Rendezvous("bp-run-t0-a1-0123abcd", NAMESPACE, "run", "uid-run", "bw", 1)
    backend.ensure_rendezvous(rendezvous)
    backend.ensure_rendezvous(rendezvous)
    service = as_dict(client.get(SERVICES, rendezvous.name, namespace=NAMESPACE))
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["publishNotReadyAddresses"] is True
    assert "ports" not in service["spec"]
    assert service["spec"]["selector"] == {
        RUN_LABEL: "run",
        "burnin.glimmer.ai/test": "bw",
        "burnin.glimmer.ai/attempt": "1",
    }
    assert service["metadata"]["ownerReferences"][0]["uid"] == "uid-run"
    # A Pair's pods resolve under it as <role>.<service>: hostname and subdomain.
    server = pair_end("s", "n1", "server", rendezvous.name)
    backend.create_execution(server)
    pod = _pod(client, "s")
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("server", rendezvous.name)
    assert backend.rendezvous_address(NAMESPACE, rendezvous.name, "server") == (
        f"server.{rendezvous.name}.{NAMESPACE}.svc"
    )


def test_deleting_a_runs_owned_objects_removes_its_pods_and_services_only(
    backend: KubernetesBackend, client: Client
) -> None:
    backend.create_execution(node_spec("mine", "n1"))
    backend.create_execution(node_spec("theirs", "n1", run_uid="uid-other"))
    backend.ensure_rendezvous(Rendezvous("svc", NAMESPACE, "run", "uid-run", "bw", 1))
    backend.pods.delete_owned(NAMESPACE, "run", "uid-run")
    assert [e.name for e in backend.executions(NAMESPACE, "run", "uid-other")] == ["theirs"]
    assert list(backend.executions(NAMESPACE, "run", "uid-run")) == []
    assert [as_dict(s)["metadata"]["name"] for s in client.list(SERVICES)] == []


def test_a_deleted_pod_still_running_on_its_node_stays_live_until_its_kubelet_stops_it(
    backend: KubernetesBackend, client: Client
) -> None:
    # A bound, running pod is deleted gracefully: it keeps loading its node until the kubelet
    # has stopped it, so it stays a live execution (its node busy and cordoned) till then.
    # Created bound to its node (as the scheduler would have bound it): the request's pod with
    # spec.nodeName set.
    bound = pod_manifest(node_spec("p", "n1"))
    bound["spec"]["nodeName"] = "n1"
    client.create(PODS.from_dict(bound), namespace=NAMESPACE)
    running = {"phase": "Running", "startTime": "2026-12-02T00:00:00Z"}
    client.patch(
        PODS.Status, "p", {"status": running}, namespace=NAMESPACE, patch_type=PatchType.MERGE
    )
    backend.delete_execution(NAMESPACE, "p")
    assert _pod(client, "p")["metadata"].get("deletionTimestamp")
    assert [e.name for e in backend.executions(NAMESPACE, "run", "uid-run").live()] == ["p"]
    client.delete(PODS, "p", namespace=NAMESPACE, grace_period=0)  # the kubelet's last word
    assert list(backend.executions(NAMESPACE, "run", "uid-run")) == []
