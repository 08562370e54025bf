"""A small block-style YAML writer that keeps comments.

PyYAML drops comments, and every derived gate must carry one saying what it was made of, so
the derived profile is written as text here. Input is plain data (dicts, lists, strings,
numbers, booleans, None); a :class:`Commented` value puts comment lines above a mapping key or
a list item. Strings are written plain only when they read back as the same string, otherwise
double-quoted (JSON's quoting is valid YAML), so a threshold value such as "95.5" stays a
string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

INDENT = 2
_PLAIN = re.compile(r"[A-Za-z0-9_/.][A-Za-z0-9_./ -]*")


@dataclass(frozen=True)
class Commented:
    """A value with comment lines (without the ``#``) written above its key or list item."""

    lines: Sequence[str]
    value: Any


def scalar(value: Any) -> str:
    """One scalar as YAML text."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    if _PLAIN.fullmatch(text) and text == text.strip() and ": " not in text:
        try:
            if yaml.safe_load(text) == text:
                return text
        except yaml.YAMLError:
            pass
    return json.dumps(text, ensure_ascii=False)


def _comments(lines: Sequence[str], pad: str) -> list[str]:
    return [f"{pad}# {line}".rstrip() for line in lines]


def _unwrap(value: Any) -> tuple[Sequence[str], Any]:
    if isinstance(value, Commented):
        return value.lines, value.value
    return (), value


def _is_block(value: Any) -> bool:
    return isinstance(value, dict | list) and bool(value)


def _empty(value: Any) -> str:
    return "{}" if isinstance(value, dict) else "[]"


def _mapping(data: dict[str, Any], depth: int) -> list[str]:
    pad = " " * depth
    out: list[str] = []
    for key, raw in data.items():
        notes, value = _unwrap(raw)
        out += _comments(notes, pad)
        if _is_block(value):
            out.append(f"{pad}{scalar(key)}:")
            inner = depth + INDENT
            out += _mapping(value, inner) if isinstance(value, dict) else _sequence(value, inner)
        elif isinstance(value, dict | list):
            out.append(f"{pad}{scalar(key)}: {_empty(value)}")
        else:
            out.append(f"{pad}{scalar(key)}: {scalar(value)}")
    return out


def _sequence(items: list[Any], depth: int) -> list[str]:
    pad = " " * depth
    out: list[str] = []
    for raw in items:
        notes, value = _unwrap(raw)
        out += _comments(notes, pad)
        if isinstance(value, dict) and value:
            body = _mapping(value, depth + INDENT)
            # The item's first key shares the dash's line; its own comments stay above it.
            first = next(i for i, line in enumerate(body) if not line.lstrip().startswith("#"))
            body[first] = f"{pad}- {body[first][depth + INDENT :]}"
            out += body
        elif isinstance(value, list) and value:
            out.append(f"{pad}-")
            out += _sequence(value, depth + INDENT)
        elif isinstance(value, dict | list):
            out.append(f"{pad}- {_empty(value)}")
        else:
            out.append(f"{pad}- {scalar(value)}")
    return out


def document(data: dict[str, Any], header: Sequence[str] = ()) -> str:
    """One YAML document (starting ``---``) with optional comment lines above it."""
    lines = [*_comments(header, ""), "---", *_mapping(data, 0)]
    return "\n".join(lines) + "\n"
