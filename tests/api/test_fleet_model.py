"""Pieces of the Fleet model that stand alone: durations, address blocks, names, sources."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from glimmer.api.fleet_parts import AddressBlock, Source, is_name
from glimmer.api.fleet_sched import Demand, parse_duration


@given(st.integers(0, 1000), st.integers(0, 59), st.integers(0, 59))
def test_go_durations_parse_to_seconds(h: int, m: int, s: int) -> None:
    text = f"{h}h{m}m{s}s"
    assert parse_duration(text) == h * 3600 + m * 60 + s
    assert parse_duration("-" + text) == -(h * 3600 + m * 60 + s)


@pytest.mark.parametrize(
    ("text", "seconds"), [("6h", 21600), ("2m", 120), ("1h30m", 5400), ("1.5h", 5400), ("0", 0)]
)
def test_duration_examples(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "6", "h", "6 h", "6d", "1h-2m"])
def test_malformed_durations(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


def test_constant_demand_needs_no_period() -> None:
    assert Demand(utilization_base=0.5).period_seconds() == 0


def test_address_block_hands_out_offsets() -> None:
    block = AddressBlock(cidr="10.10.0.0/24", start_offset=10)
    assert block.address(0) == "10.10.0.10"
    assert block.address(244) == "10.10.0.254"
    assert block.address(245) is None  # broadcast
    assert AddressBlock(cidr="10.10.0.0/24").address(0) is None  # network


@pytest.mark.parametrize(
    ("name", "ok"),
    [("a", True), ("pcie-node-0000", True), ("a.b", True), ("a-", True), ("A", False),
     ("-a", False), ("a.", False), ("a..b", False), ("a" * 63, True), ("a" * 64, False),
     ("", False)],
)  # fmt: skip
def test_name_rule(name: str, ok: bool) -> None:
    assert is_name(name) is ok


def test_source_needs_every_part() -> None:
    good = {"url": "u", "revision": "r", "sha256": "f" * 64, "section": "s"}
    Source.model_validate(good)
    for broken in ({**good, "url": ""}, {**good, "sha256": "f" * 63}, {**good, "section": ""}):
        with pytest.raises(ValueError, match="invalid source"):
            Source.model_validate(broken)
