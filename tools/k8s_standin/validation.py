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
- A ConfigMap or Secret: string data of at most 1 MiB in all; annotations of every object at
  most 256 KiB — the API server's limits, which a ConfigMap sink's rollover must respect.
- A Pod: the subset of the Pod schema in ``pod_schema.py`` (types of every field a runner pod
  uses, nulls refused, enums, names of containers, ports, env).
Failures are 422 Invalid naming each offending field path, e.g. ``status.results[0].verdict``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any

from tools.k8s_standin import cel, errors, schema_check
from tools.k8s_standin.pod_schema import POD_SCHEMA
from tools.k8s_standin.resources import ResourceKey, ResourceType
from tools.k8s_standin.store import Obj

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")

_NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character"
)
_LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (at most 63)"
)


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
            elif isinstance(extra, dict):
                if item is None and not strict and not extra.get("nullable"):
                    continue
                out[key] = prune(item, extra, nulls=strict)
            elif keep_unknown or extra is True:
                out[key] = item
            elif props is None and not schema.get("type") and not top:
                out[key] = item  # an untyped node keeps what it holds
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [prune(item, schema["items"], nulls=nulls) for item in value]
    return value


_DEFAULTS: dict[int, tuple[Mapping[str, Any], bool]] = {}


def _has_defaults(schema: Mapping[str, Any]) -> bool:
    """Whether ``schema`` declares a default anywhere below it (cached: the walk is skipped
    for a subtree without one, most of a large status)."""
    hit = _DEFAULTS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    subs = list((schema.get("properties") or {}).values())
    subs += [
        schema[k] for k in ("items", "additionalProperties") if isinstance(schema.get(k), dict)
    ]
    found = any("default" in sub or _has_defaults(sub) for sub in subs)
    _DEFAULTS[id(schema)] = (schema, found)
    return found


def apply_defaults(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` with the schema's ``default`` filled in wherever the parent object exists and
    the field is absent — what the API server does on every write and read."""
    if not _has_defaults(schema):
        return value
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key, sub in props.items():
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                value[key] = apply_defaults(value[key], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key in value:
                if key not in props:
                    value[key] = apply_defaults(value[key], extra)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [apply_defaults(item, schema["items"]) for item in value]
    return value


# The API server's size limits a sink writing ConfigMaps must stay under.
MAX_DATA_BYTES = 1024 * 1024
MAX_ANNOTATION_BYTES = 256 * 1024


def _check_data(obj: Obj) -> list[errors.Cause]:
    """A ConfigMap's (or Secret's) data: string values, and at most 1 MiB together."""
    causes, total = [], 0
    for section in ("data", "binaryData", "stringData"):
        mapping = obj.get(section)
        if mapping is None:
            continue
        if not isinstance(mapping, dict):
            causes.append(
                errors.Cause(
                    section, f"Invalid value: {json.dumps(mapping)[:80]}: must be a map of strings"
                )
            )
            continue
        for key, value in mapping.items():
            if not isinstance(value, str):
                causes.append(
                    errors.Cause(
                        f"{section}[{key}]",
                        f"Invalid value: {json.dumps(value)[:80]}: must be a string",
                    )
                )
            else:
                total += len(key) + len(value.encode())
    if total > MAX_DATA_BYTES:
        causes.append(
            errors.Cause(
                "[]", f"Too long: must have at most {MAX_DATA_BYTES} bytes", "FieldValueTooLong"
            )
        )
    return causes


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
    annotations = md.get("annotations")
    if isinstance(annotations, dict):
        size = sum(len(str(k)) + len(str(v).encode()) for k, v in annotations.items())
        if size > MAX_ANNOTATION_BYTES:
            causes.append(
                errors.Cause(
                    "metadata.annotations",
                    f"Too long: must have at most {MAX_ANNOTATION_BYTES} bytes",
                    "FieldValueTooLong",
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


def _problems(value: Any, schema: Mapping[str, Any], path: str) -> list[errors.Cause]:
    return [errors.Cause(p, m, r) for p, m, r in schema_check.check(value, schema, path)]


class Validator:
    """The schema of each custom resource type (and its rules), and the Pod schema subset."""

    def __init__(self) -> None:
        self._crs: dict[ResourceKey, tuple[Mapping[str, Any], list[cel.Rule]]] = {}

    def learn(self, rtype: ResourceType) -> None:
        schema = ((rtype.crd_version or {}).get("schema") or {}).get("openAPIV3Schema")
        if not isinstance(schema, Mapping):
            self._crs.pop(rtype.key, None)
            return
        self._crs[rtype.key] = (schema, cel.rules_of(schema))

    def forget(self, rtype: ResourceType) -> None:
        self._crs.pop(rtype.key, None)

    def admit(self, rtype: ResourceType, obj: Obj, old: Obj | None) -> Obj:
        """The object as stored (pruned, defaulted), or 422 naming every invalid field.

        A top-level field equal to the stored object's is taken from it as it is: it was
        pruned, defaulted and found valid when stored, so a status write re-checks the status
        alone — what keeps a 1,000-result status write cheap."""
        causes = _check_metadata(rtype, obj)
        entry = self._crs.get(rtype.key)
        if entry is not None:
            schema, rules = entry
            props = schema.get("properties") or {}
            out: Obj = {}
            for key, value in obj.items():
                if key in ("apiVersion", "kind", "metadata"):
                    out[key] = value
                elif old is not None and key in old and old[key] == value:
                    out[key] = old[key]
                elif key in props:
                    if value is None and key != "status" and not props[key].get("nullable"):
                        continue
                    sub = props[key]
                    out[key] = apply_defaults(prune(value, sub, nulls=key == "status"), sub)
                    causes += _problems(out[key], sub, key)
                elif schema.get("x-kubernetes-preserve-unknown-fields"):
                    out[key] = value
            for name in schema.get("required") or ():
                if name not in out:
                    causes.append(errors.Cause(name, "Required value", "FieldValueRequired"))
            obj = out
            if not causes:
                found = cel.check(rules, obj, old)
                causes += [errors.Cause(path, message) for path, message in found]
        elif rtype.key == ("", "pods"):
            causes += _problems(obj, POD_SCHEMA, "")
        elif rtype.key in (("", "configmaps"), ("", "secrets")):
            causes += _check_data(obj)
        if causes:
            md = obj.get("metadata")
            name = md.get("name", "") if isinstance(md, dict) else ""
            raise errors.invalid(rtype, str(name), causes)
        return obj
