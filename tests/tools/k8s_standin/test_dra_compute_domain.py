"""The DRA stand-in (tools/k8s_standin/dra.py) on a stand-in cluster, over HTTP: a ComputeDomain
gets its channel ResourceClaimTemplate and Ready status after the driver's delay; a pod
claiming the template waits Pending until it exists, then runs on a node of an NVLink domain
and pulls the domain's later pods to that same clique; deleting the ComputeDomain deletes the
template, and doing so under a running pod is told by a DeletedWhileClaimed event."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.tools.k8s_standin.conftest import MERGE, eventually
from tools.k8s_standin.cluster import standin_cluster
from tools.k8s_standin.dra import CLIQUE_LABEL, DELETED_WHILE_CLAIMED, DOMAIN_LABEL

DOMAINS = "/apis/resource.nvidia.com/v1beta1/namespaces/default/computedomains"
TEMPLATES = "/apis/resource.k8s.io/v1beta1/namespaces/default/resourceclaimtemplates"
PODS = "/api/v1/namespaces/default/pods"
CHANNEL = "job-channel"


@pytest.fixture
def http(tmp_path: Path) -> Iterator[httpx.Client]:
    with (
        standin_cluster(
            nodes=3,
            root=tmp_path,
            network="host",
            dra=True,
            dra_delay_s=0.3,
            node_labels={CLIQUE_LABEL: "domain-a"},
        ) as cluster,
        httpx.Client(base_url=cluster.url, timeout=10) as client,
    ):
        # node-3 is in another NVLink domain.
        moved = client.patch(
            "/api/v1/nodes/node-3",
            json={"metadata": {"labels": {CLIQUE_LABEL: "domain-b"}}},
            headers=MERGE,
        )
        assert moved.status_code == 200, moved.text
        yield client


def compute_domain(name: str = "job-domain") -> dict[str, Any]:
    return {
        "apiVersion": "resource.nvidia.com/v1beta1",
        "kind": "ComputeDomain",
        "metadata": {"name": name},
        "spec": {"numNodes": 0, "channel": {"resourceClaimTemplate": {"name": CHANNEL}}},
    }


def claiming_pod(name: str, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 1,
            "nodeSelector": {"kubernetes.io/hostname": node},
            "resourceClaims": [{"name": "compute-domain", "resourceClaimTemplateName": CHANNEL}],
            "containers": [
                {
                    "name": "node",
                    "image": "nccl-tests:1",
                    "command": ["sleep", "60"],
                    "resources": {"claims": [{"name": "compute-domain"}]},
                }
            ],
        },
    }


def _pod(http: httpx.Client, name: str) -> dict[str, Any]:
    got = http.get(f"{PODS}/{name}")
    assert got.status_code == 200, got.text
    body: dict[str, Any] = got.json()
    return body


def _unschedulable(http: httpx.Client, name: str) -> str:
    for c in _pod(http, name).get("status", {}).get("conditions") or ():
        if c["type"] == "PodScheduled" and c["status"] == "False":
            return str(c["message"])
    return ""


def test_a_compute_domain_gets_its_channel_template_and_ready_after_the_drivers_delay(
    http: httpx.Client,
) -> None:
    made = http.post(DOMAINS, json=compute_domain())
    assert made.status_code == 201, made.text
    # A pod claiming the channel before the driver made it waits, saying for what.
    assert http.post(PODS, json=claiming_pod("early", "node-1")).status_code == 201
    waiting = eventually(lambda: _unschedulable(http, "early"), "the early pod held Pending")
    assert f'waiting for ResourceClaimTemplate "{CHANNEL}"' in waiting
    template = eventually(
        lambda: (
            http.get(f"{TEMPLATES}/{CHANNEL}").status_code == 200
            and http.get(f"{TEMPLATES}/{CHANNEL}").json()
        ),
        "the channel template",
    )
    assert template["metadata"]["labels"][DOMAIN_LABEL] == made.json()["metadata"]["uid"]
    requests = template["spec"]["spec"]["devices"]["requests"]
    assert requests[0]["deviceClassName"] == "compute-domain-default-channel.nvidia.com"
    ready = eventually(
        lambda: (
            (http.get(f"{DOMAINS}/job-domain").json().get("status") or {}).get("status") == "Ready"
        ),
        "the ComputeDomain Ready",
    )
    assert ready
    eventually(lambda: _pod(http, "early")["spec"].get("nodeName") == "node-1", "early placed")
    # A second pod of the domain may join it on node-2 (same clique), never on node-3.
    assert http.post(PODS, json=claiming_pod("peer", "node-2")).status_code == 201
    assert http.post(PODS, json=claiming_pod("stray", "node-3")).status_code == 201
    eventually(lambda: _pod(http, "peer")["spec"].get("nodeName") == "node-2", "peer placed")
    stray = eventually(lambda: _unschedulable(http, "stray"), "the stray pod held Pending")
    assert stray == (
        "0/3 nodes are available: 1 node(s) cannot allocate all claims, "
        "2 node(s) didn't match Pod's node affinity/selector."
    )
    assert not _pod(http, "stray")["spec"].get("nodeName")

    # Deleted under its running pods: the template goes with it, and the driver says so.
    assert http.delete(f"{DOMAINS}/job-domain").status_code == 200
    eventually(lambda: http.get(f"{TEMPLATES}/{CHANNEL}").status_code == 404, "template gone")
    events = eventually(
        lambda: [
            e
            for e in http.get("/api/v1/namespaces/default/events").json()["items"]
            if e.get("reason") == DELETED_WHILE_CLAIMED
        ],
        "the DeletedWhileClaimed event",
    )
    assert events[0]["involvedObject"]["name"] == "job-domain"
    assert "early" in events[0]["message"] and "peer" in events[0]["message"]
    assert "stray" not in events[0]["message"]  # never placed: it held nothing


def test_a_pod_claiming_no_compute_domain_channel_is_scheduled_as_any_other(
    http: httpx.Client,
) -> None:
    pod = claiming_pod("plain", "node-3")
    del pod["spec"]["resourceClaims"], pod["spec"]["containers"][0]["resources"]
    assert http.post(PODS, json=pod).status_code == 201
    eventually(lambda: _pod(http, "plain")["spec"].get("nodeName") == "node-3", "plain placed")
