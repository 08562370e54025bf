"""Admission of every write, as a real API server does it before storing an object.

- Every object: ``metadata.name`` of the shape the kind requires (a DNS-1123 subdomain; a
  DNS-1035 label for Services, a DNS-1123 label for Namespaces), label keys and values and
  annotation keys of the legal shapes, all strings.
- A custom resource: pruned of the fields its CRD's structural schema does not declare (unless
  ``x-kubernetes-preserve-unknown-fields``), given the schema's defaults, then validated
  against ``openAPIV3Schema`` (types, required, enum, bounds, lengths, patterns, date-time)
  and the CRD's ``x-kubernetes-validations`` rules (the CEL subset of ``cel.py``). A ``null``
  where the schema is not ``nullable`` is pruned, as the API server does (a sample may hold
  ``thresholds: null``) — except under ``.status``, where it is refused (422): a deliberate
  departure, because a controller sending such nulls is the bug the operator's tests exist to
  catch, and pruning would hide it from a check of the stored status.
- A Pod: the subset of the Pod schema in ``pod_schema.py`` (types of every field a runner pod
  uses, nulls refused, enums, names of containers, ports, env).
Failures are 422 Invalid naming each offending field path, e.g. ``status.results[0].verdict``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema

from tools.k8s_standin import cel, errors
from tools.k8s_standin.pod_schema import POD_SCHEMA
from tools.k8s_standin.resources import ResourceKey, ResourceType
from tools.k8s_standin.store import Obj

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")

_NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character"
)
_LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (at most 63)"
)

_FORMATS = jsonschema.FormatChecker(formats=())


def _is_date_time(value: object) -> bool:
    return not isinstance(value, str) or _DATE_TIME.fullmatch(value) is not None


_FORMATS.checks("date-time")(_is_date_time)


def to_json_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAPI v3 structural schema as JSON Schema draft 4 (the dialect OpenAPI 3.0 extends)."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties":
            out[key] = {k: to_json_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not") and isinstance(value, Mapping):
            out[key] = to_json_schema(value)
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [to_json_schema(v) for v in value]
        elif key in (
            "type",
            "required",
            "enum",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
            "minProperties",
            "maxProperties",
            "pattern",
            "format",
            "uniqueItems",
            "multipleOf",
            "additionalProperties",
        ):
            out[key] = value
    if schema.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if schema.get("nullable"):
        if "type" in out:
            out["type"] = [out["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    return out


def prune(value: Any, schema: Mapping[str, Any], top: bool = False, nulls: bool = False) -> Any:
    """``value`` without the fields ``schema`` does not declare, and without the ``null`` of a
    declared field that is not ``nullable``, as the API server stores it. ``nulls=True`` keeps
    those nulls for validation to refuse (``.status``: see the module's docstring)."""
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        keep_unknown = schema.get("x-kubernetes-preserve-unknown-fields", False)
        out: dict[str, Any] = {}
        for key, item in value.items():
            strict = nulls or (top and key == "status")
            if top and key in ("apiVersion", "kind", "metadata"):
                out[key] = item
            elif props is not None and key in props:
                if item is None and not strict and not props[key].get("nullable"):
                    continue
                out[key] = prune(item, props[key], nulls=strict)
            elif isinstance(extra, Mapping):
                if item is None and not strict and not extra.get("nullable"):
                    continue
                out[key] = prune(item, extra, nulls=strict)
            elif keep_unknown or extra is True:
                out[key] = item
            elif props is None and not schema.get("type") and not top:
                out[key] = item  # an untyped node keeps what it holds
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [prune(item, schema["items"], nulls=nulls) for item in value]
    return value


def apply_defaults(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` with the schema's ``default`` filled in wherever the parent object exists and
    the field is absent — what the API server does on every write and read."""
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key, sub in props.items():
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                value[key] = apply_defaults(value[key], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            for key in value:
                if key not in props:
                    value[key] = apply_defaults(value[key], extra)
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [apply_defaults(item, schema["items"]) for item in value]
    return value


def field_path(parts: Iterator[Any] | Any) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _causes(validator: Any, obj: Obj) -> list[errors.Cause]:
    causes = []
    for error in sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))):
        path = field_path(error.absolute_path)
        if error.validator == "required":
            missing = re.search(r"'([^']+)' is a required property", error.message)
            name = missing.group(1) if missing else "?"
            causes.append(
                errors.Cause(
                    f"{path}.{name}" if path else name, "Required value", "FieldValueRequired"
                )
            )
            continue
        shown = json.dumps(error.instance)[:80]
        causes.append(
            errors.Cause(
                path, f"Invalid value: {shown}: {path or '<root>'} in body {_wording(error)}"
            )
        )
    return causes


def _wording(error: Any) -> str:
    if error.validator == "type":
        want = error.validator_value
        return f"must be of type {want if isinstance(want, str) else ' or '.join(want)}"
    if error.validator == "enum":
        return "should be one of " + ", ".join(json.dumps(v) for v in error.validator_value)
    if error.validator == "minLength":
        return f"should be at least {error.validator_value} chars long"
    if error.validator == "maxLength":
        return f"may not be longer than {error.validator_value}"
    if error.validator == "minItems":
        return f"should have at least {error.validator_value} items"
    return str(error.message)


def _check_metadata(rtype: ResourceType, obj: Obj) -> list[errors.Cause]:
    md = obj.get("metadata")
    if not isinstance(md, dict):
        return [errors.Cause("metadata", "Invalid value: metadata must be an object")]
    causes: list[errors.Cause] = []
    name = md.get("name")
    if rtype.kind == "Service":
        shape, what, limit = _DNS_1035, "a DNS-1035 label", 63
    elif rtype.kind == "Namespace":
        shape, what, limit = _DNS_LABEL, "a lowercase RFC 1123 label", 63
    elif rtype.key == ("", "events") or rtype.key == ("events.k8s.io", "events"):
        shape, what, limit = re.compile(r"[^/%]+"), "a name without '/' or '%'", 253
    else:
        shape, what, limit = _SUBDOMAIN, "a lowercase RFC 1123 subdomain", 253
    if not isinstance(name, str) or len(name) > limit or not shape.fullmatch(name):
        causes.append(
            errors.Cause(
                "metadata.name",
                f"Invalid value: {json.dumps(name)}: must be {what} of at most {limit} characters",
            )
        )
    for section in ("labels", "annotations"):
        mapping = md.get(section)
        if mapping is None:
            continue
        if not isinstance(mapping, dict):
            causes.append(
                errors.Cause(
                    f"metadata.{section}",
                    f"Invalid value: {json.dumps(mapping)}: must be a map of strings",
                )
            )
            continue
        for key, value in mapping.items():
            if not _qualified_key(key):
                causes.append(
                    errors.Cause(
                        f"metadata.{section}",
                        f"Invalid value: {json.dumps(key)}: {_NAME_PART}",
                    )
                )
            if not isinstance(value, str):
                causes.append(
                    errors.Cause(
                        f"metadata.{section}.{key}",
                        f"Invalid value: {json.dumps(value)}: must be a string",
                    )
                )
            elif section == "labels" and (
                len(value) > 63 or (value and not _QUALIFIED.fullmatch(value))
            ):
                causes.append(
                    errors.Cause(
                        f"metadata.labels.{key}",
                        f"Invalid value: {json.dumps(value)}: {_LABEL_VALUE}",
                    )
                )
    for section in ("finalizers",):
        items = md.get(section)
        if items is not None and (
            not isinstance(items, list) or not all(isinstance(i, str) for i in items)
        ):
            causes.append(
                errors.Cause(
                    f"metadata.{section}",
                    f"Invalid value: {json.dumps(items)}: must be a list of strings",
                )
            )
    refs = md.get("ownerReferences")
    if refs is not None:
        if not isinstance(refs, list):
            causes.append(errors.Cause("metadata.ownerReferences", "Invalid value: must be a list"))
        else:
            for i, ref in enumerate(refs):
                for field in ("apiVersion", "kind", "name", "uid"):
                    if (
                        not isinstance(ref, dict)
                        or not isinstance(ref.get(field), str)
                        or not ref.get(field)
                    ):
                        causes.append(
                            errors.Cause(
                                f"metadata.ownerReferences[{i}].{field}",
                                "Required value",
                                "FieldValueRequired",
                            )
                        )
    return causes


def _qualified_key(key: object) -> bool:
    if not isinstance(key, str) or not key:
        return False
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _SUBDOMAIN.fullmatch(prefix)):
        return False
    return len(name) <= 63 and _QUALIFIED.fullmatch(name) is not None


class Validator:
    """The schema of each custom resource type and of Pods, compiled once."""

    def __init__(self) -> None:
        self._crs: dict[ResourceKey, tuple[Mapping[str, Any], Any, list[cel.Rule]]] = {}
        self._pod = jsonschema.Draft4Validator(POD_SCHEMA, format_checker=_FORMATS)

    def learn(self, rtype: ResourceType) -> None:
        schema = ((rtype.crd_version or {}).get("schema") or {}).get("openAPIV3Schema")
        if not isinstance(schema, Mapping):
            self._crs.pop(rtype.key, None)
            return
        compiled = jsonschema.Draft4Validator(to_json_schema(schema), format_checker=_FORMATS)
        self._crs[rtype.key] = (schema, compiled, cel.rules_of(schema))

    def forget(self, rtype: ResourceType) -> None:
        self._crs.pop(rtype.key, None)

    def admit(self, rtype: ResourceType, obj: Obj, old: Obj | None) -> Obj:
        """The object as stored (pruned), or 422 naming every invalid field."""
        causes = _check_metadata(rtype, obj)
        entry = self._crs.get(rtype.key)
        if entry is not None:
            schema, compiled, rules = entry
            obj = apply_defaults(prune(copy.deepcopy(obj), schema, top=True), schema)
            causes += _causes(compiled, obj)
            if not causes:
                causes += [
                    errors.Cause(path, message) for path, message in cel.check(rules, obj, old)
                ]
        elif rtype.key == ("", "pods"):
            causes += _causes(self._pod, obj)
        if causes:
            name = (
                obj.get("metadata", {}).get("name", "")
                if isinstance(obj.get("metadata"), dict)
                else ""
            )
            raise errors.invalid(rtype, str(name), causes)
        return obj
