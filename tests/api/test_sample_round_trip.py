"""Every conformance sample loads unchanged, and dumps back to the same documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.api.dump import dump, to_wire
from glimmer.api.load import load_paths, load_text
from glimmer.api.source import parse_yaml

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "glimmer-samples"
SAMPLE_FILES = sorted(SAMPLES.glob("*.yaml"))


def _raw_documents(path: Path) -> list[Any]:
    return [doc.data for doc in parse_yaml(path.read_text(), str(path))]


def test_the_samples_are_there() -> None:
    assert len(SAMPLE_FILES) >= 16, f"conformance samples missing under {SAMPLES}"


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_sample_loads_and_dumps_back_semantically_equal(path: Path) -> None:
    raw = _raw_documents(path)
    loaded = load_paths([str(path)])
    assert [to_wire(item.obj) for item in loaded] == raw


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_sample_survives_a_yaml_round_trip(path: Path) -> None:
    loaded = load_paths([str(path)])
    again = load_text(dump([item.obj for item in loaded], "yaml"), "dumped.yaml")
    assert [item.obj for item in again] == [item.obj for item in loaded]
    assert list(yaml.safe_load_all(dump([i.obj for i in again]))) == _raw_documents(path)


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_sample_survives_a_json_round_trip(path: Path) -> None:
    loaded = load_paths([str(path)])
    for item in loaded:
        text = dump([item.obj], "json")
        (again,) = load_text(text, "dumped.json", as_json=True)
        assert again.obj == item.obj
        assert json.loads(text) == to_wire(item.obj)


def test_a_comment_only_threshold_list_stays_null() -> None:
    # variant-sweep.yaml writes `thresholds:` followed only by comments: YAML null, which must
    # neither become [] (no gates) nor vanish on the way out.
    loaded = {i.name: i for i in load_paths([str(SAMPLES / "variant-sweep.yaml")])}
    assert to_wire(loaded["thermal-soak"].obj)["spec"]["thresholds"] is None
