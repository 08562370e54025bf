"""Reading a YAML or JSON text into documents, remembering the line of every field.

Each document comes with a map from field path (``spec.thresholds[0].value``) to the 1-based line
where that field is written, built from the composed YAML node tree, so that any later error can
point at the line.

Two choices follow the way Kubernetes reads YAML: an unquoted timestamp stays a string (the model
decides whether a field is a time), and a key written twice in one mapping is an error rather than
"the last one wins".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from glimmer.errors import InputError, Location


class _Loader(yaml.SafeLoader):
    """SafeLoader without the timestamp resolver."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass(frozen=True)
class Document:
    """One document of a file: its data, 1-based number, first line and field lines."""

    data: Any
    number: int
    line: int
    lines: dict[str, int] = field(default_factory=dict)


def join_path(parent: str, key: str | int) -> str:
    """Extend a field path by a mapping key or a list index."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key


def _index(node: yaml.Node, path: str, lines: dict[str, int], source: str, doc: int) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = str(key_node.value)
            child = join_path(path, key)
            if key in seen:
                raise InputError(
                    f"key {key!r} is written twice in one mapping",
                    Location(
                        file=source, document=doc, field=child, line=key_node.start_mark.line + 1
                    ),
                )
            seen.add(key)
            lines[child] = key_node.start_mark.line + 1
            _index(value_node, child, lines, source, doc)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            child = join_path(path, i)
            lines[child] = item.start_mark.line + 1
            _index(item, child, lines, source, doc)


def _yaml_error(e: yaml.YAMLError, source: str, doc: int) -> InputError:
    line = None
    if isinstance(e, yaml.MarkedYAMLError):
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else None
        what = " ".join(p for p in (e.context, e.problem) if p)
    else:
        what = str(e)
    return InputError(f"not valid YAML: {what or 'unreadable'}", Location(source, doc, line=line))


def parse_yaml(text: str, source: str) -> Iterator[Document]:
    """Yield every non-empty document of a YAML stream (numbers count empty ones too)."""
    loader = _Loader(text)
    number = 0
    try:
        while True:
            try:
                if not loader.check_node():
                    break
                number += 1
                node = loader.get_node()
                if node is None:
                    continue
                lines: dict[str, int] = {"": node.start_mark.line + 1}
                _index(node, "", lines, source, number)
                data = loader.construct_document(node)
            except yaml.YAMLError as e:
                raise _yaml_error(e, source, max(number, 1)) from None
            if data is None:
                continue
            yield Document(data, number, node.start_mark.line + 1, lines)
    finally:
        loader.dispose()


def parse_json(text: str, source: str) -> Iterator[Document]:
    """Yield the one document of a JSON text, with field lines where they can be found."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg}", Location(source, 1, line=e.lineno)) from None
    if data is None:
        return
    lines: dict[str, int] = {"": 1}
    try:
        # Valid JSON is YAML once its whitespace tabs are spaces (a tab inside a JSON string is
        # always escaped), so the YAML composer can tell us the lines.
        node = yaml.compose(text.replace("\t", " "), Loader=_Loader)
        if node is not None:
            _index(node, "", lines, source, 1)
    except yaml.YAMLError:
        pass  # lines are a courtesy; the data above is already right
    yield Document(data, 1, 1, lines)


def looks_like_json(text: str) -> bool:
    """Sniff stdin: a text whose first non-blank character opens a JSON object or array."""
    return text.lstrip()[:1] in ("{", "[")


def parse(text: str, source: str, *, as_json: bool | None = None) -> Iterator[Document]:
    """Documents of a YAML or JSON text; ``as_json=None`` sniffs the text.

    A sniffed text that is not valid JSON is read as YAML (``{a: 1}`` is a YAML flow mapping).
    """
    if as_json is None:
        as_json = looks_like_json(text) and _is_json(text)
    return parse_json(text, source) if as_json else parse_yaml(text, source)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True
