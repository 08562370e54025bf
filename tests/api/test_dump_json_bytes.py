"""JSON output through pydantic's writer, byte for byte what the pure-Python encoder wrote.

``dump_json`` and the CLI's ``print_json`` write through pydantic (five times as fast on a
1,024-node run) and fall back to ``json.dumps`` wherever the two could differ; every check here
compares with ``json.dumps`` of the same data, the encoder the checked-in files were made with.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from glimmer.api.dump import dump_json, json_text, same_as_json_dumps, to_wire
from glimmer.reports import read_run

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


class Reading(BaseModel):
    name: str
    value: float | None = None
    values: list[float] = Field(default_factory=list)
    labels: dict[str, str] = Field(default_factory=dict)
    note: str | None = Field(default=None, alias="noteText")


class Doc(BaseModel):
    kind: str = "Doc"
    readings: list[Reading] = Field(default_factory=list)
    count: int = 0


def _old(objs: list[BaseModel]) -> str:
    data = [to_wire(o) for o in objs]
    return json.dumps(data[0] if len(data) == 1 else data, indent=2, ensure_ascii=False) + "\n"


FLOATS = [0.0, -0.0, 1.0, 0.1, 1e-05, 2.5e-07, 9.99e-05, 1e-04, 1e-10, 1e16, 1e22, 123.456,
          1.7976931348623157e308, 5e-324, 12345678901234567890.0]  # fmt: skip
TEXTS = ["plain", "é ü 漢字 😀", "tab\tnew\nline", "\x00\x1f\x7f\x80", "quote\" back\\ /",
         "\u2028\u2029\ufeff", "0.00001 in words", ""]  # fmt: skip


def _docs() -> list[Doc]:
    return [
        Doc(),
        Doc(kind="Several", count=3, readings=[Reading(name="a"), Reading(name="b", value=1.5)]),
        Doc(readings=[Reading(name=t, labels={t: t}, noteText=t) for t in TEXTS]),
        Doc(readings=[Reading(name="f", value=x, values=[x, -x]) for x in FLOATS]),
        Doc(readings=[Reading(name="special", values=[math.inf, -math.inf, math.nan])]),
    ]


@pytest.mark.parametrize("doc", _docs(), ids=lambda d: f"{d.kind}-{len(d.readings)}")
def test_one_object_is_written_as_the_python_encoder_wrote_it(doc: Doc) -> None:
    assert dump_json([doc]) == _old([doc])


@pytest.mark.parametrize("count", [0, 2, 5])
def test_several_objects_are_one_array_as_the_python_encoder_wrote_it(count: int) -> None:
    docs = (_docs() * 2)[:count]
    assert dump_json(docs) == _old(docs)


def test_only_the_fields_that_were_set_are_written() -> None:
    doc = Doc.model_validate({"readings": [{"name": "x", "noteText": "set"}]})
    written = json.loads(dump_json([doc]))
    assert written == {"readings": [{"name": "x", "noteText": "set"}]}


def test_a_lone_surrogate_falls_back_to_the_python_encoder() -> None:
    doc = Doc(readings=[Reading(name="\ud800")])
    assert dump_json([doc]) == _old([doc])


@pytest.mark.parametrize("path", sorted(RUNS.glob("*.json")), ids=lambda p: p.name)
def test_every_checked_in_run_dumps_to_its_own_bytes(path: Path) -> None:
    # The fixtures were written by dump_json's pure-Python predecessor.
    run = read_run(str(path))
    assert dump_json([run]) == path.read_text(encoding="utf-8")


DATA: list[Any] = [
    {"valid": True, "nodes": 1024, "name": "hgx-1k", "ratio": 0.25, "none": None},
    [{"metric": "DCGM_FI_DEV_GPU_TEMP", "unit": "°C", "help": "naïve — 😀"}],
    {"tiny": 1e-05, "small": 2.5e-07, "nan": math.nan, "inf": math.inf, "ninf": -math.inf},
    {"empty": [], "also": {}, "tuple": (1, 2), "del": "\x7f", "ctl": "\x01\t"},
    [],
    "just text",
    10**30,
]


@pytest.mark.parametrize("data", DATA, ids=lambda d: type(d).__name__)
def test_plain_data_is_written_as_json_dumps_wrote_it(data: Any) -> None:
    assert json_text(data, ensure_ascii=True) == json.dumps(data, indent=2)
    assert json_text(data, ensure_ascii=False) == json.dumps(data, indent=2, ensure_ascii=False)


@pytest.mark.parametrize(
    ("text", "same"),
    [
        ('{\n  "a": 1.5\n}', True),
        ('{\n  "a": 0.00001\n}', False),
        ('{\n  "a": 2.5e-7\n}', False),
        ('{\n  "a": 2.5e-17\n}', True),
        ('{\n  "a": "é"\n}', True),
    ],
)
def test_a_spelling_only_pydantic_writes_sends_the_text_back_to_json_dumps(
    text: str, same: bool
) -> None:
    assert same_as_json_dumps(text, ensure_ascii=False) is same


def test_text_past_ascii_or_a_del_goes_back_to_json_dumps_when_ascii_is_wanted() -> None:
    assert same_as_json_dumps('"é"', ensure_ascii=True) is False
    assert same_as_json_dumps('"\x7f"', ensure_ascii=True) is False
    assert same_as_json_dumps('"plain"', ensure_ascii=True) is True
