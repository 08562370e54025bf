"""§8 scenarios 9–13: selections and capability gates fail closed."""

from __future__ import annotations

import pytest
from fleet_docs import build_doc, builtin_doc

from glimmer.errors import InputError
from glimmer.fleet.capabilities import Capability, require
from glimmer.fleet.selection import select
from glimmer.fleet.topology import Topology

C = Capability


def refused(topo: Topology, pools: list[str], *wanted: Capability) -> str | None:
    try:
        require(topo, select(topo, pools=pools), set(wanted))
    except InputError as e:
        return e.message
    return None


def test_pcie_selection_refuses_thermal_and_framebuffer(reference: Topology) -> None:
    assert refused(reference, ["pcie-pool"], C.THERMAL_ENVELOPE) == (
        "thermal envelope unknown for h100_pcie_80gb"
    )
    assert refused(reference, ["pcie-pool"], C.USABLE_FRAMEBUFFER) == (
        "usable framebuffer requires sourced bytes for gpu:pcie-node-0000/0"
    )


def test_nvl72_selection_refuses_correlation(reference: Topology) -> None:
    assert refused(reference, ["nvl-pool"], C.NVLINK_CORRELATION) == (
        "NVLink correlation requires complete sourced endpoint/vendor map"
    )
    assert (
        refused(reference, ["pcie-pool"], C.NVLINK_CORRELATION) == "selected NVLink domains absent"
    )


def test_hgx_fixture_backs_thermal_framebuffer_and_correlation_only(hgx: Topology) -> None:
    assert (
        refused(hgx, ["hgx-pool"], C.THERMAL_ENVELOPE, C.USABLE_FRAMEBUFFER, C.NVLINK_CORRELATION)
        is None
    )
    assert (refused(hgx, ["hgx-pool"], C.NVSWITCH_ENTITIES) or "").startswith(
        "sourced NVSwitch entity missing for nvswitch:site-a/hgx-a/hgx/hgx-node-0000/baseboard/"
    )
    assert refused(hgx, ["hgx-pool"], C.GRACE_ENTITIES) == "Grace entities absent"


def test_hotter_hgx_assumption_breaks_the_thermal_envelope() -> None:
    doc = builtin_doc("hgx-fixture")
    doc["spec"]["pools"][0]["operating"]["fullPowerRiseC"] = 80  # 25 + 80 + 10 > 87
    topo = build_doc(doc)
    assert (
        refused(topo, ["hgx-pool"], C.THERMAL_ENVELOPE)
        == "declared thermal envelope exceeds sourced limit"
    )


def test_mixed_hgx_and_pcie_correlation_cannot_launder_pcie(factory: Topology) -> None:
    assert refused(factory, ["hgx-pool", "pcie-pool"], C.NVLINK_CORRELATION) == (
        "selected GPU has no sourced NVLink domain gpu:pcie-node-0000/0"
    )


def test_selectors_must_be_known_and_unique(factory: Topology) -> None:
    with pytest.raises(InputError, match='unknown pool selector "nope"'):
        select(factory, pools=["nope"])
    with pytest.raises(InputError, match='duplicate pool selector "hgx-pool"'):
        select(factory, pools=["hgx-pool", "hgx-pool"])
    with pytest.raises(InputError, match='unknown scheduler selector "x"'):
        select(factory, schedulers=["x"])


def test_selecting_one_hgx_node_pool_keeps_the_other_nodes_switches_out() -> None:
    doc = builtin_doc("ai-factory")
    pools = doc["spec"]["pools"]
    hgx = next(p for p in pools if p["name"] == "hgx-pool")
    other = {**hgx, "name": "hgx-pool-b", "hostnamePrefix": "hgx-b", "nodeCount": 1,
             "nodes": [], "nics": [],
             "nodeIps": {"cidr": "10.10.5.0/24", "startOffset": 10},
             "bmc": {"managementIps": {"cidr": "10.20.5.0/24", "startOffset": 10}},
             "placements": [{"rack": "rack:site-a/hgx-a", "nodeStart": 0, "nodeCount": 1,
                             "slotStart": 17, "nodeHeightU": 8}]}  # fmt: skip
    pools.append(other)
    topo = build_doc(doc)
    sel = select(topo, pools=["hgx-pool-b"])
    assert len(sel.domains) == 1
    switches = [k for k in sel.devices if k.startswith("nvswitch:")]
    assert len(switches) == 4 and all("/hgx-b-0000/" in k for k in switches)


def test_scheduler_selection_brings_its_pools(factory: Topology) -> None:
    sel = select(factory, schedulers=["scheduler-a"])
    assert len(sel.nodes) == 22 and len(sel.racks) == 3
    assert "fabric" not in sel.fabrics and set(sel.fabrics) == {"backend-a", "frontend-a"}
    assert "device:storage-endpoint-a" in sel.devices
