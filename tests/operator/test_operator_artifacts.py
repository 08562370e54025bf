"""A runner's artifacts kept on the cluster (§3.6, "Operator storage"), end to end: the operator
as a real process drives a run on the stand-in cluster whose runner (a real process on a
stand-in node) fences an artifact on stdout and exits 0; the run passes, the run-owned
``<run>-artifacts`` ConfigMap holds the payload under ``<test>.<podName>.<artifactName>``, and
the result's ref names that ConfigMap, key and digest — as ``kubectl get configmap`` would show
it. A second artifact with a name that is not a plain file name is kept as a dropped ref."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable

import httpx

from tests.operator.conftest import NS, Operator, run_body, settled, validate_run
from tools.k8s_standin.cluster import StandInCluster

API = f"/apis/burnin.glimmer.ai/v1alpha1/namespaces/{NS}"
CONFIGMAPS = f"/api/v1/namespaces/{NS}/configmaps"
PAYLOAD = '{"devices": [{"index": 0, "ok": true}]}\n'
PROGRAM = f"""
print("-----BEGIN BURNIN ARTIFACT evidence.json application/json-----")
print({PAYLOAD.rstrip()!r})
print("-----END BURNIN ARTIFACT-----")
print("-----BEGIN BURNIN ARTIFACT ../escape text/plain-----")
print("not kept")
print("-----END BURNIN ARTIFACT-----")
print("answer=42")
"""


def _create(http: httpx.Client, path: str, body: dict[str, object]) -> None:
    answer = http.post(path, json=body)
    assert answer.status_code == 201, answer.text


def test_a_runners_artifact_ends_in_the_runs_config_map_and_its_ref_on_the_result(
    cluster: StandInCluster, http: httpx.Client, operators: Callable[..., Operator]
) -> None:
    test = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInTest",
        "metadata": {"name": "evidence"},
        "spec": {
            "kind": "custom",
            "durationSeconds": 5,
            "runner": {"image": "local/evidence:1", "command": [sys.executable, "-c", PROGRAM]},
        },
    }
    _create(http, f"{API}/burnintests", test)
    profile = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInProfile",
        "metadata": {"name": "evidence"},
        "spec": {"tests": [{"testRef": "evidence"}]},
    }
    _create(http, f"{API}/burninprofiles", profile)
    op = operators().start()
    target = cluster.nodes[0]
    _create(http, f"{API}/burninruns", run_body("kept", [target], profileRef="evidence"))
    run = settled(http, "kept")
    assert op.stop() == 0, op.output()
    assert run["status"]["phase"] == "Passed", run["status"]
    validate_run(run)  # the CRD's schema accepts the refs
    [result] = run["status"]["results"]
    pod = result["attempts"][0]["podName"]
    stored, dropped = result["artifacts"]
    key = f"evidence.{pod}.evidence.json"
    assert stored == {
        "name": "evidence.json",
        "mediaType": "application/json",
        "sizeBytes": len(PAYLOAD.encode()),
        "digest": "sha256:" + hashlib.sha256(PAYLOAD.encode()).hexdigest(),
        "configMap": "kept-artifacts",
        "key": key,
    }
    assert dropped["name"] == "../escape" and "[A-Za-z0-9._-]" in dropped["dropped"]
    assert not {"configMap", "key", "digest"} & set(dropped)
    held = http.get(f"{CONFIGMAPS}/kept-artifacts")
    assert held.status_code == 200, held.text
    body = held.json()
    assert body["data"] == {key: PAYLOAD}
    assert body["metadata"]["labels"] == {"burnin.glimmer.ai/run": "kept"}
    [owner] = body["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == (
        "BurnInRun",
        run["metadata"]["uid"],
        True,
    )
