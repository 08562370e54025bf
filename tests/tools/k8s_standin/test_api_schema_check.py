"""The stand-in's fast structural-schema validator agrees with jsonschema (Draft 4, the dialect
OpenAPI 3.0 extends) on the glimmer CRDs, for valid objects and for broken ones."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tools.k8s_standin import schema_check
from tools.k8s_standin.pod_schema import POD_SCHEMA

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO.parent / "shared" / "conformance" / "glimmer-samples"
_FORMATS = jsonschema.FormatChecker(formats=())
_FORMATS.checks("date-time")(
    lambda v: not isinstance(v, str) or bool(schema_check.DATE_TIME.fullmatch(v))
)


def to_json_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAPI v3 structural schema as JSON Schema draft 4."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties":
            out[key] = {k: to_json_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not") and isinstance(value, Mapping):
            out[key] = to_json_schema(value)
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [to_json_schema(v) for v in value]
        elif not key.startswith("x-") and key not in ("nullable", "description", "default"):
            out[key] = value
    if schema.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if schema.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    return out


def crd_schemas() -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted((REPO / "deploy" / "crds").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                out[doc["spec"]["names"]["kind"]] = doc["spec"]["versions"][0]["schema"][
                    "openAPIV3Schema"
                ]
    return out


def samples() -> Iterator[dict[str, Any]]:
    for path in sorted(SAMPLES.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("apiVersion", "").startswith("burnin.glimmer.ai/"):
                yield doc


def without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def mutations(obj: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(path, wrong value) for each leaf: a value of another type, and a null."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from mutations(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from mutations(v, (*path, i))
    if path:
        yield path, None
        yield path, 7 if isinstance(obj, str) else "seven"


def put(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    out = copy.deepcopy(obj)
    node = out
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return out


def paths_of(errors: Iterator[Any]) -> set[str]:
    out = set()
    for error in errors:
        path = ""
        for part in error.absolute_path:
            path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
        if error.validator == "required":
            name = re.search(r"'([^']+)' is a required property", error.message)
            path = f"{path}.{name.group(1)}" if path and name else (name.group(1) if name else path)
        out.add(path)
    return out


@pytest.mark.parametrize("kind", sorted(crd_schemas()))
def test_the_fast_validator_agrees_with_jsonschema_on_the_samples_and_their_mutations(
    kind: str,
) -> None:
    schema = crd_schemas()[kind]
    reference = jsonschema.Draft4Validator(to_json_schema(schema), format_checker=_FORMATS)
    # NodeFingerprint has no sample: an empty spec stands in (its required fields break it).
    minimal = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": kind,
        "metadata": {"name": "x"},
        "spec": {},
    }
    docs = [without_nulls(d) for d in samples() if d["kind"] == kind] or [minimal]
    refused = 0
    for doc in docs:
        candidates = [doc] + [put(doc, p, v) for p, v in mutations(doc["spec"], ("spec",))]
        for candidate in candidates:
            fast = {p for p, _, _ in schema_check.check(candidate, schema)}
            assert fast == paths_of(reference.iter_errors(candidate)), candidate
            refused += bool(fast)
    assert refused > 0


def test_the_fast_validator_agrees_with_jsonschema_on_broken_pods() -> None:
    reference = jsonschema.Draft4Validator(POD_SCHEMA, format_checker=_FORMATS)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "containers": [
                {
                    "name": "runner",
                    "image": "img",
                    "command": ["a"],
                    "env": [{"name": "A", "value": "1"}],
                    "resources": {"limits": {"cpu": "500m", "nvidia.com/gpu": 1}},
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                }
            ],
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
            "nodeName": "n",
            "activeDeadlineSeconds": 60,
        },
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }
    for candidate in [pod] + [put(pod, p, v) for p, v in mutations(pod, ())]:
        fast = {p for p, _, _ in schema_check.check(candidate, POD_SCHEMA)}
        assert fast == paths_of(reference.iter_errors(candidate)), candidate
