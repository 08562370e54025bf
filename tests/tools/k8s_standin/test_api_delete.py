"""Deletion as a controller sees it: finalizers, graceful pod deletion, owners, namespaces."""

from __future__ import annotations

import httpx

from tests.tools.k8s_standin.conftest import JSON_PATCH, MERGE, PODS, RUNS, pod_body, run_body


def test_delete_without_finalizers_removes_the_object(http: httpx.Client) -> None:
    http.post(RUNS, json=run_body())
    r = http.delete(f"{RUNS}/smoke")
    assert r.status_code == 200
    assert http.get(f"{RUNS}/smoke").status_code == 404


def test_finalizers_hold_the_object_with_a_deletion_timestamp_until_removed(
    http: httpx.Client,
) -> None:
    body = run_body()
    body["metadata"]["finalizers"] = ["glimmer.ai/cleanup"]
    rv = http.post(RUNS, json=body).json()["metadata"]["resourceVersion"]
    marked = http.delete(f"{RUNS}/smoke").json()
    assert marked["metadata"]["deletionTimestamp"]
    assert int(marked["metadata"]["resourceVersion"]) > int(rv)
    assert http.get(f"{RUNS}/smoke").status_code == 200
    again = http.delete(f"{RUNS}/smoke").json()
    assert again["metadata"]["resourceVersion"] == marked["metadata"]["resourceVersion"]
    adding = http.patch(
        f"{RUNS}/smoke",
        json={"metadata": {"finalizers": ["glimmer.ai/cleanup", "new/one"]}},
        headers=MERGE,
    )
    assert adding.status_code == 422
    http.patch(
        f"{RUNS}/smoke", json=[{"op": "remove", "path": "/metadata/finalizers"}], headers=JSON_PATCH
    )
    assert http.get(f"{RUNS}/smoke").status_code == 404


def test_a_running_pod_on_a_node_waits_for_its_kubelet_grace_zero_delete(
    http: httpx.Client,
) -> None:
    http.post(PODS, json=pod_body("bound", node="node-a"))
    http.patch(f"{PODS}/bound/status", json={"status": {"phase": "Running"}}, headers=MERGE)
    terminating = http.delete(f"{PODS}/bound").json()
    assert terminating["metadata"]["deletionTimestamp"]
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30
    assert http.get(f"{PODS}/bound").status_code == 200
    http.delete(f"{PODS}/bound", params={"gracePeriodSeconds": "0"})
    assert http.get(f"{PODS}/bound").status_code == 404


def test_an_unbound_or_finished_pod_is_deleted_at_once(http: httpx.Client) -> None:
    http.post(PODS, json=pod_body("pending"))
    http.delete(f"{PODS}/pending")
    assert http.get(f"{PODS}/pending").status_code == 404
    http.post(PODS, json=pod_body("done", node="node-a"))
    http.patch(f"{PODS}/done/status", json={"status": {"phase": "Succeeded"}}, headers=MERGE)
    http.delete(f"{PODS}/done")
    assert http.get(f"{PODS}/done").status_code == 404


def test_dependents_go_with_their_owner(http: httpx.Client) -> None:
    owner = http.post(RUNS, json=run_body()).json()
    child = pod_body("child")
    child["metadata"]["ownerReferences"] = [
        {
            "apiVersion": owner["apiVersion"],
            "kind": "BurnInRun",
            "name": "smoke",
            "uid": owner["metadata"]["uid"],
        }
    ]
    http.post(PODS, json=child)
    http.post(PODS, json=pod_body("unrelated"))
    http.delete(f"{RUNS}/smoke")
    assert http.get(f"{PODS}/child").status_code == 404
    assert http.get(f"{PODS}/unrelated").status_code == 200


def test_delete_preconditions_are_409_when_stale(http: httpx.Client) -> None:
    http.post(RUNS, json=run_body())
    r = http.request("DELETE", f"{RUNS}/smoke", json={"preconditions": {"resourceVersion": "1"}})
    assert (r.status_code, r.json()["reason"]) == (409, "Conflict")
    assert http.get(f"{RUNS}/smoke").status_code == 200


def test_deleting_a_namespace_deletes_what_it_holds(http: httpx.Client) -> None:
    http.post("/api/v1/namespaces", json={"metadata": {"name": "scratch"}})
    http.post("/api/v1/namespaces/scratch/pods", json=pod_body("p"))
    http.delete("/api/v1/namespaces/scratch")
    assert http.get("/api/v1/namespaces/scratch/pods/p").status_code == 404
    assert http.get("/api/v1/namespaces/scratch").status_code == 404


def test_delete_collection_honours_the_label_selector(http: httpx.Client) -> None:
    http.post(PODS, json=pod_body("a", run="x"))
    http.post(PODS, json=pod_body("b", run="y"))
    http.delete(PODS, params={"labelSelector": "run=x"})
    assert [i["metadata"]["name"] for i in http.get(PODS).json()["items"]] == ["b"]
