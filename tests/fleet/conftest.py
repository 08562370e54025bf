"""Fixtures for fleet tests: the shipped fleets, and a mutable copy of a declaration to break."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from typing import Any

import pytest
import yaml

from glimmer.api.fleet_load import load_fleet_text
from glimmer.errors import InputError, InputErrors
from glimmer.fleet.build import build
from glimmer.fleet.load import load_topology
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


@pytest.fixture
def doc() -> Doc:
    """A fresh ai-factory declaration (PCIe, HGX and NVL72 pools) to break."""
    return builtin_doc("ai-factory")


@pytest.fixture
def refused() -> Callable[[Doc], list[InputError]]:
    return errors_of


@pytest.fixture(scope="session")
def reference() -> Topology:
    """specs/fleet.md Appendix C (seed ai-factory-fixture)."""
    return load_topology("ai-factory-fixture")


@pytest.fixture(scope="session")
def factory() -> Topology:
    return load_topology("ai-factory")


@pytest.fixture(scope="session")
def hgx() -> Topology:
    return load_topology("hgx-fixture")
