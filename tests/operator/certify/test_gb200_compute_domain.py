"""A GB200 certification on the stand-in cluster (the operator's whole registry under kopf, the
Trainer stand-in over the ``ai-factory`` fleet's NVL72 rack, and the DRA stand-in playing
NVIDIA's ComputeDomain driver): ``nccl-all-reduce`` at testScale intra-rack over the rack's 18
GB200 nodes, one of them planted with ``gpu_fallen_off_bus``.

The catalog gives a GB200 category a ComputeDomain and the runtime that claims its channel
(§4.8); both are copied per Job (§3.4). The operator creates each Job's ComputeDomain, waits
until the driver has made the channel's ResourceClaimTemplate before it creates the Job (§3.2: a
dependency not ready -> requeue), the pods claim their Job's channel and run on the rack's
NVLink domain, and deleting the Certification deletes the dependencies in reverse creation order
once the Jobs and their pods are gone (ADR-053). The report names the same node with the same
reason and message as ``glimmer certify run --backend sim`` on the same fleet and fault."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from glimmer.backends.kubernetes.client import connect
from glimmer.fleet.faultspec import parse_fault
from glimmer.fleet.load import load_topology
from glimmer.operator.certify.dependencies import DependencyNotReady, ensure
from glimmer.operator.certify.workflow_cluster import Cluster
from tests.operator.certify.cluster_harness import (
    CERTIFY_CRDS,
    CERTS,
    NS,
    eventually,
    failed_of,
    get,
    operator_in_thread,
    report,
    terminal,
)
from tools.k8s_standin.cluster import standin_cluster
from tools.k8s_standin.dra import DELETED_WHILE_CLAIMED
from tools.k8s_standin.trainer_fleet import TrainerFleet

GLIMMER = str(Path(sys.executable).parent / "glimmer")
NAME = "gb200"
FLEET = "ai-factory"
RACK = [f"nvl-node-{i:04d}" for i in range(18)]
BAD = "nvl-node-0003"
FAULT = f"gpu_fallen_off_bus@node:{BAD}"
DOMAINS = f"/apis/resource.nvidia.com/v1beta1/namespaces/{NS}/computedomains"
TEMPLATES = f"/apis/resource.k8s.io/v1beta1/namespaces/{NS}/resourceclaimtemplates"
RUNTIMES = f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{NS}/trainingruntimes"
# Long enough that an operator not waiting for the channel would create its Job first.
DRIVER_DELAY_S = 1.5
DRA_AGENT = "glimmer-standin-dra/1"


def certification() -> dict[str, Any]:
    return {
        "apiVersion": "certify.glimmer.ai/v1alpha1",
        "kind": "Certification",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": {
            "target": {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-GB200"}},
            "categories": [
                {
                    "domain": "communication",
                    "variant": "nccl-all-reduce",
                    "options": {"testScale": "intra-rack"},
                }
            ],
        },
    }


def _journal(path: Path | None) -> list[dict[str, Any]]:
    assert path is not None
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # the line the stand-in is still writing
    return out


def _first(entries: list[dict[str, Any]], **match: Any) -> int:
    for i, e in enumerate(entries):
        if all(e.get(k) == v for k, v in match.items()):
            return i
    raise AssertionError(f"no request {match} in the journal")


def test_a_gb200_certification_creates_waits_for_uses_and_deletes_its_compute_domain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "certification.json"
    spec.write_text(json.dumps(certification()))
    sim = subprocess.Popen(
        [GLIMMER, "certify", "run", "-f", str(spec), "--fleet", FLEET, "--fault", FAULT,
         "--seed", "0", "-o", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    fleet = TrainerFleet(load_topology(FLEET), [parse_fault(FAULT)], seconds_per_job=0.05)
    started = time.monotonic()
    with (
        standin_cluster(
            root=tmp_path / "cluster",
            network="host",
            fleet=fleet,
            crd_dirs=(CERTIFY_CRDS,),
            dra=True,
            dra_delay_s=DRIVER_DELAY_S,
        ) as cluster,
        operator_in_thread(cluster, monkeypatch),
        httpx.Client(base_url=cluster.url, timeout=30) as http,
    ):
        made = http.post(CERTS, json=certification())
        assert made.status_code == 201, made.text
        eventually(lambda: terminal(http, NAME), "the GB200 certification finished")
        doc = report(http, NAME)
        domains = (get(http, DOMAINS) or {})["items"]
        templates = (get(http, TEMPLATES) or {})["items"]
        pods = [
            p
            for p in (get(http, f"/api/v1/namespaces/{NS}/pods") or {})["items"]
            if p["spec"].get("resourceClaims")
        ]
        mark = len(_journal(cluster.journal))
        assert http.delete(f"{CERTS}/{NAME}").status_code == 200
        eventually(
            lambda: (
                not (get(http, DOMAINS) or {})["items"]
                and not (get(http, TEMPLATES) or {})["items"]
                and not (get(http, RUNTIMES) or {})["items"]
            ),
            "the dependencies and the channel template deleted",
        )
        entries = _journal(cluster.journal)
        events = (get(http, f"/api/v1/namespaces/{NS}/events") or {})["items"]
    out, err = sim.communicate(timeout=240)
    print(f"GB200 certification on the stand-in: {time.monotonic() - started:.1f} s")

    # The same node, reason and message as the simulator.
    assert sim.returncode == 1, err[-2000:]
    sim_doc = json.loads(out)
    assert [f[:3] for f in failed_of(doc)] == [("nccl-all-reduce", BAD, "WorkloadFailed")]
    assert failed_of(doc) == failed_of(sim_doc)
    assert doc["failedNodes"] == sim_doc["failedNodes"] == [BAD]
    assert doc["result"] == sim_doc["result"] == "FAILED"
    assert doc["totalNodes"] == sim_doc["totalNodes"] == len(RACK)
    assert doc["categories"][0]["mnnvl"] is True

    # Each Job had its own ComputeDomain (§3.4 rule (b): it shares the channel template the
    # runtime claims), and the driver made each one's channel, labelled with its UID.
    made = [e for e in entries if e["method"] == "POST" and e["status"] == 201]
    jobs_made = [i for i, e in enumerate(made) if e["resource"] == "jobs"]
    assert len(domains) == len(jobs_made) > 1
    by_name = {t["metadata"]["name"]: t for t in templates}
    channels = set()
    for domain in domains:
        channel = domain["spec"]["channel"]["resourceClaimTemplate"]["name"]
        assert channel.startswith("nccl-all-reduce-compute-domain-channel-"), channel
        labels = by_name[channel]["metadata"]["labels"]
        assert labels["resource.nvidia.com/computeDomain"] == domain["metadata"]["uid"]
        assert domain["status"]["status"] == "Ready"
        channels.add(channel)
    assert len(channels) == len(domains) == len(templates)
    # Every pod claimed one of those channels and ran on the rack (its NVLink domain).
    claimed = {c["resourceClaimTemplateName"] for p in pods for c in p["spec"]["resourceClaims"]}
    assert pods and claimed <= channels
    assert {p["spec"]["nodeName"] for p in pods} <= set(RACK)

    # Created, then waited for: the k-th Job came only after the driver had made k channels,
    # and the first channel at least the driver's delay after the first domain.
    templates_made = [
        i
        for i, e in enumerate(made)
        if e["resource"] == "resourceclaimtemplates" and e["user_agent"] == DRA_AGENT
    ]
    domains_made = [i for i, e in enumerate(made) if e["resource"] == "computedomains"]
    for k, job in enumerate(jobs_made, start=1):
        assert len([t for t in templates_made if t < job]) >= k
        assert len([d for d in domains_made if d < job]) >= k
    first_wait = made[templates_made[0]]["time"] - made[domains_made[0]]["time"]
    assert domains_made[0] < templates_made[0] and first_wait >= DRIVER_DELAY_S
    train_jobs_made = [i for i, e in enumerate(made) if e["resource"] == "trainjobs"]
    assert jobs_made[0] < train_jobs_made[0]

    # Deleted in reverse creation order, once the Jobs (whose finalizers wait for their pods)
    # were gone: each Job's runtime before its domain, and the driver saw no pod claiming a
    # channel when its ComputeDomain went (ADR-053; it says so by a DeletedWhileClaimed event
    # otherwise). Read over the whole journal: what the Certification's deletion caused is
    # all there, whenever this thread got to read it.
    gone = {
        (e["resource"], e["name"]): i
        for i, e in enumerate(entries)
        if e["method"] == "DELETE" and e.get("status") == 200
    }
    jobs_gone = [i for (kind, _), i in gone.items() if kind == "jobs"]
    domains_gone = {n: i for (kind, n), i in gone.items() if kind == "computedomains"}
    runtimes_gone = {n: i for (kind, n), i in gone.items() if kind == "trainingruntimes"}
    assert len(domains_gone) == len(domains), sorted(gone)
    assert min(domains_gone.values()) >= mark  # the Certification's deletion, not before
    assert jobs_gone and runtimes_gone, sorted(gone)
    assert max(jobs_gone) < min(runtimes_gone.values())
    for name, at in domains_gone.items():
        suffix = name.removeprefix("nccl-all-reduce-compute-domain")
        (runtime,) = [r for r in runtimes_gone if r.endswith(suffix)]
        assert runtimes_gone[runtime] < at, (runtime, name)
    assert not [e for e in events if e.get("reason") == DELETED_WHILE_CLAIMED], events


def test_ensure_creates_no_dependency_past_a_compute_domain_its_driver_has_not_readied(
    tmp_path: Path,
) -> None:
    """§3.2's readiness, as the Workflow controller's job-scoped path meets it: the first pass
    creates the ComputeDomain and stops (DependencyNotReady: the Job is not created, the
    runtime after it neither); once the driver has made the channel, the next pass creates the
    rest and returns every ref in creation order."""
    channel = "entry-compute-domain-channel-a1"
    deps = [
        {
            "apiVersion": "resource.nvidia.com/v1beta1",
            "kind": "ComputeDomain",
            "metadata": {"name": "entry-compute-domain-a1"},
            "spec": {"numNodes": 0, "channel": {"resourceClaimTemplate": {"name": channel}}},
        },
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainingRuntime",
            "metadata": {"name": "entry-runtime-a1"},
            "spec": {
                "mlPolicy": {"numNodes": 1},
                "template": {
                    "spec": {
                        "replicatedJobs": [
                            {
                                "name": "node",
                                "template": {
                                    "spec": {
                                        "template": {
                                            "spec": {
                                                "resourceClaims": [
                                                    {
                                                        "name": "compute-domain",
                                                        "resourceClaimTemplateName": channel,
                                                    }
                                                ],
                                                "containers": [{"name": "node", "image": "x"}],
                                            }
                                        }
                                    }
                                },
                            }
                        ]
                    }
                },
            },
        },
    ]
    wf = {
        "apiVersion": "certify.glimmer.ai/v1alpha1",
        "kind": "Workflow",
        "metadata": {"name": "wf", "namespace": NS, "uid": "0f0e0d0c-0000-4000-8000-000000000001"},
    }
    with standin_cluster(
        nodes=1, root=tmp_path, network="host", trainer=True, dra=True, dra_delay_s=0.5
    ) as cluster:
        api = Cluster(connect(cluster.kubeconfig))
        with pytest.raises(DependencyNotReady, match=f"ResourceClaimTemplate {channel}"):
            ensure(api, deps, wf, "job", "group-0")
        with httpx.Client(base_url=cluster.url, timeout=30) as http:
            assert len((get(http, DOMAINS) or {})["items"]) == 1
            assert (get(http, RUNTIMES) or {})["items"] == []
            eventually(lambda: (get(http, TEMPLATES) or {})["items"], "the driver's channel")
        refs = ensure(api, deps, wf, "job", "group-0")
        with httpx.Client(base_url=cluster.url, timeout=30) as http:
            assert len((get(http, RUNTIMES) or {})["items"]) == 1
    assert [(r["kind"], r["name"], r["scope"]) for r in refs] == [
        ("ComputeDomain", "entry-compute-domain-a1", "job"),
        ("TrainingRuntime", "entry-runtime-a1", "job"),
    ]
