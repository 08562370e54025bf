"""A validator for OpenAPI v3 structural schemas (CRDs' ``openAPIV3Schema``, the Pod subset),
written for speed: a BurnInRun status of 1,000 results is checked on every write of a
1,000-node bench, where jsonschema took ~100 ms a write and this takes a few.

Keywords: type, nullable, x-kubernetes-int-or-string, enum, required, properties,
additionalProperties, items, min/maxItems, uniqueItems, min/maxLength, pattern (unanchored, as
JSON Schema says), format date-time, minimum/maximum with OpenAPI 3.0's boolean
exclusiveMinimum/exclusiveMaximum, multipleOf, min/maxProperties, allOf, anyOf, oneOf, not.
``int32``/``int64`` formats are not range-checked (the API server does not either).
The test suite checks it agrees with jsonschema's Draft 4 on the glimmer CRDs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")

Problem = tuple[str, str, str]  # (field path, message, reason)


@lru_cache(maxsize=1024)
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


def _is_type(value: Any, kind: str) -> bool:
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return True


def _shown(value: Any) -> str:
    return json.dumps(value)[:80]


def _invalid(path: str, value: Any, wording: str) -> Problem:
    return (
        path,
        f"Invalid value: {_shown(value)}: {path or '<root>'} in body {wording}",
        "FieldValueInvalid",
    )


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def check(value: Any, schema: Mapping[str, Any], path: str = "") -> list[Problem]:
    """Every problem of ``value`` against ``schema``, each with its field path."""
    out: list[Problem] = []
    _check(value, schema, path, out)
    return out


_COMBINATORS = ("allOf", "anyOf", "oneOf", "not")


def _check(value: Any, schema: Mapping[str, Any], path: str, out: list[Problem]) -> None:
    # One accumulator and plain recursion: nested generators cost more than the checks.
    kind = schema.get("type")
    if value is None:
        if schema.get("nullable"):
            return
        if kind or schema.get("x-kubernetes-int-or-string"):
            out.append(_invalid(path, value, f"must be of type {kind or 'integer or string'}"))
            return
    if schema.get("x-kubernetes-int-or-string"):
        if not _is_type(value, "integer") and not isinstance(value, str):
            out.append(_invalid(path, value, "must be of type integer or string"))
            return
    elif kind is not None and not _is_type(value, kind):
        out.append(_invalid(path, value, f"must be of type {kind}"))
        return
    enum = schema.get("enum")
    if enum is not None and value not in enum:
        out.append(
            _invalid(path, value, "should be one of " + ", ".join(json.dumps(v) for v in enum))
        )
    if isinstance(value, str):
        _string(value, schema, path, out)
    elif isinstance(value, dict):
        _object(value, schema, path, out)
    elif isinstance(value, list):
        _array(value, schema, path, out)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _number(value, schema, path, out)
    if any(k in schema for k in _COMBINATORS):
        _combinators(value, schema, path, out)


def _string(value: str, schema: Mapping[str, Any], path: str, out: list[Problem]) -> None:
    if "minLength" in schema and len(value) < schema["minLength"]:
        out.append(_invalid(path, value, f"should be at least {schema['minLength']} chars long"))
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        out.append(_invalid(path, value, f"may not be longer than {schema['maxLength']}"))
    if "pattern" in schema and not _pattern(schema["pattern"]).search(value):
        out.append(_invalid(path, value, f"should match '{schema['pattern']}'"))
    if schema.get("format") == "date-time" and not DATE_TIME.fullmatch(value):
        out.append(_invalid(path, value, "must be of type date-time"))


def _number(value: float, schema: Mapping[str, Any], path: str, out: list[Problem]) -> None:
    if "minimum" in schema:
        low = schema["minimum"]
        if value < low or (schema.get("exclusiveMinimum") is True and value == low):
            out.append(_invalid(path, value, f"should be greater than or equal to {low}"))
    if "maximum" in schema:
        high = schema["maximum"]
        if value > high or (schema.get("exclusiveMaximum") is True and value == high):
            out.append(_invalid(path, value, f"should be less than or equal to {high}"))
    step = schema.get("multipleOf")
    if step and (value / step) != int(value / step):
        out.append(_invalid(path, value, f"should be a multiple of {step}"))


def _array(value: list[Any], schema: Mapping[str, Any], path: str, out: list[Problem]) -> None:
    if "minItems" in schema and len(value) < schema["minItems"]:
        out.append(_invalid(path, value, f"should have at least {schema['minItems']} items"))
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        out.append(_invalid(path, value, f"should have at most {schema['maxItems']} items"))
    if schema.get("uniqueItems"):
        seen = [json.dumps(v, sort_keys=True) for v in value]
        if len(set(seen)) != len(seen):
            out.append(
                (
                    path,
                    f"Duplicate value: {path} in body shall not contain duplicates",
                    "FieldValueDuplicate",
                )
            )
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            _check(item, items, f"{path}[{i}]", out)


def _object(
    value: dict[str, Any], schema: Mapping[str, Any], path: str, out: list[Problem]
) -> None:
    for name in schema.get("required") or ():
        if name not in value:
            out.append((_join(path, name), "Required value", "FieldValueRequired"))
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        out.append(
            _invalid(path, value, f"should have at least {schema['minProperties']} properties")
        )
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        out.append(
            _invalid(path, value, f"should have at most {schema['maxProperties']} properties")
        )
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    for key, item in value.items():
        sub = props.get(key)
        if sub is not None:
            _check(item, sub, _join(path, key), out)
        elif isinstance(extra, dict):
            _check(item, extra, _join(path, key), out)
        elif extra is False:
            out.append(
                (
                    _join(path, key),
                    "Forbidden: additional properties are not allowed",
                    "FieldValueForbidden",
                )
            )


def _combinators(value: Any, schema: Mapping[str, Any], path: str, out: list[Problem]) -> None:
    for sub in schema.get("allOf") or ():
        _check(value, sub, path, out)
    branches = schema.get("anyOf")
    if branches and not any(_valid(value, b, path) for b in branches):
        out.append(_invalid(path, value, "must validate at least one schema (anyOf)"))
    branches = schema.get("oneOf")
    if branches and sum(1 for b in branches if _valid(value, b, path)) != 1:
        out.append(_invalid(path, value, "must validate one and only one schema (oneOf)"))
    if isinstance(schema.get("not"), dict) and _valid(value, schema["not"], path):
        out.append(_invalid(path, value, "must not validate the schema (not)"))


def _valid(value: Any, schema: Mapping[str, Any], path: str) -> bool:
    return not check(value, schema, path)
