"""The operator's tests: a stand-in cluster (API + kubelet running real runner processes), the
operator as a real process (``python -m glimmer.operator run``), and what a client sees over
HTTP — the runs, nodes and pods, and the stand-in's request journal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import yaml

from glimmer.engine.keys import FINALIZER
from glimmer.operator.peering import PEERING_CRDS
from glimmer.plan.builtin import builtin_profiles_dir
from tools.k8s_standin.cluster import StandInCluster, standin_cluster
from tools.k8s_standin.journal import read

REPO = Path(__file__).resolve().parents[2]
NS = "default"
RUNS = f"/apis/burnin.glimmer.ai/v1alpha1/namespaces/{NS}/burninruns"
TESTS = f"/apis/burnin.glimmer.ai/v1alpha1/namespaces/{NS}/burnintests"
PODS = f"/api/v1/namespaces/{NS}/pods"
NODES = "/api/v1/nodes"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
TERMINAL = {"Passed", "Failed", "Error", "Cancelled"}
STAMP_KEY = "burnin.glimmer.ai/"
STARTED = "glimmer operator "  # the operator's first log line: "glimmer operator <id> starting"

# The built-in host profile's tests, cut short: the same kinds, gates and runners, seconds
# instead of minutes (a namespace's test of a built-in's name wins over the built-in).
SHORT = {
    "host-kernel-and-links": {"durationSeconds": 1},
    "host-memory": {"durationSeconds": 1},
    "host-disk": {"durationSeconds": 1, "env": {"DISK_IO_SIZE_MB": "8"}},
    "host-fingerprint": {},
}


def eventually(check: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    """Poll until ``check`` returns something truthy; the timeout only bounds a broken run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError(f"never happened within {timeout} s: {what}")


def memory_fraction(mib: int = 300) -> str:
    """The share of this machine's available memory that is ``mib`` MiB: over the memory
    runner's 256 MiB floor, small beside what 3 nodes on one machine can spare."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return f"{mib * 1024 / int(line.split()[1]):.4f}"
    raise AssertionError("no MemAvailable in /proc/meminfo")


def short_host_tests(tmp: Path) -> list[dict[str, Any]]:
    """The host profile's BurnInTests with short durations, as objects to create."""
    docs = [
        d
        for d in yaml.safe_load_all((builtin_profiles_dir() / "host.yaml").read_text())
        if d and d.get("kind") == "BurnInTest"
    ]
    out = []
    for doc in docs:
        short = SHORT[doc["metadata"]["name"]]
        spec = doc["spec"]
        if doc["metadata"]["name"] == "host-memory":
            short = {**short, "env": {"BURNIN_MEMORY_FRACTION": memory_fraction()}}
        if "durationSeconds" in short:
            spec["durationSeconds"] = short["durationSeconds"]
        for item in spec.get("runner", {}).get("env", []):
            if item["name"] in short.get("env", {}):
                item["value"] = short["env"][item["name"]]
            if item["name"] == "DISK_IO_PATH":
                item["value"] = str(tmp)
        for mount in spec.get("runner", {}).get("hostPaths", []):
            if mount["path"] == "/var/tmp":
                mount["path"] = mount["mountPath"] = str(tmp)
        out.append(doc)
    return out


def run_body(name: str, nodes: Sequence[str], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInRun",
        "metadata": {"name": name},
        "spec": {
            "profileRef": "host",
            "target": {"nodeNames": list(nodes)},
            # One node at a time: the stand-in's nodes share this machine's filesystem, and two
            # disk-io runners at once would meet in the one hostPath (the runner refuses a file
            # it did not create, as it should on a real node).
            "maxConcurrentNodes": 1,
            **spec,
        },
    }


class Operator:
    """``python -m glimmer.operator run`` as a child process, its output in a file."""

    def __init__(self, cluster: StandInCluster, *args: str, name: str = "operator") -> None:
        self.cluster = cluster
        self.args = list(args) or ["--standalone", "--namespace", NS]
        self.name = name
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def log(self) -> Path:
        """This start's output (each start has its own)."""
        return self.cluster.root / f"{self.name}.{self.starts}.log"

    def start(self) -> Operator:
        # POD_NAMESPACE as the Deployment's downward API sets it: where NodeFingerprints live
        # when the operator serves every namespace.
        env = {
            **os.environ,
            "KUBECONFIG": str(self.cluster.kubeconfig),
            "PYTHONUNBUFFERED": "1",
            "POD_NAMESPACE": NS,
        }
        self.starts += 1
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "glimmer.operator", "run",
                 "--kubeconfig", str(self.cluster.kubeconfig), *self.args],
                stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO,
            )  # fmt: skip
        return self

    def wait_started(self) -> None:
        """Until the operator has logged its start (its SIGTERM handler is in place by then)."""
        proc = self.proc
        eventually(
            lambda: proc is None or proc.poll() is not None or STARTED in self.output(),
            f"{self.name} started",
        )

    def kill(self) -> None:
        """SIGKILL: no goodbye, no cleanup — as an OOM kill or a node loss."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)
        self.proc = None

    def stop(self) -> int | None:
        """SIGTERM and wait: the exit code (None if it was not running)."""
        if self.proc is None:
            return None
        self.wait_started()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        code, self.proc = self.proc.returncode, None
        return code

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[StandInCluster]:
    # Host networking: the host profile's host-health test reads the NICs of the host's own
    # network (hostNetwork: true), and a stand-in node's namespace has only a veth, so its
    # link gate would fail closed; these Node-scope tests need no rendezvous by name.
    with standin_cluster(3, tmp_path, network="host") as running:
        yield running


@pytest.fixture
def http(cluster: StandInCluster) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=cluster.url, timeout=30) as client:
        yield client


@pytest.fixture
def operators(cluster: StandInCluster) -> Iterator[Callable[..., Operator]]:
    """Make operators; every one still running is stopped when the test ends."""
    made: list[Operator] = []

    def make(*args: str, name: str = "operator") -> Operator:
        made.append(Operator(cluster, *args, name=f"{name}-{len(made)}"))
        return made[-1]

    yield make
    for op in made:
        op.stop()


def apply_short_tests(http: httpx.Client, tmp: Path) -> None:
    for doc in short_host_tests(tmp):
        created = http.post(TESTS, json=doc)
        assert created.status_code == 201, created.text


def apply_peering_crds(http: httpx.Client) -> None:
    for crd in PEERING_CRDS:
        created = http.post(CRDS, json=crd)
        assert created.status_code in (201, 409), created.text


def get_run(http: httpx.Client, name: str) -> dict[str, Any]:
    got = http.get(f"{RUNS}/{name}")
    assert got.status_code == 200, got.text
    body: dict[str, Any] = got.json()
    return body


def phase_of(http: httpx.Client, name: str) -> str:
    return str((get_run(http, name).get("status") or {}).get("phase") or "")


def settled(http: httpx.Client, name: str, timeout: float = 120.0) -> dict[str, Any]:
    """The run once terminal and its teardown done (the engine's finalizer dropped)."""

    def done() -> dict[str, Any] | None:
        run = get_run(http, name)
        terminal = (run.get("status") or {}).get("phase") in TERMINAL
        if terminal and FINALIZER not in (run["metadata"].get("finalizers") or ()):
            return run
        return None

    found: dict[str, Any] = eventually(done, f"run {name} settled", timeout)
    return found


def node(http: httpx.Client, name: str) -> dict[str, Any]:
    body: dict[str, Any] = http.get(f"{NODES}/{name}").json()
    return body


def stamps(body: dict[str, Any]) -> dict[str, str]:
    notes = body["metadata"].get("annotations") or {}
    return {k: v for k, v in notes.items() if k.startswith(STAMP_KEY)}


def journal(cluster: StandInCluster) -> list[dict[str, Any]]:
    assert cluster.journal is not None
    return read(cluster.journal)


def run_schema() -> dict[str, Any]:
    """The BurnInRun CRD's openAPIV3Schema (deploy/crds), for validating a stored run."""
    for path in sorted((REPO / "deploy" / "crds").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("spec", {}).get("names", {}).get("kind") == "BurnInRun":
                schema: dict[str, Any] = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
                return schema
    raise AssertionError("no BurnInRun CRD under deploy/crds")


def validate_run(body: dict[str, Any]) -> None:
    jsonschema.validate(body.get("status") or {}, run_schema()["properties"]["status"])
