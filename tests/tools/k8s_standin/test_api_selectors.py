"""Label and field selectors on LIST, as kubectl -l and kopf's filters send them."""

from __future__ import annotations

import httpx
import pytest

from tests.tools.k8s_standin.conftest import NODES, PODS, node_body, pod_body


@pytest.fixture
def nodes(http: httpx.Client) -> None:
    http.post(NODES, json=node_body("a", pool="gpu", zone="z1"))
    http.post(NODES, json=node_body("b", pool="gpu", zone="z2"))
    http.post(NODES, json=node_body("c", pool="cpu"))


def names(http: httpx.Client, path: str, **params: str) -> list[str]:
    r = http.get(path, params=params)
    assert r.status_code == 200, r.text
    return [i["metadata"]["name"] for i in r.json()["items"]]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("pool=gpu", ["a", "b"]),
        ("pool==gpu", ["a", "b"]),
        ("pool!=gpu", ["c"]),
        ("zone in (z1, z3)", ["a"]),
        ("zone notin (z1)", ["b", "c"]),
        ("zone", ["a", "b"]),
        ("!zone", ["c"]),
        ("pool=gpu,zone=z2", ["b"]),
    ],
)
def test_label_selectors_take_every_operator(
    http: httpx.Client, nodes: None, selector: str, expected: list[str]
) -> None:
    assert names(http, NODES, labelSelector=selector) == expected


def test_field_selectors_on_name_namespace_and_node(http: httpx.Client) -> None:
    http.post(PODS, json=pod_body("p1", node="a"))
    http.post(PODS, json=pod_body("p2", node="b"))
    assert names(http, "/api/v1/pods", fieldSelector="spec.nodeName=b") == ["p2"]
    assert names(http, PODS, fieldSelector="metadata.name=p1") == ["p1"]
    assert names(
        http, "/api/v1/pods", fieldSelector="metadata.namespace=default,spec.nodeName!=b"
    ) == ["p1"]
    assert names(http, "/api/v1/pods", fieldSelector="metadata.namespace=kube-system") == []


def test_a_field_the_server_does_not_index_is_400(http: httpx.Client) -> None:
    r = http.get(PODS, params={"fieldSelector": "spec.containers=x"})
    assert (r.status_code, r.json()["reason"]) == (400, "BadRequest")
    assert "field label not supported" in r.json()["message"]


def test_a_malformed_label_selector_is_400(http: httpx.Client) -> None:
    r = http.get(NODES, params={"labelSelector": "a in b"})
    assert r.status_code == 400
