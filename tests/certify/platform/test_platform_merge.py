"""Override merge semantics (specs/certify.md §5.4): examples and properties."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from glimmer.certify.platform import PlatformError
from glimmer.certify.platform.fill import fill
from glimmer.certify.platform.merge import (
    apply_dependency_patches,
    json_patch,
    merge_dependency,
    strategic_merge,
)
from glimmer.certify.platform.overrides import apply_overrides
from glimmer.certify.platform.when import MatchContext, matches_when

Obj = dict[str, Any]

_scalars = st.one_of(st.integers(-3, 3), st.text("ab", max_size=2), st.booleans())
_keys = st.sampled_from(["a", "b", "c", "name", "env", "args"])
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=3)),
    max_leaves=10,
)
_docs = st.dictionaries(_keys, _values, max_size=4)


@given(_docs)
def test_an_empty_patch_changes_nothing(doc: Obj) -> None:
    assert strategic_merge(doc, {}) == doc
    assert merge_dependency(doc, {}) == doc


@given(_docs, _docs)
def test_applying_the_same_patch_twice_equals_applying_it_once(doc: Obj, patch: Obj) -> None:
    once = merge_dependency(doc, patch)
    assert merge_dependency(once, patch) == once
    smp = strategic_merge(doc, patch)
    assert strategic_merge(smp, patch) == smp


@given(_docs, _docs)
def test_every_scalar_the_patch_sets_at_the_top_wins(doc: Obj, patch: Obj) -> None:
    for merged in (strategic_merge(doc, patch), merge_dependency(doc, patch)):
        for key, value in patch.items():
            if not isinstance(value, dict | list):
                assert merged[key] == value


@given(_docs, _docs)
def test_merging_never_changes_its_inputs(doc: Obj, patch: Obj) -> None:
    import copy

    before, pbefore = copy.deepcopy(doc), copy.deepcopy(patch)
    strategic_merge(doc, patch)
    merge_dependency(doc, patch)
    assert (doc, patch) == (before, pbefore)


def test_null_deletes_a_field() -> None:
    assert strategic_merge({"a": 1, "b": 2}, {"a": None}) == {"b": 2}
    assert merge_dependency({"a": {"x": 1}}, {"a": None}) == {}


def test_strategic_merge_merges_corev1_env_by_name() -> None:
    base = {"containers": [{"name": "node", "env": [{"name": "A", "value": "1"}]}]}
    patch = {"containers": [{"name": "node", "env": [{"name": "B", "value": "2"}]}]}
    assert strategic_merge(base, patch)["containers"][0]["env"] == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "2"},
    ]


def test_strategic_merge_replaces_trainer_args_and_trainer_env_wholesale() -> None:
    base = {"trainer": {"args": ["a", "b"], "env": [{"name": "A", "value": "1"}]}}
    patch = {"trainer": {"args": ["c"], "env": [{"name": "B", "value": "2"}]}}
    assert strategic_merge(base, patch) == patch


def test_dependency_lists_of_named_objects_merge_by_name_keeping_base_order() -> None:
    base = {"items": [{"name": "a", "x": 1}, {"name": "b", "x": 2}]}
    patch = {"items": [{"name": "b", "y": 3}, {"name": "c"}]}
    assert merge_dependency(base, patch)["items"] == [
        {"name": "a", "x": 1},
        {"name": "b", "x": 2, "y": 3},
        {"name": "c"},
    ]


def test_dependency_lists_without_names_are_replaced() -> None:
    assert merge_dependency({"args": ["a"]}, {"args": ["b"]}) == {"args": ["b"]}


def test_a_dependency_patch_merges_by_identity_or_is_appended() -> None:
    dep = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
    same = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"b": "2"}}
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}}
    out = apply_dependency_patches([dep], [same, other])
    assert out[0]["data"] == {"a": "1", "b": "2"}
    assert out[1] == other


def test_json_patch_applies_after_the_merge_and_appends_with_dash() -> None:
    doc = {"spec": {"args": ["a"]}}
    ops = [{"op": "add", "path": "/spec/args/-", "value": "b"}]
    assert json_patch(doc, ops) == {"spec": {"args": ["a", "b"]}}
    with pytest.raises(PlatformError, match="no such location"):
        json_patch(doc, [{"op": "replace", "path": "/spec/none", "value": 1}])


def test_every_matching_override_applies_in_list_order_later_wins() -> None:
    spec = {"jobTemplate": {"spec": {"x": 0}}}
    overrides = [
        {"when": {"platform": {"equals": "aws"}}, "jobTemplate": {"spec": {"x": 1}}},
        {"when": {"platform": {"equals": "gcp"}}, "jobTemplate": {"spec": {"x": 2}}},
        {"when": {}, "jobTemplate": {"spec": {"x": 3}}},
        {"when": {"gpuArchitecture": {"in": ["h100"]}}, "jobTemplate": {"spec": {"x": 3}}},
    ]
    out, applied = apply_overrides(spec, overrides, MatchContext("aws", "h100"))
    assert out["jobTemplate"]["spec"]["x"] == 3
    assert [a.index for a in applied] == [0, 2, 3]
    assert [a.no_op for a in applied] == [False, False, True]
    assert applied[0].when == "platform=aws"


def test_orchestration_parts_replace_the_base_value() -> None:
    spec = {"orchestration": {"topology": {"topologyKey": "a", "strictDomain": True}}}
    out, _ = apply_overrides(
        spec, [{"orchestration": {"topology": {"topologyKey": "b"}}}], MatchContext()
    )
    assert out["orchestration"]["topology"] == {"topologyKey": "b"}


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        ({}, True),
        ({"platform": {"in": ["aws", "gcp"]}}, True),
        ({"platform": {"notIn": ["aws"]}}, False),
        ({"gpuArchitecture": {"equals": "h100"}, "platform": {"equals": "oci"}}, False),
        ({"topology": {"mode": "topology"}}, False),
        ({"topology": {"domainCount": {"greaterThan": 0, "lessThan": 2}}}, True),
        ({"config": {"a": {"b": 1}}}, True),
        ({"config": {"a": {"b": 2}}}, False),
        ({"workloadKind": "TrainJob"}, True),
    ],
)
def test_when_matches_only_when_every_criterion_matches(when: Obj, expected: bool) -> None:
    ctx = MatchContext("aws", "h100", config={"a": {"b": 1, "c": 2}})
    assert matches_when(when, ctx) is expected


def test_when_expression_is_refused_rather_than_ignored() -> None:
    with pytest.raises(PlatformError, match="CEL"):
        matches_when({"expression": "true"}, MatchContext())


def test_fill_keeps_the_type_of_a_whole_placeholder_and_refuses_unknown_names() -> None:
    assert fill({"n": "${n}", "s": "x-${n}", "t": "${n|str}"}, {"n": 8}) == {
        "n": 8,
        "s": "x-8",
        "t": "8",
    }
    with pytest.raises(PlatformError, match=r"\$\{nope\}"):
        fill(["${nope}"], {})


_named = st.lists(
    st.fixed_dictionaries({"name": st.sampled_from("abcd"), "v": st.integers(0, 3)}),
    max_size=4,
    unique_by=lambda d: d["name"],
)


@given(_named, _named)
def test_keyed_lists_keep_every_base_name_in_order_and_append_new_names(
    base: list[Obj], patch: list[Obj]
) -> None:
    for merged in (
        strategic_merge({"containers": base}, {"containers": patch})["containers"],
        merge_dependency({"items": base}, {"items": patch})["items"] if base and patch else None,
    ):
        if merged is None:
            continue
        names = [d["name"] for d in merged]
        base_names = [d["name"] for d in base]
        assert names[: len(base_names)] == base_names
        assert set(names) == set(base_names) | {d["name"] for d in patch}
        by_name = {d["name"]: d for d in merged}
        assert all(by_name[d["name"]]["v"] == d["v"] for d in patch)
