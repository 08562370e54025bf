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
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails

from glimmer.api.explain import field_path, shown
from glimmer.api.fleet import Fleet
from glimmer.api.fleet_parts import API_VERSION
from glimmer.api.source import Document, yaml_error
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


_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[valid-type, misc]
    """The C loader where libyaml is present (a 100,000-GPU fleet file is megabytes), without the
    timestamp resolver: the model decides what is a time."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _fail(source: str, reason: str, node: yaml.Node | None = None) -> InputError:
    line = node.start_mark.line + 1 if node is not None else None
    return InputError(reason, Location(file=source, document=1, line=line))


def _index(root: yaml.Node, source: str) -> dict[str, int]:
    """Field path -> line, while enforcing the alias/merge budget of §1.2 step 1."""
    lines: dict[str, int] = {"": root.start_mark.line + 1}
    expanded = 0
    seen: set[int] = set()
    stack: set[int] = set()

    def walk(node: yaml.Node, path: str, depth: int) -> None:
        nonlocal expanded
        if depth >= MAX_DEPTH:
            raise _fail(source, f"YAML resource budget: depth exceeds {MAX_DEPTH} levels", node)
        if id(node) in stack:
            raise _fail(source, "recursive YAML alias/merge", node)
        if id(node) in seen:  # reached again through an alias: expanded once more
            expanded += 1
            if expanded > MAX_EXPANSION:
                reason = f"YAML resource budget: logical expansion exceeds {MAX_EXPANSION} nodes"
                raise _fail(source, reason, node)
        seen.add(id(node))
        stack.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key_node, value in node.value:
                key = str(key_node.value)
                child = f"{path}.{key}" if path else key
                if key in keys and key != "<<":
                    raise _fail(source, f"key {key!r} is written twice in one mapping", key_node)
                keys.add(key)
                lines.setdefault(child, key_node.start_mark.line + 1)
                walk(value, path if key == "<<" else child, depth + 1)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                child = f"{path}[{i}]"
                lines.setdefault(child, item.start_mark.line + 1)
                walk(item, child, depth + 1)
        stack.discard(id(node))

    walk(root, "", 0)
    return lines


def _scalar(node: yaml.Node, key: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if k.value == key:
                return v  # type: ignore[no-any-return]
    return None


def _held(node: yaml.Node) -> str:
    """``Kind/name`` of a composed document, read from its nodes without constructing it."""
    kind, meta = _scalar(node, "kind"), _scalar(node, "metadata")
    name = _scalar(meta, "name") if meta is not None else None
    if not isinstance(node, yaml.MappingNode):
        return "a list" if isinstance(node, yaml.SequenceNode) else "a bare value"
    kind_text = kind.value if isinstance(kind, yaml.ScalarNode) else "?"
    name_text = name.value if isinstance(name, yaml.ScalarNode) else "?"
    return f"{kind_text}/{name_text}"


def _holds_nothing(text: str) -> str:
    if not text.strip():
        return "the file is empty"
    return "no document at all (comments only)"


def _read(text: str, source: str) -> tuple[Any, dict[str, int]]:
    """Compose once (fast), check the budget and record lines, then construct the data."""
    try:
        loader = _Loader(text)
    except yaml.YAMLError as e:  # a pure-Python reader refuses control characters up front
        raise yaml_error(e, source, 1) from None
    try:
        try:
            roots = []
            while loader.check_node():
                node = loader.get_node()
                if node is not None:
                    roots.append(node)
        except yaml.YAMLError as e:
            raise yaml_error(e, source, 1) from None
        if not roots:
            raise InputError(f"holds no Fleet: {_holds_nothing(text)}", Location(file=source))
        if len(roots) != 1:
            held = ", ".join(_held(root) for root in roots)
            raise InputError(
                f"a Fleet file holds exactly one Fleet document, found {len(roots)} ({held})",
                Location(file=source),
            )
        lines = _index(roots[0], source)
        try:
            data = loader.construct_document(roots[0])
        except yaml.YAMLError as e:
            raise yaml_error(e, source, 1) from None
        return data, lines
    finally:
        loader.dispose()


def _message(err: ErrorDetails) -> str:
    kind, loc, value = err["type"], err["loc"], err.get("input")
    if kind in _INT_ERRORS and isinstance(value, float):
        return _WHOLE
    if "operating" in loc and (kind == "missing" or value is None):
        return "explicit operating assumption is required"
    if kind == "extra_forbidden":
        written = str(loc[-1])
        camel = to_camel(written)
        hint = f" (the Fleet spells it {camel})" if camel != written else ""
        return f"field {written} not found in the Fleet schema{hint}"
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
    kind = data.get("kind") if isinstance(data, dict) else None
    obj = f"{kind if isinstance(kind, str) else '?'}/{name if isinstance(name, str) else '?'}"

    def at(path: str, message: str) -> InputError:
        return InputError(
            message, Location(source, doc.number, obj, path or None, _nearest(doc.lines, path))
        )

    if not isinstance(data, dict):
        what = "a list" if isinstance(data, list) else "a bare value"
        raise InputErrors([at("", f"holds {what}, not a Fleet (a mapping with kind Fleet)")])
    if data.get("apiVersion") != API_VERSION or data.get("kind") != "Fleet":
        raise InputErrors(
            [at("kind", f"holds {obj}, not a Fleet (apiVersion {API_VERSION}, kind Fleet)")]
        )
    try:
        # The file speaks camelCase only: a snake_case key (the Python name) is an unknown
        # field, so every error names a field the way the file writes it.
        fleet = Fleet.model_validate(data, by_alias=True, by_name=False)
    except ValidationError as e:
        details = e.errors(include_url=False)
        # A field written in snake_case is both unknown and (in camelCase) missing: say it once,
        # where the file wrote it.
        misspelt = {
            field_path((*err["loc"][:-1], to_camel(str(err["loc"][-1]))))
            for err in details
            if err["type"] == "extra_forbidden"
        }
        errors: dict[str, InputError] = {}
        for err in details:
            path = field_path(tuple(err["loc"]))
            if err["type"] == "missing" and path in misspelt:
                continue
            errors.setdefault(path, at(path, _message(err)))
        raise InputErrors(list(errors.values())) from None
    return LoadedFleet(fleet, source, doc.number, doc.lines)


def load_fleet_text(text: str, source: str = "<text>") -> LoadedFleet:
    """The one Fleet in ``text`` (YAML, or JSON which YAML reads too)."""
    data, lines = _read(text.replace("\t", " ") if text.lstrip().startswith("{") else text, source)
    return validate_document(Document(data, 1, lines.get("", 1), lines), source)
