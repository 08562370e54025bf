"""Create, read, replace and patch as a real API server answers them, over raw HTTP."""

from __future__ import annotations

import httpx

from tests.tools.k8s_standin.conftest import JSON_PATCH, MERGE, PODS, RUNS, pod_body, run_body
from tools.k8s_standin.background import api_in_thread


def test_create_answers_201_with_uid_timestamp_resource_version_and_generation(
    http: httpx.Client,
) -> None:
    r = http.post(RUNS, json=run_body())
    assert r.status_code == 201
    assert r.headers["content-type"] == "application/json"
    md = r.json()["metadata"]
    assert md["namespace"] == "default"
    assert md["uid"] and md["creationTimestamp"].endswith("Z")
    assert int(md["resourceVersion"]) > 0
    assert md["generation"] == 1


def test_generate_name_gets_a_random_suffix(http: httpx.Client) -> None:
    body = run_body()
    body["metadata"] = {"generateName": "smoke-"}
    names = {http.post(RUNS, json=body).json()["metadata"]["name"] for _ in range(3)}
    assert len(names) == 3
    assert all(n.startswith("smoke-") and len(n) == len("smoke-") + 5 for n in names)


def test_every_write_gets_a_higher_resource_version_from_one_counter(http: httpx.Client) -> None:
    a = http.post(RUNS, json=run_body("a")).json()["metadata"]["resourceVersion"]
    b = http.post(PODS, json=pod_body("p")).json()["metadata"]["resourceVersion"]
    c = http.patch(f"{RUNS}/a", json={"spec": {"suspend": True}}, headers=MERGE)
    assert int(a) < int(b) < int(c.json()["metadata"]["resourceVersion"])


def test_errors_carry_machine_reasons_and_json_content_type(http: httpx.Client) -> None:
    missing = http.get(f"{RUNS}/nope")
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/json"
    assert missing.json()["reason"] == "NotFound"
    assert missing.json()["kind"] == "Status"
    http.post(RUNS, json=run_body())
    again = http.post(RUNS, json=run_body())
    assert (again.status_code, again.json()["reason"]) == (409, "AlreadyExists")
    assert again.headers["content-type"] == "application/json"


def test_list_has_kind_api_version_and_the_current_resource_version(http: httpx.Client) -> None:
    created = http.post(RUNS, json=run_body()).json()
    listed = http.get(RUNS).json()
    assert listed["kind"] == "BurnInRunList"
    assert listed["apiVersion"] == "burnin.glimmer.ai/v1alpha1"
    assert listed["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert [i["metadata"]["name"] for i in listed["items"]] == ["smoke"]


def test_list_across_namespaces_from_the_cluster_path(http: httpx.Client) -> None:
    http.post("/api/v1/namespaces", json={"metadata": {"name": "other"}})
    http.post(PODS, json=pod_body("a"))
    http.post("/api/v1/namespaces/other/pods", json=pod_body("b"))
    names = [
        (i["metadata"]["namespace"], i["metadata"]["name"])
        for i in http.get("/api/v1/pods").json()["items"]
    ]
    assert names == [("default", "a"), ("other", "b")]


def test_a_namespaced_object_needs_its_namespace_to_exist(http: httpx.Client) -> None:
    r = http.post("/api/v1/namespaces/ghost/pods", json=pod_body())
    assert (r.status_code, r.json()["reason"]) == (404, "NotFound")
    assert "namespaces" in r.json()["message"]


def test_put_replaces_the_object_and_a_stale_resource_version_is_409_conflict(
    http: httpx.Client,
) -> None:
    created = http.post(RUNS, json=run_body()).json()
    replaced = dict(created, spec=dict(created["spec"], profileRef="other"))
    r = http.put(f"{RUNS}/smoke", json=replaced)
    assert r.status_code == 200
    assert r.json()["spec"]["profileRef"] == "other"
    assert r.json()["metadata"]["uid"] == created["metadata"]["uid"]
    stale = http.put(
        f"{RUNS}/smoke", json=dict(created, spec=dict(created["spec"], profileRef="x"))
    )
    assert (stale.status_code, stale.json()["reason"]) == (409, "Conflict")
    assert http.get(f"{RUNS}/smoke").json()["spec"]["profileRef"] == "other"


def test_a_resource_version_in_a_merge_patch_is_a_precondition(http: httpx.Client) -> None:
    rv = http.post(RUNS, json=run_body()).json()["metadata"]["resourceVersion"]
    ok = http.patch(
        f"{RUNS}/smoke",
        json={"metadata": {"resourceVersion": rv}, "spec": {"suspend": True}},
        headers=MERGE,
    )
    assert ok.status_code == 200
    stale = http.patch(
        f"{RUNS}/smoke",
        json={"metadata": {"resourceVersion": rv}, "spec": {"suspend": False}},
        headers=MERGE,
    )
    assert (stale.status_code, stale.json()["reason"]) == (409, "Conflict")
    assert http.get(f"{RUNS}/smoke").json()["spec"]["suspend"] is True


def test_a_failed_json_patch_test_is_422_not_500(http: httpx.Client) -> None:
    http.post(RUNS, json=run_body())
    ops = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "0"},
        {"op": "add", "path": "/metadata/finalizers", "value": ["x/y"]},
    ]
    r = http.patch(f"{RUNS}/smoke", json=ops, headers=JSON_PATCH)
    assert (r.status_code, r.json()["reason"]) == (422, "Invalid")
    assert "finalizers" not in http.get(f"{RUNS}/smoke").json()["metadata"]


def test_a_json_patch_guarded_by_the_current_resource_version_applies(http: httpx.Client) -> None:
    rv = http.post(RUNS, json=run_body()).json()["metadata"]["resourceVersion"]
    ops = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
        {"op": "add", "path": "/metadata/finalizers", "value": ["x/y"]},
    ]
    r = http.patch(f"{RUNS}/smoke", json=ops, headers=JSON_PATCH)
    assert r.status_code == 200
    assert r.json()["metadata"]["finalizers"] == ["x/y"]


def test_a_patch_that_changes_nothing_keeps_the_resource_version(http: httpx.Client) -> None:
    rv = http.post(RUNS, json=run_body()).json()["metadata"]["resourceVersion"]
    r = http.patch(f"{RUNS}/smoke", json={"spec": {"profileRef": "host"}}, headers=MERGE)
    assert r.json()["metadata"]["resourceVersion"] == rv


def test_generation_counts_spec_changes_only(http: httpx.Client) -> None:
    http.post(RUNS, json=run_body())
    http.patch(f"{RUNS}/smoke", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE)
    assert http.get(f"{RUNS}/smoke").json()["metadata"]["generation"] == 1
    http.patch(f"{RUNS}/smoke", json={"spec": {"suspend": True}}, headers=MERGE)
    assert http.get(f"{RUNS}/smoke").json()["metadata"]["generation"] == 2


def test_a_strategic_merge_patch_of_a_custom_resource_is_415(http: httpx.Client) -> None:
    http.post(RUNS, json=run_body())
    r = http.patch(
        f"{RUNS}/smoke",
        json={"metadata": {"annotations": {"k": "v"}}},
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert (r.status_code, r.json()["reason"]) == (415, "UnsupportedMediaType")


def test_a_strategic_merge_patch_merges_keyed_lists_by_their_key(http: httpx.Client) -> None:
    deployments = "/apis/apps/v1/namespaces/default/deployments"
    containers = [
        {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]},
        {"name": "b", "image": "b:1"},
    ]
    body = {"metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": containers}}}}
    http.post(deployments, json=body)
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
                    "containers": [
                        {"name": "a", "env": [{"name": "Y", "value": "2"}]},
                        {"name": "b", "$patch": "delete"},
                        {"name": "c", "image": "c:1"},
                    ],
                }
            }
        }
    }
    r = http.patch(
        f"{deployments}/d",
        json=patch,
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    got = r.json()["spec"]["template"]["spec"]
    assert "$setElementOrder/containers" not in got
    assert [(c["name"], c["image"]) for c in got["containers"]] == [("a", "a:1"), ("c", "c:1")]
    assert got["containers"][0]["env"] == [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]


def test_server_side_apply_creates_a_missing_object_then_merges_into_it(http: httpx.Client) -> None:
    apply = {"Content-Type": "application/apply-patch+yaml"}
    body = (
        "apiVersion: burnin.glimmer.ai/v1alpha1\nkind: BurnInRun\nmetadata: {name: applied}\n"
        "spec: {profileRef: host, target: {nodeNames: [a]}}\n"
    )
    created = http.patch(
        f"{RUNS}/applied", params={"fieldManager": "t"}, content=body, headers=apply
    )
    assert created.status_code == 201
    again = http.patch(
        f"{RUNS}/applied",
        params={"fieldManager": "t"},
        content=body.replace("profileRef: host", "profileRef: host, suspend: true"),
        headers=apply,
    )
    assert again.status_code == 200
    assert again.json()["spec"]["suspend"] is True
    no_manager = http.patch(f"{RUNS}/applied", content=body, headers=apply)
    assert no_manager.status_code == 400


def test_status_subresource_writes_only_status_and_main_writes_keep_it(http: httpx.Client) -> None:
    http.post(RUNS, json=run_body())
    s = http.patch(
        f"{RUNS}/smoke/status",
        json={"spec": {"profileRef": "sneaky"}, "status": {"phase": "Running"}},
        headers=MERGE,
    )
    assert s.json()["spec"]["profileRef"] == "host"
    assert s.json()["status"]["phase"] == "Running"
    m = http.patch(
        f"{RUNS}/smoke",
        json={"spec": {"suspend": True}, "status": {"phase": "Failed"}},
        headers=MERGE,
    )
    assert m.json()["status"]["phase"] == "Running"
    assert m.json()["spec"]["suspend"] is True
    body = http.get(f"{RUNS}/smoke").json()
    body["status"] = {"phase": "Passed"}
    put = http.put(f"{RUNS}/smoke/status", json=body)
    assert put.json()["status"]["phase"] == "Passed"
    assert http.get(f"{RUNS}/smoke/status").json()["status"]["phase"] == "Passed"


def test_a_pod_spec_is_immutable_but_its_status_is_not(http: httpx.Client) -> None:
    http.post(PODS, json=pod_body())
    spec = http.patch(f"{PODS}/runner", json={"spec": {"restartPolicy": "Always"}}, headers=MERGE)
    assert (spec.status_code, spec.json()["reason"]) == (422, "Invalid")
    status = http.patch(
        f"{PODS}/runner/status", json={"status": {"phase": "Running"}}, headers=MERGE
    )
    assert status.json()["status"]["phase"] == "Running"


def test_dry_run_answers_without_storing(http: httpx.Client) -> None:
    r = http.post(RUNS, params={"dryRun": "All"}, json=run_body())
    assert r.status_code == 201
    assert http.get(f"{RUNS}/smoke").status_code == 404


def test_unknown_paths_and_resources_are_404(http: httpx.Client) -> None:
    assert http.get("/apis/nope.example.com/v1/things").status_code == 404
    assert http.get("/api/v1/namespaces/default/burninruns").status_code == 404
    assert http.get(f"{RUNS}/x/scale").status_code == 404


def test_a_binding_assigns_an_unbound_pod_to_a_node_once() -> None:
    with api_in_thread(pod_binding=True) as api, httpx.Client(base_url=api.url) as http:
        http.post(PODS, json=pod_body("p"))
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": "p"},
            "target": {"kind": "Node", "name": "node-a"},
        }
        r = http.post(f"{PODS}/p/binding", json=binding)
        assert r.status_code == 201
        assert http.get(f"{PODS}/p").json()["spec"]["nodeName"] == "node-a"
        again = http.post(
            f"{PODS}/p/binding", json=dict(binding, target={"kind": "Node", "name": "b"})
        )
        assert (again.status_code, again.json()["reason"]) == (409, "Conflict")
        assert http.get(f"{PODS}/p").json()["spec"]["nodeName"] == "node-a"


def test_without_pod_binding_the_subresource_is_not_served(http: httpx.Client) -> None:
    http.post(PODS, json=pod_body("p"))
    r = http.post(f"{PODS}/p/binding", json={"target": {"kind": "Node", "name": "node-a"}})
    assert r.status_code == 404
    assert "pods/binding" not in {e["name"] for e in http.get("/api/v1").json()["resources"]}


def test_a_subresource_cannot_be_deleted(http: httpx.Client) -> None:
    http.post(PODS, json=pod_body("p"))
    assert http.delete(f"{PODS}/p/status").status_code == 405
    assert http.get(f"{PODS}/p").status_code == 200


def test_a_put_of_a_custom_resource_without_resource_version_is_422(http: httpx.Client) -> None:
    created = http.post(RUNS, json=run_body()).json()
    del created["metadata"]["resourceVersion"]
    r = http.put(f"{RUNS}/smoke", json=created)
    assert (r.status_code, r.json()["details"]["causes"][0]["field"]) == (
        422,
        "metadata.resourceVersion",
    )
    pod = http.post(PODS, json=pod_body("p")).json()
    del pod["metadata"]["resourceVersion"]
    assert http.put(f"{PODS}/p", json=pod).status_code == 200  # built-in kinds allow it


def test_a_custom_resource_is_created_without_the_status_it_carries(http: httpx.Client) -> None:
    body = run_body()
    body["status"] = {"phase": "Passed"}
    assert "status" not in http.post(RUNS, json=body).json()
