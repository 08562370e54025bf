"""Host-to-device copy bandwidth is gated per product (issue 10 item 13): every product the SKU
table has is judged by exactly one cell of the acceptance profile's memory-bandwidth matrix, at
its own sourced figure, so a healthy part of any product passes and a 4x loss on any fails.

Before, one absolute 48 GB/s gate failed every healthy L40S (Gen4, ~24 GB/s) and cleared a GB200
whose copies fell from 396 to 99 GB/s."""

from __future__ import annotations

from pathlib import Path

import pytest
from runner_kit import fleet_of, twin_with

from glimmer.contract.gpu_class import AXIS, CLASSES_ENV, parse_classes
from glimmer.contract.vocab import Phase
from glimmer.fleet.skus import Sku, all_skus
from glimmer.sim.device_facts import facts
from glimmer.sim.twin import FleetSim
from tools.coverage.harness import builtins, run_unit

PARENT = "memory-bandwidth"
PROFILES = Path(__file__).resolve().parents[3] / "src" / "glimmer" / "data" / "profiles"
DECLARABLE = [s for s in all_skus() if s.shapes]


def _cells() -> dict[str, str]:
    """Cell test name -> its gpuClass, for the acceptance profile's matrix."""
    names = [t for t in builtins().profiles["acceptance"] if t.startswith(f"{PARENT}-")]
    return {name: name.removeprefix(f"{PARENT}-") for name in names}


def _classes() -> dict[str, tuple[str, ...]]:
    spec = builtins().tests[PARENT]
    assert spec.runner is not None
    env = {e.name: e.value or "" for e in spec.runner.env or []}
    return parse_classes(env[CLASSES_ENV])


def _gates(test: str) -> dict[str, float]:
    return {t.metric: float(t.value) for t in builtins().tests[test].thresholds or []}


def test_every_product_of_the_sku_table_is_in_exactly_one_class_gated_at_its_figure() -> None:
    classes = _classes()
    assert set(_cells().values()) == set(classes), "one cell per class, and no other cells"
    owner = {gpu: name for name, gpus in classes.items() for gpu in gpus}
    for sku in all_skus():
        home = owner.get(facts(sku.key).model_name)
        assert home is not None, f"{sku.key} ({facts(sku.key).model_name}) is in no class"
        assert sku.host_copy_gate_gbs is not None, f"{sku.key} has no sourced copy figure"
        assert "host_copy:" in sku.sources
        assert _gates(f"{PARENT}-{home}") == {
            "hostToDeviceBandwidthGBs": sku.host_copy_gate_gbs,
            "deviceToHostBandwidthGBs": sku.host_copy_gate_gbs,
        }, sku.key


def test_every_cell_names_its_class_as_its_only_axis_and_every_gate_has_a_source() -> None:
    text = (PROFILES / "acceptance.yaml").read_text(encoding="utf-8")
    for cls in _cells().values():
        assert f"axes: {{{AXIS}: {cls}}}" in text
        block = text.split(f"- name: {cls}\n", 1)[1].split("- name:", 1)[0]
        assert "skus.csv" in block, f"cell {cls}: its gate names no source"


def _settle(twin: FleetSim, node: str) -> dict[str, tuple[Phase, str, set[str]]]:
    out = {}
    for test, cls in _cells().items():
        r = run_unit(twin, test, builtins().tests[test], (node,))
        out[cls] = (r.outcome.phase, r.outcome.message, {v.metric for v in r.outcome.violations})
    return out


def _home(sku: Sku) -> str:
    name = facts(sku.key).model_name
    return next(c for c, gpus in _classes().items() if name in gpus)


@pytest.mark.parametrize("sku", DECLARABLE, ids=lambda s: s.key)
def test_a_healthy_node_of_any_product_passes_its_cell_and_skips_the_others(sku: Sku) -> None:
    topo = fleet_of(sku.key, sku.shapes[0])
    node = topo.nodes[0].hostname
    got = _settle(twin_with(topo), node)
    home = _home(sku)
    assert got[home][0] is Phase.PASSED, got[home][1]
    for cls, (phase, message, _) in got.items():
        if cls != home:
            assert phase is Phase.SKIPPED
            assert f"is judged by the {home} cell" in message


@pytest.mark.parametrize("sku", DECLARABLE, ids=lambda s: s.key)
def test_a_four_fold_copy_loss_fails_any_product_on_its_own_gate(sku: Sku) -> None:
    topo = fleet_of(sku.key, sku.shapes[0])
    node = topo.nodes[0].hostname
    # Full downtraining quarters the link (x16 -> x4): one GPU of the node.
    got = _settle(twin_with(topo, f"gpu_pcie_downtrained@gpu:{node}/1"), node)
    phase, message, metrics = got[_home(sku)]
    assert phase is Phase.FAILED, message
    assert {"hostToDeviceBandwidthGBs", "deviceToHostBandwidthGBs"} <= metrics


def test_the_reported_cases_gb200_at_99_fails_and_a_healthy_l40s_passes() -> None:
    gb200 = fleet_of("gb200_186gb", "nvl72")
    node = gb200.nodes[0].hostname
    sick = _settle(twin_with(gb200, f"gpu_pcie_downtrained@gpu:{node}/0"), node)["gb200-c2c"]
    assert sick[0] is Phase.FAILED
    assert "hostToDeviceBandwidthGBs: got 9" in sick[1]  # ~99 GB/s against the 150 gate
    l40s = fleet_of("l40s_48gb", "pcie")
    assert _settle(twin_with(l40s), l40s.nodes[0].hostname)["pcie-gen4"][0] is Phase.PASSED
