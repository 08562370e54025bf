"""Watches as kopf and kubectl depend on them: from a resourceVersion, without losing a write,
with selector transitions, as application/json streams."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from tests.tools.k8s_standin.conftest import MERGE, PODS, RUNS, eventually, pod_body, run_body
from tools.k8s_standin.background import api_in_thread


@contextmanager
def watching(http: httpx.Client, path: str, **params: Any) -> Iterator[Iterator[dict[str, Any]]]:
    """The events of a watch on ``path`` (the server ends it after timeoutSeconds at most)."""
    query = {"watch": "true", "timeoutSeconds": "20", **params}
    with http.stream("GET", path, params=query) as r:
        assert r.status_code == 200
        assert r.headers["content-type"] == "application/json"
        yield (json.loads(line) for line in r.iter_lines() if line.strip())


def summary(event: dict[str, Any]) -> tuple[str, str]:
    return (event["type"], event["object"]["metadata"]["name"])


def take(events: Iterator[dict[str, Any]], n: int) -> list[tuple[str, str]]:
    return [summary(next(events)) for _ in range(n)]


def test_a_watch_without_resource_version_starts_with_every_object_as_added(
    http: httpx.Client,
) -> None:
    http.post(RUNS, json=run_body("a"))
    http.post(RUNS, json=run_body("b"))
    with watching(http, RUNS) as events:
        assert take(events, 2) == [("ADDED", "a"), ("ADDED", "b")]


def test_a_watch_from_the_list_resource_version_sees_only_later_writes(http: httpx.Client) -> None:
    http.post(RUNS, json=run_body("old"))
    rv = http.get(RUNS).json()["metadata"]["resourceVersion"]
    with watching(http, RUNS, resourceVersion=rv) as events:
        http.post(RUNS, json=run_body("new"))
        http.patch(f"{RUNS}/new", json={"spec": {"suspend": True}}, headers=MERGE)
        http.delete(f"{RUNS}/new")
        assert take(events, 3) == [("ADDED", "new"), ("MODIFIED", "new"), ("DELETED", "new")]


def test_a_watch_resumed_from_an_old_resource_version_replays_what_it_missed(
    http: httpx.Client,
) -> None:
    rv = http.post(RUNS, json=run_body("a")).json()["metadata"]["resourceVersion"]
    http.patch(f"{RUNS}/a", json={"spec": {"suspend": True}}, headers=MERGE)
    http.delete(f"{RUNS}/a")
    http.post(RUNS, json=run_body("b"))
    with watching(http, RUNS, resourceVersion=rv) as events:
        assert take(events, 3) == [("MODIFIED", "a"), ("DELETED", "a"), ("ADDED", "b")]


def test_deleted_events_carry_a_new_resource_version(http: httpx.Client) -> None:
    created = http.post(RUNS, json=run_body("a")).json()["metadata"]["resourceVersion"]
    with watching(http, RUNS, resourceVersion=created) as events:
        http.delete(f"{RUNS}/a")
        event = next(events)
    assert event["type"] == "DELETED"
    assert int(event["object"]["metadata"]["resourceVersion"]) > int(created)


def test_an_object_leaving_a_label_selector_is_deleted_for_that_watch(http: httpx.Client) -> None:
    rv = http.get(PODS).json()["metadata"]["resourceVersion"]
    with watching(http, PODS, resourceVersion=rv, labelSelector="role=runner") as events:
        http.post(PODS, json=pod_body("p", role="runner"))
        http.post(PODS, json=pod_body("other", role="sink"))
        http.patch(f"{PODS}/p", json={"metadata": {"labels": {"role": "done"}}}, headers=MERGE)
        http.patch(
            f"{PODS}/other", json={"metadata": {"labels": {"role": "runner"}}}, headers=MERGE
        )
        assert take(events, 3) == [("ADDED", "p"), ("DELETED", "p"), ("ADDED", "other")]


def test_a_field_selector_watch_sees_only_the_pods_of_its_node(http: httpx.Client) -> None:
    with watching(http, "/api/v1/pods", fieldSelector="spec.nodeName=node-b") as events:
        http.post(PODS, json=pod_body("on-a", node="node-a"))
        http.post(PODS, json=pod_body("on-b", node="node-b"))
        assert take(events, 1) == [("ADDED", "on-b")]


def test_a_namespaced_watch_ignores_other_namespaces(http: httpx.Client) -> None:
    http.post("/api/v1/namespaces", json={"metadata": {"name": "other"}})
    with watching(http, PODS) as events:
        http.post("/api/v1/namespaces/other/pods", json=pod_body("elsewhere"))
        http.post(PODS, json=pod_body("here"))
        assert take(events, 1) == [("ADDED", "here")]


def test_no_write_is_lost_between_the_list_and_the_watch(http: httpx.Client) -> None:
    rv = http.get(RUNS).json()["metadata"]["resourceVersion"]
    for i in range(20):
        http.post(RUNS, json=run_body(f"r{i}"))
    with watching(http, RUNS, resourceVersion=rv) as events:
        assert take(events, 20) == [("ADDED", f"r{i}") for i in range(20)]


def test_a_watch_from_an_expired_resource_version_gets_an_error_event_410(
    http: httpx.Client,
) -> None:
    with watching(http, RUNS, resourceVersion="-5") as events:
        event = next(events)
    assert event["type"] == "ERROR"
    assert event["object"]["code"] == 410
    assert event["object"]["reason"] == "Expired"


def test_a_watch_ends_after_its_timeout_seconds(http: httpx.Client) -> None:
    with watching(http, RUNS, timeoutSeconds="1") as events:
        assert list(events) == []


def test_each_replayed_event_shows_the_object_as_it_was_at_that_version(http: httpx.Client) -> None:
    rv = http.post(RUNS, json=run_body("a")).json()["metadata"]["resourceVersion"]
    written = []
    for value in (True, False, True):
        r = http.patch(f"{RUNS}/a", json={"spec": {"suspend": value}}, headers=MERGE).json()
        written.append((r["metadata"]["resourceVersion"], value))
    http.patch(f"{RUNS}/a/status", json={"status": {"passed": 1}}, headers=MERGE)
    with watching(http, RUNS, resourceVersion=rv) as events:
        seen = [next(events)["object"] for _ in range(3)]
    assert [(o["metadata"]["resourceVersion"], o["spec"]["suspend"]) for o in seen] == written
    assert all("status" not in o or "passed" not in o["status"] for o in seen)


def test_a_streaming_list_sends_every_object_then_the_initial_events_end_bookmark(
    http: httpx.Client,
) -> None:
    http.post(RUNS, json=run_body("a"))
    rv = http.post(RUNS, json=run_body("b")).json()["metadata"]["resourceVersion"]
    params = {
        "sendInitialEvents": "true",
        "resourceVersionMatch": "NotOlderThan",
        "allowWatchBookmarks": "true",
    }
    with watching(http, RUNS, **params) as events:
        assert take(events, 2) == [("ADDED", "a"), ("ADDED", "b")]
        bookmark = next(events)
        http.post(RUNS, json=run_body("c"))
        assert take(events, 1) == [("ADDED", "c")]
    assert bookmark["type"] == "BOOKMARK"
    assert bookmark["object"]["metadata"]["resourceVersion"] == rv
    assert bookmark["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_a_watch_whose_client_went_away_is_dropped_at_once() -> None:
    with api_in_thread() as api, httpx.Client(base_url=api.url) as http:
        for _ in range(3):
            with http.stream("GET", RUNS, params={"watch": "true"}) as r:
                assert r.status_code == 200
        subs = api.api.cluster.store._subs  # no client could ask how many watchers are left
        eventually(lambda: not subs.get(("burnin.glimmer.ai", "burninruns")), "watchers gone")
