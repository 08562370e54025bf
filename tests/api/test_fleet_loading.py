# ruff: noqa: E501
"""The Fleet loader's pre-pass (specs/fleet.md §1.2) and its error locations."""

from __future__ import annotations

from importlib import resources

import pytest

from glimmer.api.fleet_load import load_fleet_text
from glimmer.errors import InputError, InputErrors

HGX = resources.files("glimmer.data").joinpath("fleets", "hgx-fixture.yaml").read_text()


def refusals(text: str) -> list[InputError]:
    try:
        load_fleet_text(text, "f.yaml")
    except InputErrors as e:
        return e.errors
    except InputError as e:
        return [e]
    return []


def only(text: str) -> InputError:
    errors = refusals(text)
    assert len(errors) == 1, [str(e) for e in errors]
    return errors[0]


def test_the_hgx_fixture_loads_and_its_name_is_the_seed() -> None:
    loaded = load_fleet_text(HGX, "f.yaml")
    assert loaded.fleet.seed == "hgx-fixture"
    assert loaded.fleet.spec.pools[0].operating.power_limit_w is None


def test_missing_operating_assumption_is_refused_by_name() -> None:
    e = only(HGX.replace("        ambientTempC: 25\n", ""))
    assert e.message == "explicit operating assumption is required"
    assert e.location.field == "spec.pools[0].operating.ambientTempC"
    assert e.location.obj == "Fleet/hgx-fixture"


def test_null_operating_assumption_is_refused() -> None:
    e = only(HGX.replace("ambientTempC: 25", "ambientTempC: null"))
    assert e.message == "explicit operating assumption is required"
    assert e.location.line == HGX.splitlines().index("        ambientTempC: 25") + 1


def test_fractional_integer_is_refused_as_not_whole() -> None:
    e = only(HGX.replace("nodeCount: 1\n", "nodeCount: 1.5\n"))
    assert e.message == "must be a finite whole integer, not fractional ownership/capacity"
    assert e.location.field == "spec.pools[0].nodeCount"


@pytest.mark.parametrize("value", ["4.5", ".nan", ".inf"])
def test_non_whole_gpu_counts_are_refused(value: str) -> None:
    e = only(HGX.replace("gpusPerNode: 8", f"gpusPerNode: {value}"))
    assert "must be a finite whole integer" in e.message
    assert e.location.field == "spec.pools[0].gpusPerNode"


def test_whole_float_is_an_integer() -> None:
    loaded = load_fleet_text(HGX.replace("gpusPerNode: 8", "gpusPerNode: 8.0"))
    assert loaded.fleet.spec.pools[0].gpus_per_node == 8


def test_unknown_field_is_refused_by_name() -> None:
    e = only(HGX.replace("      shape: hgx\n", "      shape: hgx\n      turbo: true\n"))
    assert e.message.startswith("field turbo not found")
    assert e.location.field == "spec.pools[0].turbo"


def test_merged_fraction_is_refused_but_an_explicit_key_beats_it() -> None:
    pool = HGX.replace("      nodeCount: 1\n", "      <<: {nodeCount: 1.5}\n")
    assert "whole integer" in only(pool).message
    pool = HGX.replace("      nodeCount: 1\n", "      <<: {nodeCount: 1.5}\n      nodeCount: 1\n")
    assert refusals(pool) == []


def test_fraction_inside_a_merge_of_the_whole_document_is_refused() -> None:
    body = HGX.split("\napiVersion", 1)[1].replace("  nodeCount: 1\n", "  nodeCount: 1.5\n")
    text = "<<: &doc\n" + "".join(f"  {line}\n" for line in ("apiVersion" + body).splitlines())
    e = only(text)
    assert "whole integer" in e.message
    assert e.location.field == "spec.pools[0].nodeCount"


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("      nodes:\n        - {ordinal: 0, nvlink",
         "      nodes:\n        - {ordinal: 0, nvlink", "nvlink"),
    ],
)  # fmt: skip
def test_hgx_fields_are_accepted_on_hgx(old: str, new: str, field: str) -> None:
    assert refusals(HGX.replace(old, new)) == []


def test_hgx_only_fields_are_refused_on_other_shapes_even_null() -> None:
    pcie = HGX.replace(
        "shape: hgx\n      gpuModel: h100_sxm_80gb", "shape: pcie\n      gpuModel: h100_pcie_80gb"
    )
    nulls = pcie.replace(
        "nvlink: {profile: dgxh100_hgxh100-595.91.07, domain: baseboard, correlated: true}",
        "nvlink: null",
    )
    e = [x for x in refusals(nulls) if "only for hgx" in x.message]
    assert e and e[0].message == "field nvlink is supported only for hgx shape"
    assert e[0].location.field == "spec.pools[0]"
    module = pcie.replace("slot: 0, usableMemory", "slot: 0, hgxModuleId: null, usableMemory")
    module = module.replace(
        "        - {ordinal: 0, nvlink: {profile: dgxh100_hgxh100-595.91.07, domain: baseboard, correlated: true}}\n",
        "        - {ordinal: 0}\n",
    )
    assert any(
        x.message == "field hgxModuleId is supported only for hgx shape" for x in refusals(module)
    )


def test_alias_bomb_is_refused_within_budget() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 9)]  # fmt: skip
    e = only("\n".join(lines) + "\n")
    assert e.message == "YAML resource budget: logical expansion exceeds 65536 nodes"


def test_runaway_nesting_is_refused() -> None:
    e = only("a: " + "[" * 130 + "]" * 130 + "\n")
    assert e.message == "YAML resource budget: depth exceeds 128 levels"


def test_recursive_alias_is_refused() -> None:
    assert only("a: &a [1, *a]\n").message == "recursive YAML alias/merge"


def test_other_kinds_and_several_documents_are_refused() -> None:
    assert (
        "holds Test/hgx-fixture, not a Fleet"
        in only(HGX.replace("kind: Fleet", "kind: Test")).message
    )
    assert "exactly one Fleet" in only(HGX + "---\n" + HGX).message


def test_every_field_error_is_reported_at_once() -> None:
    text = HGX.replace("cpus: 224", "cpus: 0").replace("ambientTempC: 25", "ambientTempC: null")
    fields = {e.location.field for e in refusals(text)}
    assert {"spec.pools[0].hardware", "spec.pools[0].operating.ambientTempC"} <= fields


def test_a_fleet_that_is_not_valid_yaml_is_refused_on_one_line() -> None:
    with pytest.raises(InputError) as caught:
        load_fleet_text("spec:\n  racks: [\n", "f.yaml")
    assert "\n" not in str(caught.value) and "not valid YAML" in caught.value.message
    with pytest.raises(InputError) as caught:
        load_fleet_text("\x00", "f.yaml")
    assert "\n" not in str(caught.value)
