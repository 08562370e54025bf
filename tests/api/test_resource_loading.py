"""Loading from texts, files, folders and stdin; every error names file, document, object,
field and line."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glimmer.api.load import collect_paths, collect_text, load_paths, load_text, of_kind
from glimmer.api.source import parse_yaml
from glimmer.api.test import BurnInTest
from glimmer.errors import InputError, InputErrors

KEYS = ["kind", "scope", "thresholds", "runner", "hostPaths", "soak", "metric", "value", "env"]

TEST = """\
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInTest
metadata:
  name: {name}
spec:
  kind: gpu-burn
  thresholds:
  - metric: miscompares
    comparison: Equal
    value: "{value}"
"""


def _errors(text: str, source: str = "t.yaml") -> list[InputError]:
    with pytest.raises(InputErrors) as caught:
        load_text(text, source)
    return caught.value.errors


def test_every_document_becomes_a_typed_object_with_its_origin() -> None:
    text = TEST.format(name="a", value="0") + "---\n" + TEST.format(name="b", value="1")
    loaded = load_text(text, "two.yaml")
    assert [(i.ref, i.source, i.document) for i in loaded] == [
        ("BurnInTest/a", "two.yaml", 1),
        ("BurnInTest/b", "two.yaml", 2),
    ]
    assert isinstance(loaded[0].obj, BurnInTest)


def test_empty_documents_are_skipped_but_still_counted() -> None:
    text = "---\n# only a comment\n---\n" + TEST.format(name="a", value="0") + "---\n"
    (only,) = load_text(text)
    assert only.document == 2


def test_an_error_names_file_document_object_field_and_line() -> None:
    text = TEST.format(name="a", value="0") + "---\n" + TEST.format(name="b", value="NaN")
    (error,) = _errors(text, "lab/gates.yaml")
    where = error.location
    assert (where.file, where.document, where.obj) == ("lab/gates.yaml", 2, "BurnInTest/b")
    assert where.field == "spec.thresholds[0].value"
    assert where.line == 11 + 10  # the second document starts on line 12
    assert str(error).startswith("lab/gates.yaml:21, document 2, BurnInTest/b, field spec.")


def test_a_missing_field_points_at_the_line_of_its_parent() -> None:
    text = "apiVersion: burnin.glimmer.ai/v1alpha1\nkind: BurnInRun\nmetadata:\n  name: r\n"
    text += "spec:\n  target:\n    nodeNames: [a]\n"
    (error,) = _errors(text)
    assert (error.location.field, error.location.line) == ("spec.profileRef", 5)


def test_the_line_of_a_field_is_available_to_later_layers() -> None:
    (item,) = load_text(TEST.format(name="a", value="0"))
    assert item.line_of("spec.thresholds[0].value") == 10
    assert item.line_of("spec.thresholds[0].notThere") == 8
    assert item.locate("spec.kind").line == 6


def test_all_errors_of_all_files_are_gathered(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(TEST.format(name="a", value="inf"))
    (tmp_path / "b.yaml").write_text("kind: [\n")
    (tmp_path / "c.yaml").write_text(TEST.format(name="c", value="3"))
    loaded, errors = collect_paths([str(tmp_path)])
    assert [i.name for i in loaded] == ["c"]
    assert [Path(e.location.file or "").name for e in errors] == ["a.yaml", "b.yaml"]


def test_folders_are_read_recursively_in_sorted_order_and_only_yaml_or_json(
    tmp_path: Path,
) -> None:
    (tmp_path / "z").mkdir()
    (tmp_path / "z" / "b.yml").write_text(TEST.format(name="b", value="0"))
    (tmp_path / "a.yaml").write_text(TEST.format(name="a", value="0"))
    (tmp_path / "c.json").write_text(
        '{"apiVersion": "burnin.glimmer.ai/v1alpha1", "kind": "BurnInTest",'
        ' "metadata": {"name": "c"}, "spec": {"kind": "nccl"}}'
    )
    (tmp_path / "notes.txt").write_text("not a resource")
    assert [i.name for i in load_paths([str(tmp_path)])] == ["a", "c", "b"]


def test_stdin_is_read_for_a_dash() -> None:
    (item,) = load_paths(["-"], stdin=io.StringIO(TEST.format(name="piped", value="0")))
    assert (item.source, item.name) == ("<stdin>", "piped")


def test_json_on_stdin_is_recognised_and_gets_lines() -> None:
    text = '{\n\t"apiVersion": "burnin.glimmer.ai/v1alpha1",\n\t"kind": "BurnInTest",\n'
    text += '\t"metadata": {"name": "j"},\n\t"spec": {"kind": 7}\n}\n'
    (error,) = _errors(text, "<stdin>")
    assert (error.location.field, error.location.line) == ("spec.kind", 5)


def test_a_missing_path_is_an_input_error() -> None:
    loaded, errors = collect_paths(["/nonexistent/burnin.yaml"])
    assert not loaded and "no such file" in str(errors[0])


def test_an_unquoted_timestamp_stays_text_like_kubernetes_reads_it() -> None:
    stamp = "  annotations:\n    burnin.glimmer.ai/scheduled-at: 2026-08-20T03:00:00Z\n"
    text = TEST.format(name="a", value="0").replace("  name: a\n", "  name: a\n" + stamp)
    (item,) = load_text(text)
    assert isinstance(item.obj, BurnInTest)
    annotations = item.obj.metadata.annotations or {}
    assert annotations["burnin.glimmer.ai/scheduled-at"] == "2026-08-20T03:00:00Z"


def test_a_key_written_twice_is_refused_not_silently_overwritten() -> None:
    (error,) = _errors(TEST.format(name="a", value="0") + "kind: BurnInRun\n")
    assert (error.location.field, error.location.line) == ("kind", 11)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "unknown apiVersion 'v1'"),
        (
            "apiVersion: burnin.glimmer.ai/v1alpha1\nkind: Fleet\nmetadata: {name: x}\n",
            "known: BurnInProfile, BurnInRun",
        ),
        ("- a\n- b\n", "not a list"),
        ("key: [unclosed\n", "not valid YAML"),
    ],
)
def test_documents_that_are_not_burnin_resources_give_one_clear_error(
    text: str, needle: str
) -> None:
    (error,) = _errors(text)
    assert needle in str(error)


def test_objects_of_one_kind_can_be_picked_with_their_origin() -> None:
    text = TEST.format(name="a", value="0") + "---\n"
    text += "apiVersion: burnin.glimmer.ai/v1alpha1\nkind: BurnInSink\nmetadata: {name: s}\n"
    text += "spec: {type: Prometheus}\n"
    picked = of_kind(load_text(text), BurnInTest)
    assert [(obj.spec.kind, item.document) for obj, item in picked] == [("gpu-burn", 1)]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.text())
def test_loading_arbitrary_text_never_raises(text: str) -> None:
    _, errors = collect_text(text, "fuzz.yaml")
    assert all(isinstance(e, InputError) for e in errors)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(st.sampled_from(KEYS), children, max_size=4)
        ),
        max_leaves=12,
    )
)
def test_any_shape_under_spec_gives_input_errors_not_crashes(spec: object) -> None:
    doc = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInTest",
        "metadata": {"name": "fuzz"},
        "spec": spec,
    }
    loaded, errors = collect_text(json.dumps(doc, allow_nan=True), "fuzz.json", as_json=True)
    assert len(loaded) + (1 if errors else 0) == 1


def test_a_yaml_alias_bomb_is_refused_quickly() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    (error,) = _errors("\n".join(lines) + "\n")
    assert "aliases expand to more than 65536 nodes" in str(error)


def test_deeply_nested_input_is_an_input_error() -> None:
    _, errors = collect_text("[" * 5000 + "]" * 5000, "deep.json", as_json=True)
    assert len(errors) == 1


def test_yaml_nested_deeper_than_any_glimmer_document_is_refused_by_depth() -> None:
    (error,) = _errors("a: " + "[" * 200 + "]" * 200 + "\n")
    assert error.message == "the document is nested deeper than 128 levels"
    assert error.location.line == 1


def test_aliases_within_the_budget_still_load() -> None:
    # Legitimate reuse (one anchored block referenced a few times) is not a bomb.
    text = (
        "apiVersion: burnin.glimmer.ai/v1alpha1\nkind: BurnInProfile\nmetadata: {name: p}\n"
        "spec:\n  tests:\n    - &t {testRef: host-fault-counters}\n    - *t\n"
    )
    (loaded,) = load_text(text, "p.yaml")
    assert loaded.kind == "BurnInProfile"


def test_a_document_without_aliases_is_never_refused_for_its_size() -> None:
    results = 29_000
    # The walk budget is what aliases add, not what the text holds: any number of plain
    # entries loads (the old flat budget of 200,000 nodes refused these 29,000 entries of 7).
    items = "".join(f"    - {{name: r{i}, nodes: [n{i}], metrics: {{a: '1', b: '2'}}}}\n"
                    for i in range(results))  # fmt: skip
    text = "a:\n  list:\n" + items
    docs = list(parse_yaml(text, "big.yaml"))
    assert len(docs[0].data["a"]["list"]) == results
