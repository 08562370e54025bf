"""The line of every field of a JSON text, found by a token scan only when an error needs one.

JSON is read by the JSON parser, which keeps no positions. Errors still point at a line: the
first time a line is asked for, one pass over the text's tokens (strings, brackets, commas,
colons and bare scalars) records the line of every field path, the way the YAML reader does
for YAML. A run that loads cleanly never pays for the pass.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterator, Mapping
from typing import Any

from glimmer.errors import InputError, Location

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^\s{}\[\],:"]+')


class DuplicateKey(Exception):
    """A JSON object wrote one key twice (the line scan then says where)."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` of the JSON parser: a key written twice is refused, as in YAML,
    rather than the last one silently winning."""
    out = dict(pairs)
    if len(out) != len(pairs):
        raise DuplicateKey
    return out


def _join(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key


def _key(token: str) -> str:
    return token[1:-1] if "\\" not in token else str(json.loads(token))


class JsonLines(Mapping[str, int]):
    """Field path -> 1-based line of a JSON text, computed on first use."""

    def __init__(self, text: str, source: str) -> None:
        self._text, self._source = text, source
        self._lines: dict[str, int] | None = None

    def _scan(self, refuse_duplicates: bool = False) -> dict[str, int]:
        text = self._text
        breaks = [m.start() for m in re.finditer("\n", text)]
        lines: dict[str, int] = {}
        # One frame per open container: its path, and for an object the keys seen and whether
        # the next string is a key; for an array the index of the next element.
        stack: list[list[Any]] = []
        first = True
        for m in _TOKEN.finditer(text):
            token = m.group()
            if first:
                lines[""] = bisect_right(breaks, m.start()) + 1
                first = False
            top = stack[-1] if stack else None
            if token in ("}", "]"):
                if stack:
                    stack.pop()
                continue
            if token == ",":
                if top is not None:
                    if top[1] == "obj":
                        top[3] = True
                    else:
                        top[2] += 1
                continue
            if token == ":":
                continue
            path = ""
            if top is not None:
                if top[1] == "obj":
                    if top[3]:  # a key
                        key = _key(token)
                        path = _join(top[0], key)
                        line = bisect_right(breaks, m.start()) + 1
                        if refuse_duplicates and key in top[2]:
                            msg = f"key {key!r} is written twice in one mapping"
                            raise InputError(msg, Location(self._source, 1, None, path, line))
                        top[2].add(key)
                        lines[path] = line
                        top[3] = False
                        top[4] = path
                        continue
                    path = top[4]
                else:
                    path = _join(top[0], top[2])
                    lines[path] = bisect_right(breaks, m.start()) + 1
            if token == "{":
                stack.append([path, "obj", set(), True, ""])
            elif token == "[":
                stack.append([path, "arr", 0])
        return lines

    def check_duplicates(self) -> None:
        """Raise the InputError naming the first key written twice in one object, if any."""
        self._scan(refuse_duplicates=True)

    @property
    def _all(self) -> dict[str, int]:
        if self._lines is None:
            self._lines = self._scan()
        return self._lines

    def __getitem__(self, path: str) -> int:
        if path == "" and self._lines is None:  # the document's own line needs no scan
            stripped = len(self._text) - len(self._text.lstrip())
            return self._text.count("\n", 0, stripped) + 1
        return self._all[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all)

    def __len__(self) -> int:
        return len(self._all)


def json_lines(text: str, source: str) -> JsonLines:
    """The lazily computed field lines of a JSON text."""
    return JsonLines(text, source)
