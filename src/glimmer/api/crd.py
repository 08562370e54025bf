"""CustomResourceDefinitions of the six burn-in kinds, generated from the models.

Pydantic's JSON schema is close to what the API server wants but not structural: it uses $ref,
``anyOf [X, null]`` for optional fields, titles, and ``additionalProperties: false``. The
post-processing here inlines references, drops the null branch (the API server prunes nulls
anyway), turns "keep unknown keys" into ``x-kubernetes-preserve-unknown-fields`` and checks that
every node has a type, so the result is a structural schema.
"""

from __future__ import annotations

from typing import Any

import yaml

from glimmer.api.base import ZERO_DEFAULT_MARK
from glimmer.api.kinds import BURNIN_KINDS
from glimmer.api.meta import API_VERSION, Resource

CATEGORY = "burnin"
VERSION = API_VERSION.split("/")[1]

_AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}

# `kubectl get` columns of each kind (specs/burnin.md §1).
PRINTER_COLUMNS: dict[str, list[dict[str, Any]]] = {
    "BurnInTest": [
        {"name": "Kind", "type": "string", "jsonPath": ".spec.kind"},
        {"name": "Scope", "type": "string", "jsonPath": ".spec.scope"},
    ],
    "BurnInProfile": [
        {"name": "Tests", "type": "string", "jsonPath": ".spec.tests[*].testRef"},
    ],
    "BurnInRun": [
        {"name": "Profile", "type": "string", "jsonPath": ".spec.profileRef"},
        {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
        {"name": "Baseline", "type": "boolean", "jsonPath": ".spec.baseline", "priority": 1},
        {"name": "Passed", "type": "integer", "jsonPath": ".status.passed"},
        {"name": "Failed", "type": "integer", "jsonPath": ".status.failed"},
        _AGE,
    ],
    "BurnInSchedule": [
        {"name": "Schedule", "type": "string", "jsonPath": ".spec.schedule"},
        {"name": "Profile", "type": "string", "jsonPath": ".spec.profileRef"},
        {"name": "Suspend", "type": "boolean", "jsonPath": ".spec.suspend"},
        {"name": "Last Schedule", "type": "date", "jsonPath": ".status.lastScheduleTime"},
        {"name": "Last Phase", "type": "string", "jsonPath": ".status.lastRunPhase"},
        _AGE,
    ],
    "BurnInSink": [
        {"name": "Type", "type": "string", "jsonPath": ".spec.type"},
    ],
    "NodeFingerprint": [
        {"name": "Node", "type": "string", "jsonPath": ".spec.nodeName"},
        {"name": "Digest", "type": "string", "jsonPath": ".status.digest"},
    ],
}

# Pydantic writes a constraint it could not fold into the type under its Python name.
_RENAMES = {
    "ge": "minimum",
    "le": "maximum",
    "min_length": "minLength",
    "max_length": "maxLength",
}
_DROP = {"title", "additionalProperties", "discriminator"}
_PRESERVE = "x-kubernetes-preserve-unknown-fields"
_INT_OR_STRING = "x-kubernetes-int-or-string"


class SchemaError(Exception):
    """The model produced a schema that cannot be made structural (a bug in a model)."""


def _deref(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Inline $ref, allOf-of-one and anyOf-with-null into one plain node (siblings win)."""
    while True:
        if "$ref" in node:
            target = defs[node["$ref"].rsplit("/", 1)[1]]
            rest = {k: v for k, v in node.items() if k != "$ref"}
            node = {**target, **rest}
        elif "allOf" in node and len(node["allOf"]) == 1:
            rest = {k: v for k, v in node.items() if k != "allOf"}
            node = {**node["allOf"][0], **rest}
        elif "anyOf" in node:
            branches = [b for b in node["anyOf"] if b != {"type": "null"}]
            if len(branches) != 1:
                raise SchemaError(f"a union cannot be made structural: {node['anyOf']}")
            rest = {k: v for k, v in node.items() if k != "anyOf"}
            node = {**branches[0], **rest}
        else:
            return node


def structural(node: dict[str, Any], defs: dict[str, Any], path: str = "") -> dict[str, Any]:
    """One node of a pydantic JSON schema made structural (recursively)."""
    node = _deref(node, defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP:
            continue
        out[_RENAMES.get(key, key)] = value
    if "const" in out:
        out["enum"] = [out.pop("const")]
    if out.get("default", 0) is None or out.pop(ZERO_DEFAULT_MARK, False):
        out.pop("default", None)
    extra = node.get("additionalProperties")
    if extra is True:
        out[_PRESERVE] = True
    elif isinstance(extra, dict):
        out["additionalProperties"] = structural(extra, defs, f"{path}.*")
    if "properties" in out:
        out["properties"] = {
            name: structural(child, defs, f"{path}.{name}")
            for name, child in out["properties"].items()
        }
        out.setdefault("type", "object")
    if "items" in out:
        out["items"] = structural(out["items"], defs, f"{path}[]")
    if "enum" in out and "type" not in out:
        out["type"] = "string"
    if "type" not in out and not out.get(_INT_OR_STRING):
        raise SchemaError(f"schema node {path or '.'} has no type: {out}")
    if "description" in out:
        # Docstrings use reST literals; a CRD description is read as plain text.
        out["description"] = " ".join(out["description"].replace("``", "`").split())
    return _ordered(out)


def _ordered(node: dict[str, Any]) -> dict[str, Any]:
    # type and description first, the rest alphabetical: stable, and easy to read in a diff.
    head = [k for k in ("type", "description") if k in node]
    return {k: node[k] for k in head + sorted(k for k in node if k not in head)}


def openapi_schema(model: type[Resource]) -> dict[str, Any]:
    """The structural ``openAPIV3Schema`` of one kind."""
    raw = model.model_json_schema(mode="validation")
    defs = raw.get("$defs", {})
    props = raw["properties"]
    properties: dict[str, Any] = {
        "apiVersion": {"type": "string", "description": "The API version of this object."},
        "kind": {"type": "string", "description": "The kind of this object."},
        "metadata": {"type": "object"},
        "spec": structural(props["spec"], defs, "spec"),
    }
    if "status" in props:
        properties["status"] = structural(props["status"], defs, "status")
    return {
        "type": "object",
        "description": (model.__doc__ or "").strip(),
        "properties": properties,
        "required": ["spec"],
    }


def crd(
    model: type[Resource],
    *,
    columns: dict[str, list[dict[str, Any]]] = PRINTER_COLUMNS,
    category: str = CATEGORY,
) -> dict[str, Any]:
    """The CustomResourceDefinition of one kind, in the group its ``API_VERSION`` names (every
    glimmer API group builds its CRDs here)."""
    group, version_name = model.API_VERSION.split("/")
    version: dict[str, Any] = {"name": version_name, "served": True, "storage": True}
    if "status" in model.model_fields:
        version["subresources"] = {"status": {}}
    version["additionalPrinterColumns"] = columns[model.KIND]
    version["schema"] = {"openAPIV3Schema": openapi_schema(model)}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{model.PLURAL}.{group}"},
        "spec": {
            "group": group,
            "names": {
                "kind": model.KIND,
                "listKind": f"{model.KIND}List",
                "plural": model.PLURAL,
                "singular": model.KIND.lower(),
                "shortNames": [model.SHORT_NAME],
                "categories": [category],
            },
            "scope": "Namespaced" if model.NAMESPACED else "Cluster",
            "versions": [version],
        },
    }


def all_crds() -> list[dict[str, Any]]:
    """The CRDs of every burn-in kind, in a stable order."""
    return [crd(model) for model in BURNIN_KINDS]


def crd_filename(crd_object: dict[str, Any]) -> str:
    """``<group>_<plural>.yaml``, the usual name of a CRD manifest file."""
    spec = crd_object["spec"]
    return f"{spec['group']}_{spec['names']['plural']}.yaml"


def to_yaml(objs: list[dict[str, Any]]) -> str:
    """A multi-document YAML stream of plain objects (CRDs), stable and diff-friendly."""
    return yaml.safe_dump_all(objs, sort_keys=False, explicit_start=True, width=100)


GENERATED_HEADER = (
    "# Generated by `glimmer crds --output-dir deploy/crds` from glimmer.api; do not edit.\n"
)


def crd_file_text(crd_object: dict[str, Any]) -> str:
    """The checked-in manifest of one CRD: a do-not-edit header and the YAML."""
    return GENERATED_HEADER + to_yaml([crd_object])
