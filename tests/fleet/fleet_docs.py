"""Helpers for fleet tests: built-in declarations as mutable data, and building them."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import yaml

from glimmer.api.fleet_load import load_fleet_text
from glimmer.errors import InputError, InputErrors
from glimmer.fleet.build import build
from glimmer.fleet.topology import Topology

Doc = dict[str, Any]


def builtin_doc(name: str) -> Doc:
    """A built-in fleet as plain data; a deep copy without YAML aliases, safe to mutate."""
    text = resources.files("glimmer.data").joinpath("fleets", f"{name}.yaml").read_text()
    return json.loads(json.dumps(yaml.safe_load(text)))


def build_doc(doc: Doc, source: str = "test.yaml") -> Topology:
    loaded = load_fleet_text(yaml.safe_dump(doc, sort_keys=False), source)
    return build(loaded.fleet, loaded.source, loaded.lines)


def errors_of(doc: Doc) -> list[InputError]:
    """Every error the declaration gets (model or build), or [] when it builds."""
    try:
        build_doc(doc)
    except InputErrors as e:
        return e.errors
    except InputError as e:
        return [e]
    return []
