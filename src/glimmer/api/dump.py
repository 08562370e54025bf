"""Writing resources back out as YAML or JSON, losing nothing and inventing nothing.

Only fields that were set (by the input or by code) are written, so a default the user never wrote
does not appear on output, and loading the output gives the same object again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

import yaml
from pydantic import BaseModel

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


def dump_json(objs: Iterable[BaseModel]) -> str:
    """One object as a JSON document, several as a JSON array."""
    data = [to_wire(o) for o in objs]
    return json.dumps(data[0] if len(data) == 1 else data, indent=2, ensure_ascii=False) + "\n"


def dump(objs: Iterable[BaseModel], fmt: Format = "yaml") -> str:
    """The objects as YAML (multi-document) or JSON."""
    return dump_json(objs) if fmt == "json" else dump_yaml(objs)
