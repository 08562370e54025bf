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


# A document may not expand (through YAML aliases) to more nodes than this: a "billion laughs"
# stream is a few lines long and would otherwise take forever to walk and to validate.
MAX_NODES = 200_000


class _Indexer:
    """Walks a composed document: records the line of every field path, refuses duplicate keys
    and documents that expand past MAX_NODES."""

    def __init__(self, lines: dict[str, int], source: str, doc: int) -> None:
        self.lines, self.source, self.doc = lines, source, doc
        self.budget = MAX_NODES

    def _where(self, path: str, node: yaml.Node) -> Location:
        return Location(self.source, self.doc, field=path or None, line=node.start_mark.line + 1)

    def walk(self, node: yaml.Node, path: str = "") -> None:
        self.budget -= 1
        if self.budget < 0:
            raise InputError("the document expands to too many nodes", self._where(path, node))
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key_node, value_node in node.value:
                key = str(key_node.value)
                child = join_path(path, key)
                if key in seen:
                    msg = f"key {key!r} is written twice in one mapping"
                    raise InputError(msg, self._where(child, key_node))
                seen.add(key)
                self.lines[child] = key_node.start_mark.line + 1
                self.walk(value_node, child)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                child = join_path(path, i)
                self.lines[child] = item.start_mark.line + 1
                self.walk(item, child)


def _index(node: yaml.Node, lines: dict[str, int], source: str, doc: int) -> None:
    _Indexer(lines, source, doc).walk(node)


def _yaml_error(e: yaml.YAMLError, source: str, doc: int) -> InputError:
    line = None
    if isinstance(e, yaml.MarkedYAMLError):
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else None
        what = " ".join(p for p in (e.context, e.problem) if p)
    elif isinstance(e, yaml.reader.ReaderError):
        what = f"character #x{e.character:04x} at offset {e.position} is not allowed"
    else:
        what = str(e)
    return InputError(f"not valid YAML: {what or 'unreadable'}", Location(source, doc, line=line))


def parse_yaml(text: str, source: str) -> Iterator[Document]:
    """Yield every non-empty document of a YAML stream (numbers count empty ones too)."""
    try:
        loader = _Loader(text)
    except yaml.YAMLError as e:  # the reader refuses control characters up front
        raise _yaml_error(e, source, 1) from None
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
                _index(node, lines, source, number)
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
            _index(node, lines, source, 1)
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
