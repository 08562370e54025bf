"""The line scan of a JSON text agrees with the YAML composer on every field path's line."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.api.json_lines import json_lines
from glimmer.api.source import _index, parse_json
from glimmer.errors import InputError

# Keys stay in the Basic Multilingual Plane: the YAML oracle misreads escaped surrogate pairs.
_keys = st.text(
    alphabet=st.characters(max_codepoint=0xFFFF, exclude_categories=("Cs",)), max_size=6
)
_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
_documents = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=25,
)


def _yaml_lines(text: str) -> dict[str, int]:
    lines: dict[str, int] = {}
    node = yaml.compose(text.replace("\t", " "), Loader=yaml.SafeLoader)
    if node is not None:
        lines[""] = node.start_mark.line + 1
        _index(node, lines, "t.json", 1)
    return lines


@settings(max_examples=150, deadline=None)
@given(doc=st.dictionaries(_keys, _documents, max_size=5), indent=st.sampled_from([None, 0, 2]))
def test_json_field_lines_match_the_yaml_composer(doc: dict[str, Any], indent: int | None) -> None:
    text = json.dumps(doc, indent=indent)  # escaped: the YAML oracle reads no control bytes
    assert dict(json_lines(text, "t.json")) == _yaml_lines(text)


def test_a_key_written_twice_in_json_is_refused_at_its_line() -> None:
    text = '{"a": 1,\n "spec": {"x": 1,\n  "x": 2}}'
    with pytest.raises(InputError) as caught:
        list(parse_json(text, "t.json"))
    where = caught.value.location
    assert (where.field, where.line) == ("spec.x", 3)
    assert caught.value.message == "key 'x' is written twice in one mapping"


def test_json_nested_past_the_parser_s_depth_is_bad_input() -> None:
    with pytest.raises(InputError) as caught:
        list(parse_json("[" * 100_000 + "]" * 100_000, "t.json"))
    assert caught.value.message == "the document is nested too deeply to read"


def test_the_lines_of_a_json_document_are_not_scanned_until_asked_for() -> None:
    lines = json_lines('\n\n{"a": 1}', "t.json")
    assert lines[""] == 3  # the document's own line needs no scan
    assert lines._lines is None
    assert lines["a"] == 3 and lines._lines is not None
