"""The certification CRDs: structural, checked in, and accepting the samples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest

from glimmer.api.certify.crd import CRD_FOLDER, all_certify_crds, crd_file_text
from glimmer.api.crd import crd_filename
from glimmer.api.dump import to_wire
from glimmer.api.load import load_paths

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "tests" / "certify" / "catalog" / "samples"
CRDS = {c["spec"]["names"]["kind"]: c for c in all_certify_crds()}


def _schema(kind: str) -> dict[str, Any]:
    schema: dict[str, Any] = CRDS[kind]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def _walk(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(node, dict):
        return []
    found = [(path, node)]
    for name, child in (node.get("properties") or {}).items():
        found += _walk(child, f"{path}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            found += _walk(node[key], f"{path}[]")
    return found


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items() if not k.startswith("x-")}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def test_the_checked_in_certify_crds_are_what_the_models_generate() -> None:
    expected = {crd_filename(c): crd_file_text(c) for c in all_certify_crds()}
    found = {p.name: p.read_text() for p in (REPO / CRD_FOLDER).glob("*.yaml")}
    assert found == expected, f"regenerate: glimmer certify crds --output-dir {CRD_FOLDER}"


@pytest.mark.parametrize("kind", sorted(CRDS))
def test_every_certify_schema_is_structural(kind: str) -> None:
    for path, node in _walk(_schema(kind)):
        assert not {"$ref", "anyOf", "oneOf", "allOf", "$defs", "title"} & node.keys(), path
        assert "type" in node or node.get("x-kubernetes-int-or-string"), path


def test_kinds_scopes_and_short_names() -> None:
    got = {k: (c["spec"]["scope"], c["spec"]["names"]["shortNames"]) for k, c in CRDS.items()}
    assert got == {
        "Certification": ("Namespaced", ["cert"]),
        "WorkloadRun": ("Namespaced", ["wlr"]),
        "LogProfile": ("Cluster", ["lp"]),
        "Workflow": ("Namespaced", ["cwf"]),
        "Job": ("Namespaced", ["cjob"]),
        "GoodputMeasurement": ("Namespaced", ["gpm"]),
        "BandwidthMeasurement": ("Namespaced", ["bwm"]),
        "ReportExportPolicy": ("Namespaced", ["rep"]),
        "ReportExport": ("Namespaced", ["rex"]),
    }
    assert {c["spec"]["group"] for c in CRDS.values()} == {"certify.glimmer.ai"}


@pytest.mark.parametrize("kind", ["Certification", "WorkloadRun"])
def test_the_spec_is_immutable_after_creation(kind: str) -> None:
    rules = _schema(kind)["properties"]["spec"]["x-kubernetes-validations"]
    assert {"rule": "self == oldSelf", "message": "spec is immutable after creation"} in rules


def test_every_sample_validates_against_its_crd() -> None:
    for item in load_paths([str(SAMPLES)]):
        jsonschema.validate(to_wire(item.obj), _plain(_schema(item.kind)))
