"""The §7.1 caches a controller passes in: compiled detectors per expression, node views per
node uid and resourceVersion; and the view that copies only what it fills."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.certify.health import (
    CORDON_EXPRESSION,
    HealthCache,
    HealthExpressionError,
    check_nodes,
    node_view,
)


def node(name: str, uid: str = "", rv: str = "", *, cordoned: bool = False) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if uid:
        metadata["uid"] = uid
    if rv:
        metadata["resourceVersion"] = rv
    images = [{"names": ["img"], "sizeBytes": 1}]
    return {"metadata": metadata, "spec": {"unschedulable": cordoned}, "status": {"images": images}}


def test_a_detector_is_compiled_once_per_expression_per_cache() -> None:
    cache = HealthCache()
    assert cache.detector(CORDON_EXPRESSION) is cache.detector(CORDON_EXPRESSION)
    assert HealthCache().detector(CORDON_EXPRESSION) is not cache.detector(CORDON_EXPRESSION)
    with pytest.raises(HealthExpressionError, match=r"must return bool"):
        cache.detector("node.spec.unschedulable")
    assert list(cache.detectors) == [CORDON_EXPRESSION]


def test_the_detector_cache_is_bounded_oldest_out() -> None:
    cache = HealthCache(max_detectors=2)
    for n in range(3):
        cache.detector(f"size(node.spec.taints) == {n}")
    assert list(cache.detectors) == ["size(node.spec.taints) == 1", "size(node.spec.taints) == 2"]


def test_a_node_view_is_reused_until_the_resource_version_moves() -> None:
    cache = HealthCache()
    first = cache.view(node("a", "u1", "7"))
    assert cache.view(node("a", "u1", "7")) is first
    newer = cache.view(node("a", "u1", "8", cordoned=True))
    assert newer is not first and newer["spec"]["unschedulable"] is True
    assert cache.views["u1"][0] == "8" and len(cache.views) == 1
    cache.forget(["u1", "never-seen"])
    assert cache.views == {}


def test_a_node_without_uid_or_version_is_never_cached() -> None:
    cache = HealthCache()
    cache.view(node("a"))
    cache.view(node("b", "u2"))
    assert cache.views == {}


def test_check_nodes_with_a_cache_judges_as_without() -> None:
    nodes = [node("b", "u2", "1", cordoned=True), node("a", "u1", "1"), node("c")]
    cache = HealthCache()
    with_cache = check_nodes(CORDON_EXPRESSION, nodes, cache)
    assert with_cache == check_nodes(CORDON_EXPRESSION, nodes)
    assert with_cache.unhealthy == ("b",)
    assert set(cache.views) == {"u1", "u2"} and list(cache.detectors) == [CORDON_EXPRESSION]
    # A cached view is what the next pass reads: the same resourceVersion, the same verdict.
    assert check_nodes(CORDON_EXPRESSION, nodes, cache).unhealthy == ("b",)


def test_the_view_shares_what_it_does_not_fill_and_never_changes_the_node() -> None:
    original = node("a")
    view = node_view(original)
    assert view["status"]["images"] is original["status"]["images"]
    assert view["status"]["conditions"] == [] and "conditions" not in original["status"]
    view["spec"]["taints"].append({"key": "x"})
    assert node_view(original)["spec"]["taints"] == []
