"""The GPU product table: strict, sourced, no fallback."""

from __future__ import annotations

import dataclasses
from importlib import resources

import pytest

from glimmer.fleet import skus

TEXT = resources.files("glimmer.fleet").joinpath("skus.csv").read_text()


def test_table_covers_the_spec_products_and_ours() -> None:
    keys = {s.key for s in skus.all_skus()}
    assert {"h100_sxm_80gb", "h100_pcie_80gb", "h200_sxm_141gb", "gb200_186gb"} <= keys
    assert {"b200_180gb", "l40s_48gb", "gb10_128gb"} <= keys


def test_every_product_has_memory_and_sources() -> None:
    for sku in skus.all_skus():
        assert sku.memory_gb > 0 and sku.sources
        if sku.key != "gb10_128gb":
            assert sku.max_power_w is not None and sku.max_power_w > 0


def test_spec_catalogue_figures() -> None:
    h100 = skus.lookup("h100_sxm_80gb")
    assert h100 is not None
    assert (h100.memory_gb, h100.max_power_w, h100.nvlink_count, h100.mig_max) == (80, 700, 18, 7)
    assert (h100.slowdown_c, h100.shutdown_c, h100.max_operating_c) == (89, 95, 87)
    assert skus.lookup("h100_pcie_80gb").max_power_w == 350  # type: ignore[union-attr]
    assert skus.lookup("gb200_186gb").max_power_w == 1200  # type: ignore[union-attr]


def test_only_h100_sxm_has_thermal_limits() -> None:
    with_limits = [s.key for s in skus.all_skus() if s.slowdown_c is not None]
    assert with_limits == ["h100_sxm_80gb"]


def test_unknown_product_has_no_fallback() -> None:
    assert skus.lookup("a100_80gb") is None


def test_products_are_frozen() -> None:
    sku = skus.lookup("h100_sxm_80gb")
    with pytest.raises(dataclasses.FrozenInstanceError):
        sku.memory_gb = 1  # type: ignore[misc, union-attr]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (",89,95,87,", ",89,95,,"),  # partial
        (",89,95,87,", ",nan,95,87,"),
        (",89,95,87,", ",90,95,87,"),  # not 89/95/87
        ("h100_pcie_80gb,H100 PCIe,pcie,80,350,,600,2.0,756,1513,true,7,,,,",
         "h100_pcie_80gb,H100 PCIe,pcie,80,350,,600,2.0,756,1513,true,7,89,95,87"),
        (",80,700,", ",0,700,"),
    ],
    ids=["partial", "nan", "other values", "other product", "zero memory"],
)  # fmt: skip
def test_malformed_table_is_refused(old: str, new: str) -> None:
    assert old in TEXT
    with pytest.raises(ValueError):
        skus.parse(TEXT.replace(old, new, 1))
