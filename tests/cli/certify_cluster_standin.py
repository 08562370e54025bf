"""An API stand-in with the certification CRDs for the ``glimmer certify`` cluster commands'
tests, and writers of what the controllers would leave there (the controllers themselves are
not run: each test writes the Certification's status and its report ConfigMap by hand)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from glimmer.certify.measure.bandwidth import SizeResult
from glimmer.certify.result import (
    CategoryResult,
    CertResult,
    FailedNode,
    GroupRun,
    to_doc,
)
from tools.k8s_standin.api import GLIMMER_CRDS
from tools.k8s_standin.background import api_in_thread
from tools.k8s_standin.kubeconfig import write_kubeconfig

REPO = Path(__file__).resolve().parents[2]
CERTIFY_CRDS = REPO / "deploy" / "crds-certify"
NS = "default"
CERTS = f"/apis/certify.glimmer.ai/v1alpha1/namespaces/{NS}/certifications"
WORKFLOWS = f"/apis/certify.glimmer.ai/v1alpha1/namespaces/{NS}/workflows"
CONFIGMAPS = f"/api/v1/namespaces/{NS}/configmaps"
MERGE = {"Content-Type": "application/merge-patch+json"}
H100 = "NVIDIA-H100-80GB-HBM3"
STAMP = "2026-12-02T04:00:00Z"

CERT_YAML = """\
apiVersion: certify.glimmer.ai/v1alpha1
kind: Certification
metadata: {name: acceptance}
spec:
  target:
    nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
  categories:
    - domain: communication
      variant: nccl-all-reduce
    - domain: diagnostics
      variant: dcgm-level2
"""


@dataclass(frozen=True)
class StandIn:
    url: str
    kubeconfig: Path
    http: httpx.Client


# What a test leaves behind and the next one must not see (one stand-in serves a module).
LEFTOVERS = (CERTS, WORKFLOWS, CONFIGMAPS, "/api/v1/nodes")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    """One API stand-in with the certification CRDs for a test module."""
    root = tmp_path_factory.mktemp("standin")
    with (
        api_in_thread(crd_dirs=(GLIMMER_CRDS, CERTIFY_CRDS)) as running,
        httpx.Client(base_url=running.url, timeout=10) as http,
    ):
        yield StandIn(running.url, write_kubeconfig(root / "kubeconfig", running.url), http)


@pytest.fixture
def standin(served: StandIn, monkeypatch: pytest.MonkeyPatch) -> Iterator[StandIn]:
    """The module's stand-in, found through $KUBECONFIG, emptied of what the test wrote."""
    monkeypatch.setenv("KUBECONFIG", str(served.kubeconfig))
    yield served
    for collection in LEFTOVERS:
        for item in served.http.get(collection).json().get("items") or ():
            served.http.delete(f"{collection}/{item['metadata']['name']}")


def ok(r: httpx.Response) -> dict[str, Any]:
    assert r.status_code in (200, 201), r.text
    body: dict[str, Any] = r.json()
    return body


def add_node(
    http: httpx.Client,
    name: str,
    *,
    product: str | None = H100,
    gpus: str | None = "8",
    provider: str = "",
    unschedulable: bool = False,
    ready: bool = True,
    allocatable: dict[str, str] | None = None,
    **labels: str,
) -> None:
    """A Node as GPU feature discovery labels it (``product`` None: a CPU node)."""
    all_labels = {"kubernetes.io/hostname": name, **labels}
    if product:
        all_labels |= {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product}
    spec: dict[str, Any] = {"unschedulable": unschedulable}
    if provider:
        spec["providerID"] = provider
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": all_labels}}
    ok(http.post("/api/v1/nodes", json={**node, "spec": spec}))
    resources = dict(allocatable or {})
    if gpus is not None and product:
        resources["nvidia.com/gpu"] = gpus
    ready = {"type": "Ready", "status": "True" if ready else "False", "reason": "KubeletReady"}
    status = {"allocatable": resources, "capacity": resources, "conditions": [ready]}
    ok(http.patch(f"/api/v1/nodes/{name}/status", json={"status": status}, headers=MERGE))


def condition(kind: str, reason: str, message: str = "") -> dict[str, Any]:
    return {
        "type": kind,
        "status": "True",
        "reason": reason,
        "message": message,
        "lastTransitionTime": STAMP,
    }


def create_certification(http: httpx.Client, name: str = "acceptance") -> dict[str, Any]:
    import yaml

    body = yaml.safe_load(CERT_YAML)
    body["metadata"]["name"] = name
    return ok(http.post(CERTS, json=body))


def write_status(
    http: httpx.Client,
    name: str,
    phase: str,
    categories: Sequence[tuple[str, str, str]],
    reason: str = "Reason",
    message: str = "",
) -> None:
    """The Certification's status as its controller writes it: one trio member True and each
    category's (domain, variant, status)."""
    status = {
        "conditions": [condition(phase, reason, message)],
        "categoryStatuses": [
            {
                "domain": d,
                "variant": v,
                "status": s,
                "workflowRef": {"name": f"{name}-{d}-{v}"[:31], "namespace": NS},
            }
            for d, v, s in categories
        ],
    }
    ok(http.patch(f"{CERTS}/{name}/status", json={"status": status}, headers=MERGE))


def write_report(http: httpx.Client, name: str, doc: dict[str, Any] | str) -> None:
    """ConfigMap ``<name>-report`` with ``result.json`` (a document, or raw text)."""
    text = doc if isinstance(doc, str) else json.dumps(doc)
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{name}-report"},
        "data": {"result.json": text},
    }
    ok(http.post(CONFIGMAPS, json=body))


def result(name: str = "acceptance", *, failing: bool = False) -> CertResult:
    """A two-category result on three H100 nodes; ``failing``: node-c's bandwidth is low."""
    nodes = ("node-a", "node-b", "node-c")
    group = GroupRun(
        name="group-0",
        nodes=nodes,
        metric="busBandwidthGBps",
        passed=not failing,
        measured=120.0 if failing else 370.5,
        expected=360.0,
        floor=324.0,
        path="nvlink",
        source="h100 nvlink",
        failure="ThresholdViolation" if failing else "",
    )
    failed = tuple(FailedNode(n, "ThresholdViolation", "bus bandwidth 120 < 324") for n in nodes)
    nccl = CategoryResult(
        domain="communication",
        variant="nccl-all-reduce",
        status="Failed" if failing else "Succeeded",
        test_scale="full-scale",
        nodes_per_job=3,
        runtime_s=95.0,
        mnnvl=False,
        groups=(group,),
        failed_nodes=failed if failing else (),
        failure_reason="ThresholdViolation" if failing else "",
        bandwidth=(SizeResult(size=8 << 30, alg_bw=190.0, bus_bw=370.5, samples=10),),
    )
    dcgm = CategoryResult(
        domain="diagnostics",
        variant="dcgm-level2",
        status="Succeeded",
        test_scale="per-node",
        nodes_per_job=1,
        runtime_s=300.0,
        mnnvl=None,
        groups=tuple(
            GroupRun(name=n, nodes=(n,), metric="dcgmLevel", passed=True, path="node")
            for n in nodes
        ),
    )
    return CertResult(
        name=name,
        fleet=NS,
        gpu="h100",
        total_nodes=3,
        excluded_nodes=(),
        exclusion_reason="",
        categories=(nccl, dcgm),
        node_racks={n: "" for n in nodes},
        platform="aws",
    )


def report_doc(name: str = "acceptance", *, failing: bool = False) -> dict[str, Any]:
    return to_doc(result(name, failing=failing))
