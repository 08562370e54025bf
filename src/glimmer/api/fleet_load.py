"""Reading a Fleet file: YAML (or JSON) text -> a validated :class:`~glimmer.api.fleet.Fleet`.

On top of the shared reader (field lines, duplicate keys) this adds the loader pre-pass of
specs/fleet.md §1.2: a budget on alias/merge expansion, the whole-integer rule, explicit operating
assumptions, and the spec's wording for unknown fields. Every problem is an InputError naming the
file, the document, ``Fleet/<name>``, the field path and its line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from glimmer.api.explain import field_path, shown
from glimmer.api.fleet import Fleet
from glimmer.api.fleet_parts import API_VERSION
from glimmer.api.source import Document, parse
from glimmer.errors import InputError, InputErrors, Location

MAX_EXPANSION = 65536
MAX_DEPTH = 128
_WHOLE = "must be a finite whole integer, not fractional ownership/capacity"
_INT_ERRORS = frozenset({"int_from_float", "int_parsing", "int_type", "finite_number"})


@dataclass(frozen=True)
class LoadedFleet:
    """A validated Fleet and where it came from (file, document, field lines)."""

    fleet: Fleet
    source: str
    document: int = 1
    lines: Mapping[str, int] = field(default_factory=dict, repr=False)


def _budget(text: str, source: str) -> None:
    """Refuse alias bombs and runaway nesting before anything is constructed."""

    def fail(reason: str, node: yaml.Node | None = None) -> InputError:
        line = node.start_mark.line + 1 if node is not None else None
        return InputError(reason, Location(file=source, line=line))

    try:
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return  # the shared reader reports unreadable YAML with its line
    expanded = 0

    def walk(node: yaml.Node, depth: int, stack: set[int], seen: set[int]) -> None:
        nonlocal expanded
        if depth >= MAX_DEPTH:
            raise fail(f"YAML resource budget: depth exceeds {MAX_DEPTH} levels", node)
        if id(node) in stack:
            raise fail("recursive YAML alias/merge", node)
        if id(node) in seen:  # reached again through an alias: it is expanded once more
            expanded += 1
            if expanded > MAX_EXPANSION:
                raise fail(
                    f"YAML resource budget: logical expansion exceeds {MAX_EXPANSION} nodes", node
                )
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            children = [v for pair in node.value for v in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            return
        stack.add(id(node))
        for child in children:
            walk(child, depth + 1, stack, seen)
        stack.discard(id(node))

    for root in nodes:
        if root is not None:
            walk(root, 0, set(), set())


def _message(err: ErrorDetails) -> str:
    kind, loc, value = err["type"], err["loc"], err.get("input")
    if kind in _INT_ERRORS and isinstance(value, float):
        return _WHOLE
    if "operating" in loc and (kind == "missing" or value is None):
        return "explicit operating assumption is required"
    if kind == "extra_forbidden":
        return f"field {loc[-1]} not found in the Fleet schema"
    if kind == "missing":
        return "required field is missing"
    if kind in ("value_error", "assertion_error"):
        return str(err["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    return f"{err['msg']}; got {shown(value)}"


def _nearest(lines: Mapping[str, int], path: str) -> int | None:
    while path:
        if path in lines:
            return lines[path]
        cut = max(path.rfind("."), path.rfind("["))
        path = path[:cut] if cut > 0 else ""
    return lines.get("")


def validate_document(doc: Document, source: str) -> LoadedFleet:
    """Validate one parsed document as a Fleet; InputErrors lists every field that is wrong."""
    data: Any = doc.data
    meta = data.get("metadata") if isinstance(data, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    obj = f"Fleet/{name if isinstance(name, str) else '?'}"

    def at(path: str, message: str) -> InputError:
        return InputError(
            message, Location(source, doc.number, obj, path or None, _nearest(doc.lines, path))
        )

    if not isinstance(data, dict):
        raise InputErrors([at("", "a Fleet document must be a mapping")])
    if data.get("apiVersion") != API_VERSION or data.get("kind") != "Fleet":
        raise InputErrors(
            [at("kind", f"not a Fleet: expected apiVersion {API_VERSION}, kind Fleet")]
        )
    try:
        fleet = Fleet.model_validate(data)
    except ValidationError as e:
        errors: dict[str, InputError] = {}
        for err in e.errors(include_url=False):
            path = field_path(tuple(err["loc"]))
            errors.setdefault(path, at(path, _message(err)))
        raise InputErrors(list(errors.values())) from None
    return LoadedFleet(fleet, source, doc.number, doc.lines)


def load_fleet_text(text: str, source: str = "<text>") -> LoadedFleet:
    """The one Fleet in ``text`` (YAML or JSON)."""
    _budget(text, source)
    docs = list(parse(text, source))
    if len(docs) != 1:
        raise InputError(
            f"a fleet file holds exactly one Fleet document, found {len(docs)}",
            Location(file=source),
        )
    return validate_document(docs[0], source)
