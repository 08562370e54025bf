"""Identities derive from the seed and physical keys only (golden values of fleet.md App. A)."""

from __future__ import annotations

from glimmer.fleet import identity as ids
from glimmer.fleet.topology import Topology


def test_golden_vectors_of_appendix_a() -> None:
    assert ids.gpu_uuid("seed-a", "pcie-pool", 0, 0) == "GPU-54247330-79ec-e927-2da4-dc05c8154702"
    assert ids.node_serial("seed-a", "pcie-pool", 0) == "SYNBD9E715358166922"
    assert ids.board_serial("seed-a", "nvl-pool", 0, 0) == "SYN90A6CF7812188E40"
    assert ids.tray_id("seed-a", "tray:site-a/nvl-a/compute/0") == "SYN5E589F40B757DADF"
    assert ids.tray_id("seed-a", "tray:site-a/nvl-a/nvswitch/0") == "SYNF182BC5E3BEA7785"
    assert (
        ids.device_serial("seed-a", "nvswitch:site-a/nvl-a/domain-a/0/0") == "SYN381B8A36F3ED88AC"
    )
    assert ids.device_serial("seed-a", "device:pcie-node-0000-bmc") == "SYNFA1FA11FDCA11F35"
    assert ids.node_uid_of("seed-a", "pcie-pool", 0) == "c907ba7b-a2b2-b113-a4f1-651106000ab9"
    key = "nvswitch:site-a/hgx-a/hgx/hgx-node-0000/baseboard/0"
    assert ids.device_serial("hgx-fixture", key) == "SYN8DF930225A5AFA04"


def test_hash_primitives() -> None:
    assert ids.digest("s", "a", "b") == ids.digest("s:a", "b")  # one ":"-joined string
    assert len(ids.hex_id("s", 10, "x")) == 10
    assert ids.gpu_hash("s", "x") == int(ids.digest("s", "x")[:16], 16)
    assert ids.serial("s", "k").startswith("SYN") and len(ids.serial("s", "k")) == 19


def test_hostnames_pad_to_four_digits_and_widen_beyond() -> None:
    assert ids.hostname("pcie-node", 0) == "pcie-node-0000"
    assert ids.hostname("n", 12345) == "n-12345"


def test_synthetic_pci_bus_ids() -> None:
    assert [ids.pci_bus_id(s) for s in (0, 7)] == ["00000000:20:00.0", "00000000:27:00.0"]


def test_key_formats() -> None:
    stem = ids.hgx_stem("site-a", "hgx-a", "hgx-node-0000", "baseboard")
    assert ids.domain_key(stem) == "domain:site-a/hgx-a/hgx/hgx-node-0000/baseboard"
    assert ids.partition_key(stem, "default") == (
        "partition:site-a/hgx-a/hgx/hgx-node-0000/baseboard/default"
    )
    assert ids.hgx_switch_key(stem, 0) == "nvswitch:site-a/hgx-a/hgx/hgx-node-0000/baseboard/0"
    assert ids.hgx_port_key(stem, 0, 40) == "nvport:site-a/hgx-a/hgx/hgx-node-0000/baseboard/0/40"
    assert ids.nvlink_key("hgx-node-0000", 0, 2) == "nvlink:hgx-node-0000/0/2"
    nvl = ids.nvl72_stem("site-a", "nvl-a", "domain-a")
    assert ids.nvl72_switch_key(nvl, 8, 1) == "nvswitch:site-a/nvl-a/domain-a/8/1"
    assert ids.nvl72_port_key(nvl, 0, 0, 71) == "nvport:site-a/nvl-a/domain-a/0/0/71"
    assert ids.gpu_key("h", 3) == "gpu:h/3" and ids.node_key("h") == "node:h"
    assert ids.rack_key("site-a", "r") == "rack:site-a/r"
    assert ids.compute_tray_key("site-a", "nvl-a", 3) == "tray:site-a/nvl-a/compute/3"
    assert ids.workload_key("s", "w") == "gpuworkload:s/w"
    assert ids.execution_id("seed", "gpuworkload:s/w", 1).startswith("exec-")


def test_reference_fixture_gpu_identity(reference: Topology) -> None:
    """§8 scenario 4, with the loader's seed (the fleet's name)."""
    i = reference.gpu_index["gpu:pcie-node-0000/0"]
    assert reference.gpu_uuids[i] == ids.gpu_uuid("ai-factory-fixture", "pcie-pool", 0, 0)
    assert reference.gpu_slot[i] == 0
    assert reference.gpu_pci_bus_ids[i] == "00000000:20:00.0"


def test_nvl72_boards_share_serials_not_uuids(reference: Topology) -> None:
    a, b, c = (reference.gpu_index[f"gpu:nvl-node-0000/{s}"] for s in (0, 1, 2))
    assert reference.gpu_board_serials[a] == reference.gpu_board_serials[b]
    assert reference.gpu_board_serials[b] != reference.gpu_board_serials[c]
    assert reference.gpu_uuids[a] != reference.gpu_uuids[b]
    assert reference.gpu_board_serials[a] == ids.board_serial(
        "ai-factory-fixture", "nvl-pool", 0, 0
    )


def test_hgx_fixture_switch_serial(hgx: Topology) -> None:
    switch = hgx.nvswitches[hgx.index["nvswitch:site-a/hgx-a/hgx/hgx-node-0000/baseboard/0"][1]]
    assert switch.serial == "SYN8DF930225A5AFA04"
    assert switch.name == "hgx-node-0000-nvsw-0"
