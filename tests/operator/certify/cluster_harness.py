"""The 16-node certification of issue 17's integration tests (test_cluster_certification_*):
the fleet, the Certification, the planted NIC fault, the Node that turns unhealthy while its
DCGM job runs, and the reads of what the operator leaves (report, node-result ConfigMaps, the
request journal).

The health monitor: a Job's ``nodeHealthMonitor`` comes from the Workflow's job template,
which the catalog fills (``lib/nccl-test.yaml``, ``lib/dcgm.yaml``: the cordon check of §3.2);
neither a Certification's options nor its categories can set one. So these tests use a catalog
whose two entries also watch the §7.1 condition example (:func:`watch_gpu_condition`), as a
site that ships its own catalog would; the operator process gets the same catalog by
:func:`watch_gpu_condition` before it starts (in-thread) or before the zygote forks it.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import difflib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from kopf.testing import KopfRunner

from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.client import connect
from glimmer.certify.attribution import read_failed_nodes, read_succeeded_nodes
from glimmer.certify.catalog.entries import catalog
from glimmer.fleet.faultspec import parse_fault
from glimmer.fleet.load import load_topology
from glimmer.operator.context import OperatorContext
from glimmer.operator.registry import build_registry
from glimmer.operator.settings import operator_settings
from tests.operator.operator_zygote import ForkedOperator, Zygote
from tools.k8s_standin.cluster import StandInCluster, standin_cluster
from tools.k8s_standin.trainer_fleet import TrainerFleet

REPO = Path(__file__).resolve().parents[3]
FLEET = REPO / "tests" / "fixtures" / "fleets" / "hgx-16.yaml"
CERTIFY_CRDS = REPO / "deploy" / "crds-certify"
NS = "default"
CERTS = f"/apis/certify.glimmer.ai/v1alpha1/namespaces/{NS}/certifications"
JOBS = f"/apis/certify.glimmer.ai/v1alpha1/namespaces/{NS}/jobs"
CONFIGMAPS = f"/api/v1/namespaces/{NS}/configmaps"
NAME = "cluster16"
NIC_NODE = "hgx-su000-node-0005"
NIC_FAULT = f"nic_degraded@nic:{NIC_NODE}/ib3"
SICK_NODE = "hgx-su000-node-0010"  # turns GPUHealthy=False while its DCGM job runs
GPU_UNHEALTHY = "node.status.conditions.exists(c, c.type == 'GPUHealthy' && c.status == 'False')"
MONITOR = f"node.spec.unschedulable == true || {GPU_UNHEALTHY}"
WATCHED = ("communication/nccl-all-reduce", "diagnostics/dcgm-level1")
CATEGORIES = [
    {"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "diagnose"}},
    {"domain": "diagnostics", "variant": "dcgm-level1"},
]
# The report of an unkilled run, timing fields aside (the SIGKILL test's reference).
GOLDEN = REPO / "tests" / "fixtures" / "certify-cluster" / "hgx-16-report.json"
UPDATE = "GLIMMER_UPDATE_GOLDEN"
# What a run's timing changes and nothing else: the wall-clock figures of a report.
TIMING = frozenset({"runtime", "runtimeSeconds", "duration", "startTime", "completionTime"})
SECONDS_PER_JOB = 0.05  # what a job's pods take to print their log (the Trainer stand-in)


def certification_text(
    name: str = NAME,
    categories: Sequence[Mapping[str, Any]] = CATEGORIES,
    target: Mapping[str, Any] | None = None,
) -> str:
    """The Certification both backends run (of ``categories`` over ``target``, every H100
    node when None), as a file's text."""
    doc = {
        "apiVersion": "certify.glimmer.ai/v1alpha1",
        "kind": "Certification",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "target": dict(
                target or {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}}
            ),
            "categories": copy.deepcopy(list(categories)),
        },
    }
    return json.dumps(doc)


def watch_gpu_condition(refs: tuple[str, ...] = WATCHED) -> dict[str, Any]:
    """The catalog, the monitor of the entries ``refs`` widened to :data:`MONITOR` in place
    (the catalog is read once per process); what was there, for :func:`restore_catalog`."""
    entries = catalog()
    before = {ref: entries[ref] for ref in refs}
    for ref in refs:
        data = copy.deepcopy(entries[ref].data)
        data["jobTemplate"]["spec"]["nodeHealthMonitor"] = {"cel": {"expression": MONITOR}}
        entries[ref] = replace(entries[ref], data=data)
    return before


def restore_catalog(before: dict[str, Any]) -> None:
    catalog().update(before)


@contextlib.contextmanager
def condition_catalog() -> Iterator[None]:
    """This process's catalog watching the GPUHealthy condition while inside."""
    before = watch_gpu_condition()
    try:
        yield
    finally:
        restore_catalog(before)


def fleet(faults: tuple[str, ...] = (NIC_FAULT,), seconds: float = SECONDS_PER_JOB) -> TrainerFleet:
    return TrainerFleet(
        load_topology(str(FLEET)), [parse_fault(f) for f in faults], seconds_per_job=seconds
    )


@contextlib.contextmanager
def fleet_cluster(root: Path, sim: TrainerFleet) -> Iterator[StandInCluster]:
    with standin_cluster(root=root, network="host", fleet=sim, crd_dirs=(CERTIFY_CRDS,)) as c:
        yield c


@contextlib.contextmanager
def operator_in_thread(
    cluster: StandInCluster, monkeypatch: pytest.MonkeyPatch
) -> Iterator[KopfRunner]:
    """The operator's whole registry under kopf, in a thread, serving ``default``."""
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))  # kopf's login reads it
    monkeypatch.setenv("POD_NAMESPACE", NS)
    context = OperatorContext.over(
        KubernetesBackend(connect(cluster.kubeconfig)), NS, identity="cluster-certification"
    )
    runner = KopfRunner(
        ["run", "--standalone", "--namespace", NS],
        registry=build_registry(context),
        settings=operator_settings(),
        timeout=300,
    )
    with runner:
        yield runner
    assert runner.exit_code == 0, runner.output[-3000:]


def get(http: httpx.Client, path: str) -> dict[str, Any] | None:
    got = http.get(path)
    if got.status_code == 404:
        return None
    assert got.status_code == 200, got.text
    body: dict[str, Any] = got.json()
    return body


def terminal(http: httpx.Client, name: str = NAME) -> dict[str, Any] | None:
    body = get(http, f"{CERTS}/{name}") or {}
    for c in (body.get("status") or {}).get("conditions") or ():
        if c["type"] in ("Succeeded", "Failed") and c["status"] == "True":
            return body
    return None


def eventually(check: Any, what: str, timeout: float = 240.0) -> Any:
    """``check()``'s first truthy answer; the timeout only bounds a broken run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"never happened within {timeout} s: {what}")


def dcgm_job_of(http: httpx.Client, node: str) -> dict[str, Any] | None:
    """The DCGM Job pinned to ``node`` (its group-nodes annotation is the one node)."""
    got = http.get(JOBS)
    assert got.status_code == 200, got.text
    for job in got.json()["items"]:
        notes = job["metadata"].get("annotations") or {}
        labels = job["metadata"].get("labels") or {}
        if notes.get("certify.glimmer.ai/group-nodes") == node and "-diagnostics-" in labels.get(
            "certify.glimmer.ai/workflow", ""
        ):
            found: dict[str, Any] = job
            return found
    return None


def turn_unhealthy(http: httpx.Client, node: str) -> None:
    """GPUHealthy=False on ``node``'s status, as a GPU health agent would write it."""
    body = get(http, f"/api/v1/nodes/{node}")
    assert body is not None, node
    status = dict(body.get("status") or {})
    status["conditions"] = [
        *(c for c in status.get("conditions") or () if c.get("type") != "GPUHealthy"),
        {"type": "GPUHealthy", "status": "False", "reason": "XidErrors",
         "message": "GPU health agent: Xid 79 on GPU 3"},
    ]  # fmt: skip
    put = http.put(f"/api/v1/nodes/{node}/status", json={**body, "status": status})
    assert put.status_code == 200, put.text


def report(http: httpx.Client, name: str = NAME) -> dict[str, Any]:
    cm = get(http, f"{CONFIGMAPS}/{name}-report")
    assert cm is not None, f"no ConfigMap {name}-report"
    doc: dict[str, Any] = json.loads(cm["data"]["result.json"])
    return doc


def node_results(
    http: httpx.Client, category_status: dict[str, Any]
) -> tuple[list[tuple[str, str]], list[str]]:
    """The failed (name, reason) and succeeded nodes of a category's ConfigMaps."""
    failed_cm = get(http, f"{CONFIGMAPS}/{category_status['failedNodesRef']['name']}")
    ok_cm = get(http, f"{CONFIGMAPS}/{category_status['succeededNodesRef']['name']}")
    assert failed_cm is not None and ok_cm is not None, category_status
    failed = read_failed_nodes(base64.b64decode(failed_cm["binaryData"]["failed-nodes.json.gz"]))
    ok = read_succeeded_nodes(base64.b64decode(ok_cm["binaryData"]["succeeded-nodes.csv.gz"]))
    return [(f.name, f.reason) for f in failed], list(ok)


def untimed(doc: Any) -> Any:
    """``doc`` without its :data:`TIMING` fields, at any depth."""
    if isinstance(doc, dict):
        return {k: untimed(v) for k, v in doc.items() if k not in TIMING}
    if isinstance(doc, list):
        return [untimed(v) for v in doc]
    return doc


def comparable(doc: dict[str, Any]) -> Any:
    """The report without timing. (A group the health check failed once read whatever log the
    job had printed when it fired and was masked here; its outcome now ends with the Job's
    hardware verdict, so its reason is the same whenever the check fires.)"""
    out: dict[str, Any] = untimed(doc)
    return out


def assert_golden_report(doc: dict[str, Any], who: str) -> None:
    """``doc`` is the unkilled run's report (:data:`GOLDEN`), :func:`comparable`; ``UPDATE`` set:
    it becomes the golden file (an unkilled run's only)."""
    got = json.dumps(comparable(doc), indent=1, sort_keys=True) + "\n"
    if os.environ.get(UPDATE) and who == "unkilled":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(got, encoding="utf-8")
    assert GOLDEN.exists(), f"no golden report; create it with {UPDATE}=1 pytest {__file__}"
    want = GOLDEN.read_text(encoding="utf-8")
    diff = "".join(list(difflib.unified_diff(want.splitlines(True), got.splitlines(True)))[:60])
    assert got == want, (
        f"the {who} run's report differs from {GOLDEN.name}; if the change is intended, "
        f"regenerate with {UPDATE}=1 .venv/bin/pytest "
        f"tests/operator/certify/test_cluster_certification_attribution.py and review:\n{diff}"
    )


def failed_of(doc: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(category variant, node, reason, message) of a result document, in its order."""
    return [
        (c["variant"], f["name"], f["reason"], f["message"])
        for c in doc["categories"]
        for f in c.get("failedNodeReasons") or ()
    ]


# ---- the operator as a process, started as forks of a zygote (the SIGKILL test) -------------

# Only DCGM watches the condition in the forked operator: the SIGKILL test sets it before the
# certification starts (the NCCL category's cordon check does not see it), so no kill point
# decides whether the health check meets the node's DCGM job.
ZYGOTE_CODE = (
    "from tests.operator.certify.cluster_harness import watch_gpu_condition; "
    "watch_gpu_condition(('diagnostics/dcgm-level1',)); "
    "from tests.operator.operator_zygote import zygote_main; zygote_main()"
)


class CatalogZygote(Zygote):
    """:class:`~tests.operator.operator_zygote.Zygote` whose operator imports see this test's
    catalog (:func:`watch_gpu_condition` of the DCGM entry before the preload): every fork
    inherits it."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.env, self.cwd = env, cwd
        self.proc = subprocess.Popen(
            [sys.executable, "-u", "-c", ZYGOTE_CODE],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd, text=True,
        )  # fmt: skip


@contextlib.contextmanager
def forked_operator(cluster: StandInCluster) -> Iterator[ForkedOperator]:
    """The operator as ``python -m glimmer.operator run`` forks (stopped when done)."""
    env = {
        **os.environ,
        "KUBECONFIG": str(cluster.kubeconfig),
        "PYTHONUNBUFFERED": "1",
        "POD_NAMESPACE": NS,
    }
    zygote = CatalogZygote(env, REPO)
    op = ForkedOperator(cluster, zygote)
    try:
        yield op
    finally:
        try:
            op.stop()
        finally:
            zygote.close()
