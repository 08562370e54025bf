"""The real kubectl (Debian's 1.20) against the stand-in: apply with its default validation,
get with the CRDs' printer columns, watch, label, patch, logs, delete."""

from __future__ import annotations

import queue
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from tests.k8s_api import KUBECTL, K8sAPI, Kubectl, run_kubectl
from tests.tools.k8s_standin.conftest import MERGE, PODS, RUNS, pod_body, run_body
from tools.k8s_standin.background import api_in_thread
from tools.k8s_standin.kubeconfig import write_kubeconfig

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO.parent / "shared" / "conformance" / "glimmer-samples"
GROUP = "burnin.glimmer.ai"


@pytest.fixture
def bare_api(tmp_path: Path) -> Iterator[K8sAPI]:
    """A stand-in without the glimmer CRDs: kubectl has to apply them."""
    with api_in_thread(crd_dirs=(), journal=tmp_path / "journal.jsonl") as running:
        config = write_kubeconfig(tmp_path / "kubeconfig", running.url)
        yield K8sAPI(running.url, config, tmp_path, tmp_path / "journal.jsonl")


def sample_objects() -> dict[str, set[str]]:
    """Every burnin.glimmer.ai object of the shared samples: plural kind -> names."""
    out: dict[str, set[str]] = {}
    for path in sorted(SAMPLES.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("apiVersion", "").startswith(GROUP + "/"):
                out.setdefault(doc["kind"].lower() + "s", set()).add(doc["metadata"]["name"])
    return out


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_kubectl_applies_the_crds_then_every_glimmer_sample(bare_api: K8sAPI) -> None:
    applied = ok(run_kubectl(bare_api, "apply", "-f", str(REPO / "deploy" / "crds")))
    assert applied.count("created") == 6
    for path in sorted(SAMPLES.glob("*.yaml")):
        ok(run_kubectl(bare_api, "apply", "-f", str(path)))
    expected = sample_objects()
    assert set(expected) == {
        "burnintests",
        "burninprofiles",
        "burninruns",
        "burninschedules",
        "burninsinks",
    }
    for plural, names in expected.items():
        listed = ok(run_kubectl(bare_api, "get", plural, "-o", "name")).split()
        assert {n.split("/", 1)[1] for n in listed} == names, plural


def test_applying_the_same_sample_again_stores_nothing_new(kubectl: Kubectl) -> None:
    # kubectl may still say "configured": a list whose items the CRD defaults (thresholds'
    # applicability) differs from the file, so it sends the list again, as against a cluster.
    sample = str(SAMPLES / "node-acceptance.yaml")
    ok(kubectl("apply", "-f", sample))

    def versions() -> dict[str, str]:
        items = yaml.safe_load(
            ok(kubectl("get", "burnintests,burninprofiles,burninruns", "-o", "yaml"))
        )["items"]
        return {i["metadata"]["name"]: i["metadata"]["resourceVersion"] for i in items}

    before = versions()
    ok(kubectl("apply", "-f", sample))
    assert versions() == before


def test_kubectl_get_burninruns_shows_the_printer_columns(
    kubectl: Kubectl, http: httpx.Client
) -> None:
    http.post(RUNS, json=run_body("smoke"))
    http.patch(
        f"{RUNS}/smoke/status",
        json={"status": {"phase": "Running", "passed": 3, "failed": 1}},
        headers=MERGE,
    )
    lines = ok(kubectl("get", "burninruns")).splitlines()
    assert lines[0].split() == ["NAME", "PROFILE", "PHASE", "PASSED", "FAILED", "AGE"]
    assert lines[1].split()[:5] == ["smoke", "host", "Running", "3", "1"]
    wide = ok(kubectl("get", "bir", "-o", "wide")).splitlines()
    assert "BASELINE" in wide[0].split()


def test_a_server_side_validation_error_reaches_kubectl(kubectl: Kubectl) -> None:
    bad = run_body("bad")
    del bad["spec"]["target"]
    result = kubectl("apply", "-f", "-", input=yaml.safe_dump(bad))
    assert result.returncode != 0
    assert 'The BurnInRun "bad" is invalid: spec.target: Required value' in result.stderr


def test_kubectl_labels_patches_and_deletes(kubectl: Kubectl, http: httpx.Client) -> None:
    http.post(RUNS, json=run_body("smoke"))
    ok(kubectl("label", "bir", "smoke", "team=infra"))
    assert ok(kubectl("get", "bir", "-l", "team=infra", "-o", "name")).split() == [
        f"burninrun.{GROUP}/smoke"
    ]
    ok(kubectl("patch", "bir", "smoke", "--type=merge", "-p", '{"spec":{"suspend":true}}'))
    assert http.get(f"{RUNS}/smoke").json()["spec"]["suspend"] is True
    ok(kubectl("delete", "bir", "smoke"))
    assert http.get(f"{RUNS}/smoke").status_code == 404


def test_kubectl_logs_reads_the_pod_log(
    kubectl: Kubectl, http: httpx.Client, k8s_api: K8sAPI
) -> None:
    http.post(PODS, json=pod_body("runner"))
    (k8s_api.log_dir / "default").mkdir(parents=True, exist_ok=True)
    (k8s_api.log_dir / "default" / "runner.log").write_text("hello from the runner\n")
    assert ok(kubectl("logs", "runner")) == "hello from the runner\n"


def test_kubectl_get_watch_streams_each_change(k8s_api: K8sAPI, http: httpx.Client) -> None:
    http.post(RUNS, json=run_body("before"))
    watch = subprocess.Popen(
        [str(KUBECTL), "get", "bir", "-w", "--output-watch-events"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"KUBECONFIG": str(k8s_api.kubeconfig), "HOME": str(k8s_api.kubeconfig.parent)},
    )
    lines: queue.Queue[str] = queue.Queue()
    assert watch.stdout is not None
    reader = threading.Thread(
        target=lambda: [lines.put(line) for line in watch.stdout], daemon=True
    )  # type: ignore[union-attr]
    reader.start()

    def next_event() -> list[str]:
        while True:
            words = lines.get(timeout=30).split()
            if words and words[0] != "EVENT":  # the header line
                return words[:2]

    try:
        assert next_event() == ["ADDED", "before"]
        http.post(RUNS, json=run_body("after"))
        assert next_event() == ["ADDED", "after"]
        http.patch(f"{RUNS}/after/status", json={"status": {"phase": "Running"}}, headers=MERGE)
        assert next_event() == ["MODIFIED", "after"]
        http.delete(f"{RUNS}/after")
        assert next_event() == ["DELETED", "after"]
    finally:
        watch.terminate()
        watch.wait(timeout=30)


def test_kubectl_cordons_and_uncordons_a_node(kubectl: Kubectl, http: httpx.Client) -> None:
    http.post(
        "/api/v1/nodes",
        json={
            "metadata": {"name": "node-1"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        },
    )
    ok(kubectl("cordon", "node-1"))
    assert http.get("/api/v1/nodes/node-1").json()["spec"]["unschedulable"] is True
    assert ok(kubectl("get", "nodes")).splitlines()[1].split()[:2] == [
        "node-1",
        "Ready,SchedulingDisabled",
    ]
    ok(kubectl("uncordon", "node-1"))
    assert not http.get("/api/v1/nodes/node-1").json()["spec"].get("unschedulable")


def test_kubectl_get_events_and_get_all_show_their_columns(
    kubectl: Kubectl, http: httpx.Client
) -> None:
    http.post(PODS, json=pod_body("runner"))
    event = {
        "metadata": {"name": "smoke.1"},
        "involvedObject": {"kind": "BurnInRun", "name": "smoke", "namespace": "default"},
        "reason": "Started",
        "message": "the run started",
        "type": "Normal",
    }
    http.post("/api/v1/namespaces/default/events", json=event)
    events = ok(kubectl("get", "events")).splitlines()
    assert events[0].split() == ["NAME", "LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert events[1].split()[2:] == [
        "Normal",
        "Started",
        "burninrun/smoke",
        "the",
        "run",
        "started",
    ]
    assert "pod/runner" in ok(kubectl("get", "all"))


def test_kubectl_applies_the_operator_manifests_and_again_unchanged(bare_api: K8sAPI) -> None:
    manifests = str(REPO / "deploy" / "operator")
    first = ok(run_kubectl(bare_api, "apply", "-f", manifests)).splitlines()
    assert first and all(line.endswith("created") for line in first)
    again = ok(run_kubectl(bare_api, "apply", "-f", manifests)).splitlines()
    assert len(again) == len(first)
    assert all(line.endswith("unchanged") for line in again)
