"""Pytest fixtures for a stand-in cluster with the Kubeflow Trainer stand-in over a simulated
fleet (tools/k8s_standin/trainer*.py): the API, the kubelet and the Trainer on one loop, the
fleet's hosts as Nodes (host network: no root, no namespaces), and a client to drive it.

``trainer_cluster``: a factory, ``with trainer_cluster(faults=[...]) as tc:`` (fleet
``ai-factory`` unless told, ``seconds_per_job`` 0.3 so each job takes well under a second to
print). ``TrainerCluster`` creates rendered objects, pins a TrainJob's nodes by hostname
affinity, waits for a TrainJob to finish and reads the lead pod's log.
"""

from __future__ import annotations

import contextlib
import copy
import json
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

import glimmer.api.certify.kinds  # noqa: F401  (registers the kinds)
from glimmer.api.certify.certification import Certification
from glimmer.api.load import load_text
from glimmer.certify.catalog.render import render_certification
from glimmer.fleet.load import load_topology
from glimmer.sim.faults import Fault
from tools.k8s_standin.cluster import StandInCluster, standin_cluster
from tools.k8s_standin.trainer_fleet import TrainerFleet
from tools.k8s_standin.trainer_template import (
    API_VERSION,
    JOBSET_NAME,
    LAUNCHER,
    NODE,
    REPLICATED_JOB,
)

Obj = dict[str, Any]
HOSTNAME = "kubernetes.io/hostname"
PLURALS = {
    "TrainJob": "trainjobs",
    "TrainingRuntime": "trainingruntimes",
    "ClusterTrainingRuntime": "clustertrainingruntimes",
    "ConfigMap": "configmaps",
}
FINISHED = ("Complete", "Failed")


def path_of(obj: Mapping[str, Any], namespace: str = "default") -> str:
    """The collection path a rendered object is created at."""
    kind = str(obj["kind"])
    group = "/api/v1" if obj["apiVersion"] == "v1" else f"/apis/{obj['apiVersion']}"
    if kind.startswith("Cluster"):
        return f"{group}/{PLURALS[kind]}"
    return f"{group}/namespaces/{namespace}/{PLURALS[kind]}"


def rendered(domain: str, variant: str, product: str, options: str = "{}") -> tuple[list[Obj], Obj]:
    """One category of a Certification on ``product`` nodes, rendered by glimmer's catalog: its
    dependencies and its TrainJob. A GB200 ComputeDomain is left out: these clusters run no
    DRA stand-in (``standin_cluster(dra=True)`` adds one, tools/k8s_standin/dra.py)."""
    text = f"""apiVersion: certify.glimmer.ai/v1alpha1
kind: Certification
metadata: {{name: cert, namespace: default}}
spec:
  target: {{nodeSelector: {{nvidia.com/gpu.product: {product}}}}}
  categories:
    - {{domain: {domain}, variant: {variant}, options: {options}}}
"""
    (item,) = load_text(text)
    assert isinstance(item.obj, Certification)
    objects = [o for o in render_certification(item.obj) if o["kind"] != "ComputeDomain"]
    (train_job,) = [o for o in objects if o["kind"] == "TrainJob"]
    return [o for o in objects if o["kind"] != "TrainJob"], train_job


def pinned(train_job: Mapping[str, Any], hosts: Sequence[str]) -> Obj:
    """``train_job`` on exactly ``hosts``: numNodes and a required hostname affinity on the node
    job, as a certification pins a group."""
    out = copy.deepcopy(dict(train_job))
    out["spec"]["trainer"]["numNodes"] = len(hosts)
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": HOSTNAME, "operator": "In", "values": list(hosts)}
                        ]
                    }
                ]
            }
        }
    }
    patch = {"spec": {"template": {"spec": {"affinity": affinity}}}}
    out["spec"].setdefault("runtimePatches", []).append(
        {
            "manager": "tests/pin",
            "trainingRuntimeSpec": {
                "template": {"spec": {"replicatedJobs": [{"name": NODE, "template": patch}]}}
            },
        }
    )
    return out


def all_reduce_on_hgx(name: str = "job") -> tuple[Obj, Obj]:
    """The all-reduce category's TrainingRuntime and its TrainJob, named ``name``, pinned to
    the two HGX hosts of the ``ai-factory`` fleet."""
    (runtime,), train_job = rendered(
        "communication", "nccl-all-reduce", "NVIDIA-H100-80GB-HBM3", "{nodesPerJob: 2}"
    )
    job = pinned(train_job, ("hgx-node-0001", "hgx-node-0002"))
    job["metadata"]["name"] = name
    return runtime, job


@dataclass
class TrainerCluster:
    cluster: StandInCluster
    http: httpx.Client
    namespace: str = "default"

    def create(self, obj: Mapping[str, Any]) -> httpx.Response:
        body = copy.deepcopy(dict(obj))
        if not str(body["kind"]).startswith("Cluster"):
            body["metadata"]["namespace"] = self.namespace
        return self.http.post(path_of(body, self.namespace), json=body)

    def create_all(self, objs: Sequence[Mapping[str, Any]]) -> None:
        for obj in objs:
            got = self.create(obj)
            assert got.status_code == 201, got.text

    def train_job_path(self, name: str) -> str:
        return f"/apis/{API_VERSION}/namespaces/{self.namespace}/trainjobs/{name}"

    def train_job(self, name: str) -> Obj:
        got = self.http.get(self.train_job_path(name))
        assert got.status_code == 200, got.text
        doc: Obj = got.json()
        return doc

    def conditions(self, name: str) -> dict[str, Obj]:
        status = self.train_job(name).get("status") or {}
        return {str(c["type"]): c for c in status.get("conditions") or []}

    def finished(self, name: str, timeout: float = 30.0) -> Obj:
        """The TrainJob's Complete or Failed condition, once it has one."""

        def done() -> Obj | None:
            for kind, c in self.conditions(name).items():
                if kind in FINISHED and c["status"] == "True":
                    return c
            return None

        got: Obj = eventually(done, f"trainjob {name} finished", timeout)
        return got

    def pods(self, train_job: str) -> list[Obj]:
        got = self.http.get(
            f"/api/v1/namespaces/{self.namespace}/pods",
            params={"labelSelector": f"{JOBSET_NAME}={train_job}"},
        )
        assert got.status_code == 200, got.text
        items: list[Obj] = got.json()["items"]
        return sorted(items, key=lambda p: str(p["metadata"]["name"]))

    def log(self, pod: str) -> str:
        got = self.http.get(f"/api/v1/namespaces/{self.namespace}/pods/{pod}/log")
        assert got.status_code == 200, got.text
        return got.text

    def lead(self, train_job: str) -> Obj:
        """The pod that carries the job's log: the MPI launcher, else rank 0 of the node job."""
        pods = self.pods(train_job)
        for job in (LAUNCHER, NODE):
            mine = [p for p in pods if p["metadata"]["labels"][REPLICATED_JOB] == job]
            if mine:
                return mine[0]
        raise AssertionError(f"trainjob {train_job} has no pods")

    def lead_log(self, train_job: str) -> str:
        return self.log(str(self.lead(train_job)["metadata"]["name"]))

    def simulated(self, train_job: str) -> Obj:
        """What the fleet simulator said of the TrainJob's job (text, exit_code, error, path,
        crashed_on, elapsed_s), once its pods were all placed."""
        uid8 = str(self.train_job(train_job)["metadata"]["uid"])[:8]
        plan = self.cluster.root / "trainer" / self.namespace / f"{train_job}-{uid8}.json"
        got: Obj = json.loads(eventually(lambda: plan.is_file() and plan.read_text(), str(plan)))
        return got


def eventually(check: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    """``check()``'s first truthy answer; the timeout only bounds a broken run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"never happened: {what}")


MakeTrainerCluster = Callable[..., contextlib.AbstractContextManager[TrainerCluster]]


@pytest.fixture
def trainer_cluster(tmp_path: Path) -> MakeTrainerCluster:
    @contextlib.contextmanager
    def make(
        faults: Sequence[Fault] = (),
        *,
        fleet: str = "ai-factory",
        seed: int = 0,
        seconds_per_job: float = 0.3,
        **options: Any,
    ) -> Iterator[TrainerCluster]:
        sim = TrainerFleet(
            load_topology(fleet),
            faults,
            seed=seed,
            seconds_per_job=seconds_per_job,
            **options,
        )
        root = Path(tempfile.mkdtemp(prefix="trainer-cluster-", dir=tmp_path))
        with (
            standin_cluster(root=root, network="host", fleet=sim) as cluster,
            httpx.Client(base_url=cluster.url, timeout=10) as http,
        ):
            yield TrainerCluster(cluster, http)

    return make
