"""Turning pydantic's validation errors into glimmer's input errors: one per field, in words,
with the field path written the way a user reads it (``spec.thresholds[0].value``).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from glimmer.api.base import SUBPATH_CTX
from glimmer.api.source import join_path

_MAX_SHOWN = 60


def field_path(loc: tuple[int | str, ...]) -> str:
    """``('spec', 'thresholds', 0, 'value')`` -> ``spec.thresholds[0].value``."""
    path = ""
    for part in loc:
        path = join_path(path, part)
    return path


def shown(value: Any) -> str:
    """A short, JSON-like rendering of an offending input value."""
    try:
        text = json.dumps(value, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _message(err: ErrorDetails) -> str:
    kind, msg = err["type"], err["msg"]
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field (not part of this kind's schema)"
    if kind == "glimmer_item":
        return msg
    if kind in ("value_error", "assertion_error"):
        return msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    got = err.get("input")
    if kind == "string_type" and isinstance(got, int | float | bool):
        # YAML reads 0, 1.5 and true as numbers and booleans; the wire wants text.
        return f"{msg}; got {shown(got)} (quote it to make it a string)"
    return f"{msg}; got {shown(got)}"


def explain(error: ValidationError) -> list[tuple[str, str]]:
    """``(field path, message)`` pairs, one per field, first error of a field wins."""
    out: dict[str, str] = {}
    for err in error.errors(include_url=False):
        path = field_path(tuple(err["loc"]))
        ctx = err.get("ctx") or {}
        subpath = ctx.get(SUBPATH_CTX)
        if isinstance(subpath, str):
            path += subpath
        out.setdefault(path, _message(err))
    return list(out.items())
