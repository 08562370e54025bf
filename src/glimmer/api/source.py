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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from glimmer.api.json_lines import DuplicateKey, json_lines, unique_keys
from glimmer.errors import InputError, Location

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[valid-type, misc]
    """The safe loader without the timestamp resolver; libyaml's where present (a saved run of
    thousands of results is tens of megabytes)."""


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
    lines: Mapping[str, int] = field(default_factory=dict)


def join_path(parent: str, key: str | int) -> str:
    """Extend a field path by a mapping key or a list index."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key


# A document is walked once per node it is made of, and once more per node it reaches again
# through an alias. The nodes it is made of are bounded by its text (and the text by the byte
# budget of glimmer.api.budget), so a document that legitimately holds 30,000 results loads;
# what aliases add is bounded here: a "billion laughs" stream is a few lines long and would
# otherwise take forever to walk and to validate. Nesting is bounded too, well above any
# glimmer document and well below Python's recursion limit.
MAX_ALIAS_EXPANSION = 65_536
MAX_DEPTH = 128


class _Indexer:
    """Walks a composed document: records the line of every field path, refuses duplicate keys,
    documents nested deeper than MAX_DEPTH and aliases expanding past MAX_ALIAS_EXPANSION."""

    def __init__(self, lines: dict[str, int], source: str, doc: int) -> None:
        self.lines, self.source, self.doc = lines, source, doc
        self.expanded = 0
        self.seen: set[int] = set()

    def _where(self, path: str, node: yaml.Node) -> Location:
        return Location(self.source, self.doc, field=path or None, line=node.start_mark.line + 1)

    def walk(self, node: yaml.Node, path: str = "", depth: int = 0) -> None:
        if depth >= MAX_DEPTH:
            msg = f"the document is nested deeper than {MAX_DEPTH} levels"
            raise InputError(msg, self._where("", node))
        if id(node) in self.seen:
            self.expanded += 1
            if self.expanded > MAX_ALIAS_EXPANSION:
                msg = f"the document's aliases expand to more than {MAX_ALIAS_EXPANSION} nodes"
                raise InputError(msg, self._where(path, node))
        else:
            self.seen.add(id(node))
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
                self.walk(value_node, child, depth + 1)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                child = join_path(path, i)
                self.lines[child] = item.start_mark.line + 1
                self.walk(item, child, depth + 1)


def _index(node: yaml.Node, lines: dict[str, int], source: str, doc: int) -> None:
    _Indexer(lines, source, doc).walk(node)


def yaml_error(e: yaml.YAMLError, source: str, doc: int) -> InputError:
    """One line naming what is wrong with a YAML text and its line (PyYAML's own text spans
    several lines)."""
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
        raise yaml_error(e, source, 1) from None
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
                raise yaml_error(e, source, max(number, 1)) from None
            if data is None:
                continue
            yield Document(data, number, node.start_mark.line + 1, lines)
    finally:
        loader.dispose()


def parse_json(text: str, source: str) -> Iterator[Document]:
    """Yield the one document of a JSON text. Read by the JSON parser (a 150 MB saved run loads
    in about a second); the lines of its fields are found only when an error asks for one."""
    try:
        data = json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg}", Location(source, 1, line=e.lineno)) from None
    except DuplicateKey:
        json_lines(text, source).check_duplicates()
        raise AssertionError("unreachable: the line scan finds the duplicate") from None
    except RecursionError:
        msg = "the document is nested too deeply to read"
        raise InputError(msg, Location(source, 1)) from None
    if data is None:
        return
    yield Document(data, 1, 1, json_lines(text, source))


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
