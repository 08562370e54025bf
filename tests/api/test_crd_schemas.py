"""The generated CRDs: structural, complete, checked in, and agreeing with the samples."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from glimmer.api.crd import all_crds, crd_file_text, crd_filename, openapi_schema
from glimmer.api.dump import to_wire
from glimmer.api.kinds import BURNIN_KINDS
from glimmer.api.load import load_paths
from glimmer.api.meta import Resource

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy" / "crds"
SAMPLES = REPO.parent / "shared" / "conformance" / "glimmer-samples"
CRDS = {c["spec"]["names"]["kind"]: c for c in all_crds()}


def _nodes(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(node, dict):
        return
    yield path, node
    for name, child in (node.get("properties") or {}).items():
        yield from _nodes(child, f"{path}.{name}")
    if isinstance(node.get("items"), dict):
        yield from _nodes(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        yield from _nodes(node["additionalProperties"], f"{path}.*")


def _schema(kind: str) -> dict[str, Any]:
    schema: dict[str, Any] = CRDS[kind]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def _json_schema(node: Any) -> Any:
    """The CRD schema as plain JSON schema: Kubernetes-only x- keys removed."""
    if isinstance(node, dict):
        return {k: _json_schema(v) for k, v in node.items() if not k.startswith("x-")}
    if isinstance(node, list):
        return [_json_schema(v) for v in node]
    return node


def test_the_checked_in_crds_are_what_the_models_generate() -> None:
    expected = {crd_filename(c): crd_file_text(c) for c in all_crds()}
    found = {p.name: p.read_text() for p in DEPLOY.glob("*.yaml")}
    assert found == expected, "run: glimmer crds --output-dir deploy/crds"


@pytest.mark.parametrize("kind", sorted(CRDS))
def test_every_schema_is_structural(kind: str) -> None:
    for path, node in _nodes(_schema(kind)):
        assert not {"$ref", "anyOf", "oneOf", "allOf", "$defs", "title"} & node.keys(), path
        assert "type" in node or node.get("x-kubernetes-int-or-string"), path
        if "properties" in node:
            assert node.get("additionalProperties") is None, path


@pytest.mark.parametrize(
    ("kind", "short"),
    [
        ("BurnInTest", "bit"),
        ("BurnInProfile", "bip"),
        ("BurnInRun", "bir"),
        ("BurnInSchedule", "bisc"),
        ("BurnInSink", "bis"),
        ("NodeFingerprint", "nfp"),
    ],
)
def test_every_kind_is_namespaced_with_its_short_name_category_and_status(
    kind: str, short: str
) -> None:
    spec = CRDS[kind]["spec"]
    assert spec["names"]["shortNames"] == [short]
    assert spec["names"]["categories"] == ["burnin"]
    assert spec["scope"] == "Namespaced"
    assert spec["versions"][0]["subresources"] == {"status": {}}


def test_printer_columns_follow_the_spec() -> None:
    def names(kind: str) -> list[str]:
        columns = CRDS[kind]["spec"]["versions"][0]["additionalPrinterColumns"]
        return [c["name"] for c in columns]

    assert names("BurnInTest") == ["Kind", "Scope"]
    assert names("BurnInProfile") == ["Tests"]
    assert names("BurnInRun") == ["Profile", "Phase", "Baseline", "Passed", "Failed", "Age"]
    assert names("BurnInSchedule") == [
        "Schedule", "Profile", "Suspend", "Last Schedule", "Last Phase", "Age",
    ]  # fmt: skip
    assert names("BurnInSink") == ["Type"]
    assert names("NodeFingerprint") == ["Node", "Digest"]


def test_defaults_enums_and_bounds_reach_the_schema() -> None:
    test = _schema("BurnInTest")["properties"]["spec"]["properties"]
    assert test["scope"]["default"] == "Node"
    assert test["scope"]["enum"] == ["Node", "Pair", "Group"]
    assert test["repeatCount"] == {
        "type": "integer", "default": 1, "format": "int32", "minimum": 1,
    }  # fmt: skip
    assert "default" not in test["durationSeconds"]  # 0 is "not set", not a documented default
    assert test["soak"]["properties"]["segmentSeconds"]["minimum"] == 300
    gate = test["thresholds"]["items"]["properties"]
    assert gate["value"]["pattern"].startswith("^[+-]?")
    assert gate["applicability"]["default"] == "Required"
    run = _schema("BurnInRun")["properties"]["spec"]["properties"]
    assert run["maxConcurrentNodes"]["default"] == 1
    assert run["cancelPolicy"]["enum"] == ["Graceful", "Immediate"]
    assert run["cancelReason"]["maxLength"] == 512
    schedule = _schema("BurnInSchedule")["properties"]["spec"]["properties"]
    assert schedule["successfulRunsHistoryLimit"]["default"] == 3
    assert schedule["failedRunsHistoryLimit"]["default"] == 10
    assert schedule["concurrencyPolicy"]["enum"] == ["Forbid", "Allow"]


def test_host_paths_and_vendor_images_are_list_maps() -> None:
    runner = _schema("BurnInTest")["properties"]["spec"]["properties"]["runner"]["properties"]
    assert runner["hostPaths"]["x-kubernetes-list-type"] == "map"
    assert runner["hostPaths"]["x-kubernetes-list-map-keys"] == ["mountPath"]
    assert runner["hostPaths"]["items"]["properties"]["readOnly"]["default"] is True
    assert runner["imagesByVendor"]["x-kubernetes-list-map-keys"] == ["vendor"]
    assert runner["imagesByVendor"]["maxItems"] == 8


def test_only_carried_kubernetes_types_keep_unknown_fields() -> None:
    keeping = {
        path
        for kind in CRDS
        for path, node in _nodes(_schema(kind), kind)
        if node.get("x-kubernetes-preserve-unknown-fields")
    }
    assert "BurnInTest.spec.runner.readinessProbe" in keeping
    assert "BurnInTest.spec.resources" in keeping
    assert "BurnInTest.spec.runner.env[].valueFrom" in keeping
    assert not any(p.endswith((".spec", ".status", "thresholds[]")) for p in keeping)


def _pruned(node: Any) -> Any:
    """Drop nulls the way the API server prunes them from non-nullable fields."""
    if isinstance(node, dict):
        return {k: _pruned(v) for k, v in node.items() if v is not None}
    if isinstance(node, list):
        return [_pruned(v) for v in node]
    return node


def _sample_objects() -> list[Resource]:
    objs = [item.obj for item in load_paths([str(SAMPLES)])]
    return [o for o in objs if isinstance(o, Resource)]


@pytest.mark.parametrize("model", BURNIN_KINDS, ids=lambda m: m.KIND)
def test_openapi_schema_is_stable(model: type[Resource]) -> None:
    assert openapi_schema(model) == openapi_schema(model)


def test_every_sample_object_validates_against_its_crd_schema() -> None:
    objs = _sample_objects()
    assert len(objs) > 40
    for obj in objs:
        schema = _json_schema(_schema(obj.KIND))
        jsonschema.validate(_pruned(to_wire(obj)), schema)


def test_the_crd_schema_refuses_what_the_models_refuse() -> None:
    schema = _json_schema(_schema("BurnInTest"))
    bad = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInTest",
        "metadata": {"name": "x"},
        "spec": {
            "kind": "nccl",
            "thresholds": [{"metric": "busBandwidthGBs", "comparison": "Equal", "value": "NaN"}],
        },
    }
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_crds_print_as_one_multi_document_stream() -> None:
    from glimmer.api.crd import to_yaml

    docs = list(yaml.safe_load_all(to_yaml(all_crds())))
    assert [d["metadata"]["name"] for d in docs] == [
        "burnintests.burnin.glimmer.ai",
        "burninprofiles.burnin.glimmer.ai",
        "burninruns.burnin.glimmer.ai",
        "burninschedules.burnin.glimmer.ai",
        "burninsinks.burnin.glimmer.ai",
        "nodefingerprints.burnin.glimmer.ai",
    ]
