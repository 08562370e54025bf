"""A product's facts are stated once, in the fleet's SKU table: the simulator reads them and
states none of its own (so two places can never disagree about a product again)."""

from __future__ import annotations

import ast
import dataclasses
import re
from importlib import resources
from pathlib import Path

import pytest
import yaml

import glimmer
from glimmer.contract.gpu_class import parse_classes
from glimmer.fleet import skus
from glimmer.fleet.skus import Sku, all_skus
from glimmer.sim.device_facts import IDLE_CLOCK_FRACTION, facts
from glimmer.sim.runners.figures import (
    ACHIEVABLE,
    DEFAULT_SLOWDOWN_C,
    PARTS,
    Achievable,
    PartFigures,
)

SRC = Path(glimmer.__file__).parent
TABLE = "fleet/skus.csv"
TEXT = resources.files("glimmer.fleet").joinpath("skus.csv").read_text()
# The SKU table's numeric identity facts and the units a restatement would use them in.
_NUMERIC = (
    "memory_gb", "max_power_w", "nvlink_count", "nvlink_gbps_bidir", "hbm_tbps", "bf16_tflops",
    "fp8_tflops", "mig_max", "slowdown_c", "shutdown_c", "max_operating_c", "host_copy_gate_gbs",
    "boost_clock_mhz",
)  # fmt: skip
_RESCALED = {"nvlink_gbps_bidir": 0.5, "hbm_tbps": 1000.0}
# Sim-side figures that coincide with an SKU fact by measurement, not by copying (none today).
_COINCIDENCES: set[tuple[str, str, str]] = set()


def _literals(text: str) -> str:
    """The string constants of a module that are values, not docstrings (a docstring or comment
    may name a product; a value is a statement the program acts on)."""
    tree = ast.parse(text)
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return "\n".join(
        repr(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    )


def _sources() -> dict[str, str]:
    """Every Python module's value literals and every other table (CSV) shipped in the package.
    Profiles (YAML) are inputs that select products by name; see the class-table test below."""
    out = {}
    for path in sorted(SRC.rglob("*")):
        name = str(path.relative_to(SRC))
        if path.suffix == ".py":
            out[name] = _literals(path.read_text(encoding="utf-8"))
        elif path.suffix == ".csv":
            out[name] = path.read_text(encoding="utf-8")
    return out


def _restatements(sku: Sku, files: dict[str, str]) -> list[str]:
    """Files other than the SKU table that spell the product's driver name or PCI id as a
    value."""
    found = []
    for literal in (sku.model_name, sku.pci_device_id):
        assert literal is not None, sku.key
        # A whole value: a quoted string, or a cell of a comma-separated table.
        spelled = re.compile(rf"(?<![\w ]){re.escape(literal)}(?![\w ])")
        for name, text in files.items():
            if name != TABLE and spelled.search(text):
                found.append(f"{name}: {literal}")
    return found


@pytest.mark.parametrize("sku", all_skus(), ids=lambda s: s.key)
def test_no_module_restates_a_products_name_or_pci_id(sku: Sku) -> None:
    assert _restatements(sku, _sources()) == []


def test_a_second_statement_of_a_products_pci_id_is_caught() -> None:
    """The check above is live: a module that spells an id again is named."""
    h100 = skus.lookup("h100_sxm_80gb")
    assert h100 is not None
    planted = {"sim/runners/ids.py": _literals('PCI = {"h100_sxm_80gb": "0x2330"}\n')}
    assert _restatements(h100, planted) == ["sim/runners/ids.py: 0x2330"]


def test_sim_figure_rows_have_no_field_the_sku_table_has() -> None:
    sku_fields = {f.name for f in dataclasses.fields(Sku)}
    row_fields = {f.name for f in dataclasses.fields(Achievable)}
    # The joined record's two SKU-table facts under their runner names.
    assert row_fields & (sku_fields | {"rated_boost_mhz", "slowdown_c", "model_name"}) == set()
    joined = {f.name for f in dataclasses.fields(PartFigures)}
    assert joined - row_fields == {"rated_boost_mhz", "slowdown_c"}


def _identity_numbers(sku: Sku) -> dict[float, str]:
    out: dict[float, str] = {}
    for name in _NUMERIC:
        value = getattr(sku, name)
        if value is None:
            continue
        # As stated, and in the unit a copy would use: per direction, or GB/s for TB/s.
        for scaled in (float(value), value * _RESCALED.get(name, 1.0)):
            out.setdefault(round(scaled, 6), name)
    return out


@pytest.mark.parametrize("key", sorted(ACHIEVABLE))
def test_sim_figure_rows_state_no_number_the_sku_table_states(key: str) -> None:
    """A row value equal to one of the product's SKU facts (in any unit a copy would use) is a
    second statement of it; derived figures are products of a fraction and the table's value."""
    sku = skus.lookup(key)
    assert sku is not None
    known = _identity_numbers(sku)
    row = ACHIEVABLE[key]
    copies = [
        (f.name, known[round(float(v), 6)])
        for f in dataclasses.fields(row)
        if isinstance(v := getattr(row, f.name), int | float) and not isinstance(v, bool)
        if round(float(v), 6) in known
        and (key, f.name, known[round(float(v), 6)]) not in _COINCIDENCES
    ]
    assert copies == []


@pytest.mark.parametrize("sku", all_skus(), ids=lambda s: s.key)
def test_runner_figures_and_device_facts_read_the_sku_table(sku: Sku) -> None:
    part = PARTS[sku.key]
    assert part.rated_boost_mhz == sku.boost_clock_mhz
    assert part.slowdown_c == (sku.slowdown_c if sku.slowdown_c is not None else DEFAULT_SLOWDOWN_C)
    assert (facts(sku.key).model_name, facts(sku.key).boost_clock_mhz) == (
        sku.model_name,
        sku.boost_clock_mhz,
    )


def test_the_borrowed_figures_come_from_the_h100_sxm_row() -> None:
    h100 = skus.lookup("h100_sxm_80gb")
    assert h100 is not None and h100.boost_clock_mhz is not None
    assert h100.max_operating_c == DEFAULT_SLOWDOWN_C
    assert pytest.approx(345.0 / h100.boost_clock_mhz) == IDLE_CLOCK_FRACTION


def test_the_blackwell_boost_clocks_are_the_sourced_ones() -> None:
    """The contradiction this table resolved: "not published" against a named source."""
    assert facts("b200_180gb").boost_clock_mhz == 1980.0
    assert facts("gb200_186gb").boost_clock_mhz == 2112.0
    for key in ("b200_180gb", "gb200_186gb"):
        assert "boost:HMC" in skus.lookup(key).sources  # type: ignore[union-attr]


def test_every_product_has_a_name_a_pci_id_and_a_boost_clock() -> None:
    for sku in all_skus():
        assert sku.model_name and sku.pci_device_id and sku.boost_clock_mhz, sku.key


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (",0x2330,", ",2330,"),
        ("; pci:PCI; boost:DS\nh100_pcie", "; boost:DS\nh100_pcie"),
        ("NVIDIA H100 80GB HBM3,0x2330,1980,", "NVIDIA H100 80GB HBM3,0x2330,0,"),
    ],
    ids=["pci id without 0x", "identity fact without a source", "zero boost clock"],
)
def test_an_identity_column_without_a_source_or_malformed_is_refused(old: str, new: str) -> None:
    assert old in TEXT
    with pytest.raises(ValueError):
        skus.parse(TEXT.replace(old, new, 1))


def test_an_unknown_product_keeps_its_key_as_name_and_no_clock() -> None:
    assert (facts("a100_80gb").model_name, facts("a100_80gb").boost_clock_mhz) == (
        "a100_80gb",
        None,
    )


def test_the_built_in_gpu_class_table_names_products_as_the_sku_table_does() -> None:
    """A profile selects products by the name nvidia-smi prints; a name the SKU table does not
    know would put that product in no class."""
    names = {s.model_name for s in all_skus()}
    profile = "tests.yaml"  # the memory-bandwidth test's class table (acceptance.yaml's cells)
    text = resources.files("glimmer.data.profiles").joinpath(profile).read_text()
    tables = 0
    for doc in yaml.safe_load_all(text):
        for env in _env_vars(doc):
            if env.get("name") == "BURNIN_GPU_CLASSES":
                tables += 1
                for members in parse_classes(str(env["value"])).values():
                    assert set(members) <= names, (profile, set(members) - names)
    assert tables > 0


def _env_vars(node: object) -> list[dict[str, object]]:
    if isinstance(node, dict):
        found = [node] if "name" in node and "value" in node else []
        return found + [e for v in node.values() for e in _env_vars(v)]
    if isinstance(node, list):
        return [e for v in node for e in _env_vars(v)]
    return []
