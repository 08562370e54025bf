"""Writing resources back out as YAML or JSON, losing nothing and inventing nothing.

Only fields that were set (by the input or by code) are written, so a default the user never wrote
does not appear on output, and loading the output gives the same object again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, Literal

import yaml
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json

Format = Literal["yaml", "json"]


def to_wire(obj: BaseModel) -> dict[str, Any]:
    """The object as plain data with wire (camelCase) names, only the fields that were set."""
    data: dict[str, Any] = obj.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return data


class _Dumper(yaml.SafeDumper):
    """Block style everywhere; long strings stay on one line."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # Multi-line text (messages, plans) reads better as a literal block.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump_yaml(objs: Iterable[BaseModel]) -> str:
    """A multi-document YAML stream of the objects, in order."""
    return yaml.dump_all(
        (to_wire(o) for o in objs),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100_000,
        explicit_start=True,
    )


# Where pydantic's JSON writer spells a float differently from Python's repr (what json.dumps
# writes, and what every checked-in file holds): 1e-05 as 0.00001, 2.5e-07 as 2.5e-7. Anything
# else (key order, indentation, escapes, non-ASCII text, NaN and Infinity in "constants" mode)
# it writes byte for byte the same, several times as fast. A text where such a spelling may
# appear (inside a string too) is written again the pure-Python way, so the bytes never change.
# (Two patterns searched in turn: one alternation of them scans ten times slower.)
_PYDANTIC_SPELLINGS = (re.compile(r"e-\d(?!\d)"), re.compile(r"0\.0000[1-9]"))


def same_as_json_dumps(text: str, *, ensure_ascii: bool) -> bool:
    """Whether pydantic's ``text`` (indent 2, non-ASCII as is) is what ``json.dumps`` would
    have written, as far as its spelling shows; False means write it again with json.dumps."""
    if any(spelling.search(text) for spelling in _PYDANTIC_SPELLINGS):
        return False
    # json.dumps escapes DEL as well as everything past ASCII; pydantic leaves DEL as it is.
    return not ensure_ascii or (text.isascii() and "\x7f" not in text)


def json_text(data: Any, *, ensure_ascii: bool) -> str:
    """Plain data (dicts, lists, numbers, text) exactly as ``json.dumps(data, indent=2,
    ensure_ascii=...)`` writes it, through pydantic's writer wherever the bytes are the same."""
    try:
        # "constants": NaN and Infinity as json.dumps spells them, not pydantic's null.
        text: str | None = to_json(data, indent=2, inf_nan_mode="constants").decode()
    except PydanticSerializationError:  # what json.dumps can still write: a lone surrogate
        text = None
    if text is not None and same_as_json_dumps(text, ensure_ascii=ensure_ascii):
        return text
    return json.dumps(data, indent=2, ensure_ascii=ensure_ascii)


def dump_json(objs: Iterable[BaseModel]) -> str:
    """One object as a JSON document, several as a JSON array (indent 2, keys in field order,
    non-ASCII kept, a trailing newline)."""
    # The wire data first, then pydantic's writer over it rather than model_dump_json: that
    # would write NaN as null and fields unset in nested models by their defaults.
    data = [to_wire(o) for o in objs]
    return json_text(data[0] if len(data) == 1 else data, ensure_ascii=False) + "\n"


def dump(objs: Iterable[BaseModel], fmt: Format = "yaml") -> str:
    """The objects as YAML (multi-document) or JSON."""
    return dump_json(objs) if fmt == "json" else dump_yaml(objs)
