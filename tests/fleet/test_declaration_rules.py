# ruff: noqa: E501  (a table of cases reads best one case to a few lines)
"""Every validation rule of specs/fleet.md §1, each with a declaration that breaks it.

Each case mutates the ai-factory declaration (racks pcie-a, hgx-a, nvl-a; pools pcie-pool,
nvl-pool, hgx-pool) and expects the spec's reason text and the field path where it happened.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

Doc = dict[str, Any]
Mutation = Callable[[Doc], object]

SRC = {"url": "https://example.test/d", "revision": "r1", "sha256": "a" * 64, "section": "s"}


def spec(d: Doc) -> Doc:
    return d["spec"]


def rack(d: Doc, name: str) -> Doc:
    return next(r for r in spec(d)["racks"] if r["name"] == name)


def pool(d: Doc, name: str) -> Doc:
    return next(p for p in spec(d)["pools"] if p["name"] == name)


def sched(d: Doc) -> Doc:
    return spec(d)["schedulers"][0]


def workload(d: Doc, name: str) -> Doc:
    return next(w for w in sched(d)["workloads"] if w["name"] == name)


def leaf(d: Doc, name: str) -> Doc:
    return next(x for f in spec(d)["fabrics"] for x in f["devices"] if x["name"] == name)


def setitem(target: Callable[[Doc], Doc], key: str, value: object) -> Mutation:
    return lambda d: target(d).__setitem__(key, value)


def add_pcie_pool(d: Doc, **changes: object) -> None:
    extra = {**pool(d, "pcie-pool"), "name": "pcie-extra", "hostnamePrefix": "extra"}
    extra.pop("storage", None)
    extra.pop("nodeIps", None)
    extra.pop("bmc", None)
    extra["nics"] = []
    extra.update(changes)
    spec(d)["pools"].append(extra)


def hgx_node(d: Doc, ordinal: int = 0) -> Doc:
    return pool(d, "hgx-pool")["nodes"][ordinal]


def nvl72_block(d: Doc) -> Doc:
    return rack(d, "nvl-a")["nvlink"]


CASES: list[tuple[str, Mutation, str, str]] = [
    # -- sites and racks (§1.4)
    ("unknown site", lambda d: rack(d, "pcie-a").update(site="site-z"),
     "unknown site", "spec.racks[0].site"),
    ("duplicate site", lambda d: spec(d)["sites"].append({"name": "site-a"}),
     "duplicate site", "spec.sites[1].name"),
    ("rack name", setitem(lambda d: rack(d, "pcie-a"), "name", "Pcie_A"), "invalid name", "racks[0].name"),
    ("rack shape", setitem(lambda d: rack(d, "pcie-a"), "shape", "dgx"),
     "invalid name or unsupported shape/cooling", "racks[0].shape"),
    ("rack cooling", setitem(lambda d: rack(d, "pcie-a"), "cooling", "water"),
     "invalid name or unsupported shape/cooling", "racks[0].cooling"),
    ("rack height", setitem(lambda d: rack(d, "pcie-a"), "heightU", -1), "invalid rack height", "racks[0]"),
    ("physics", lambda d: rack(d, "pcie-a")["physics"].update(fixedOverheadW=-1),
     "nonfinite or invalid physics parameter", "racks[0].physics"),
    ("physics nan", lambda d: rack(d, "nvl-a")["physics"].update(supplyTempC=float("nan")),
     "nonfinite or invalid physics parameter", "racks[2].physics"),
    ("liquid flow", lambda d: rack(d, "nvl-a")["physics"].update(flowLpm=0),
     "liquid fluid quantities must be positive", "racks[2]"),
    ("air liquid fraction", lambda d: rack(d, "pcie-a")["physics"].update(liquidHeatFraction=0.5),
     "air rack has nonzero liquid heat fraction", "racks[0]"),
    ("nvlink on pcie rack", setitem(lambda d: rack(d, "pcie-a"), "nvlink", {}),
     "NVLink requires NVL72 shape", "racks[0]"),
    ("nvlink on hgx rack", setitem(lambda d: rack(d, "hgx-a"), "nvlink", {"domain": "x"}),
     "NVLink requires NVL72 shape", "racks[1]"),
    ("duplicate rack", lambda d: spec(d)["racks"].append(dict(rack(d, "pcie-a"))),
     "duplicate rack rack:site-a/pcie-a", "spec.racks[3]"),
    ("nvl72 with 17 trays", lambda d: (
        pool(d, "nvl-pool").update(nodeCount=17),
        pool(d, "nvl-pool")["placements"][0].update(nodeCount=17),
        sched(d)["workloads"].pop(0)),
     "NVL72 requires exactly 18 compute trays × 4 GPUs", "spec.racks"),
    # -- devices (§1.5)
    ("device kind", setitem(lambda d: rack(d, "pcie-a"), "facilityDevices",
                            [{"name": "pdu-a", "kind": "toaster"}]),
     "unsupported device kind", "facilityDevices[0].kind"),
    ("device rail", setitem(lambda d: rack(d, "pcie-a"), "facilityDevices",
                            [{"name": "pdu-a", "kind": "pdu", "rail": -1}]),
     "negative rail", "facilityDevices[0]"),
    ("device static power", setitem(lambda d: rack(d, "pcie-a"), "facilityDevices",
                                    [{"name": "pdu-a", "kind": "pdu", "staticPowerW": -5}]),
     "invalid static power", "facilityDevices[0]"),
    ("device port duplicate", setitem(lambda d: rack(d, "pcie-a"), "facilityDevices", [
        {"name": "pdu-a", "kind": "pdu", "ports": [{"name": "p1", "speedGbps": 1},
                                                   {"name": "p1", "speedGbps": 1}]}]),
     "invalid/duplicate device port", "facilityDevices[0]"),
    ("device port speed", setitem(lambda d: rack(d, "pcie-a"), "facilityDevices", [
        {"name": "pdu-a", "kind": "pdu", "ports": [{"name": "p1", "speedGbps": 0}]}]),
     "invalid/duplicate device port", "facilityDevices[0].ports[0]"),
    ("device nic speed", setitem(lambda d: rack(d, "pcie-a"), "facilityDevices", [
        {"name": "pdu-a", "kind": "pdu", "nics": [
            {"name": "eth0", "fabric": "frontend-a", "switch": "frontend-leaf-a", "speedGbps": 0}]}]),
     "invalid device NIC", "facilityDevices[0].nics[0]"),
    ("collection without module", setitem(lambda d: rack(d, "pcie-a"), "facilityDevices", [
        {"name": "pdu-a", "kind": "pdu",
         "collection": {"protocol": "snmp", "port": 161, "source": SRC}}]),
     "collection requires explicit sourced protocol/port/module", "facilityDevices[0].collection"),
    ("collection port", setitem(lambda d: rack(d, "pcie-a"), "facilityDevices", [
        {"name": "pdu-a", "kind": "pdu",
         "collection": {"protocol": "modbus", "port": 70000, "source": SRC}}]),
     "collection requires explicit sourced protocol/port/module", "facilityDevices[0].collection"),
    ("source sha256", setitem(lambda d: rack(d, "pcie-a"), "facilityDevices", [
        {"name": "pdu-a", "kind": "pdu", "collection": {
            "protocol": "snmp", "module": "pdu", "port": 161, "source": {**SRC, "sha256": "abc"}}}]),
     "invalid source", "facilityDevices[0].collection.source"),
    ("facility IP equal to a switch's", setitem(lambda d: rack(d, "pcie-a"), "facilityDevices",
                                                [{"name": "pdu-a", "kind": "pdu",
                                                  "managementIp": "10.20.2.1"}]),
     "duplicate IP 10.20.2.1", "facilityDevices[0].managementIp"),
    ("device NIC unknown switch", setitem(lambda d: rack(d, "pcie-a"), "facilityDevices", [
        {"name": "pdu-a", "kind": "pdu", "nics": [
            {"name": "eth0", "fabric": "frontend-a", "switch": "nope", "speedGbps": 1}]}]),
     "unknown device NIC fabric/switch", "facilityDevices[0].nics[0]"),
    ("device NIC backend rail", setitem(lambda d: rack(d, "pcie-a"), "facilityDevices", [
        {"name": "pdu-a", "kind": "pdu", "rail": 1, "scalableUnit": "unit-a", "nics": [
            {"name": "eth0", "fabric": "backend-a", "switch": "backend-leaf-0", "speedGbps": 1}]}]),
     "device NIC backend rail mismatch", "facilityDevices[0].nics[0]"),
    # -- fabrics and storage (§1.6)
    ("fabric role", lambda d: spec(d)["fabrics"][0].update(role="side"),
     "invalid fabric name/site/role", "fabrics[0].role"),
    ("fabric device kind", lambda d: spec(d)["fabrics"][0]["devices"].append(
        {"name": "pdu-x", "kind": "pdu"}), "fabric device must be a switch", "devices[1].kind"),
    ("link to unknown port", lambda d: spec(d)["fabrics"][1]["links"][0].update(bPort="swp9"),
     "invalid link or endpoint attached twice", "links[0]"),
    ("link port used twice", lambda d: spec(d)["fabrics"][1]["links"][1].update(bPort="swp1"),
     "invalid link or endpoint attached twice", "links[1]"),
    ("duplicate fabric", lambda d: spec(d)["fabrics"].append(
        {"name": "frontend-a", "site": "site-a", "role": "frontend"}), "duplicate fabric", "fabrics"),
    ("storage on backend", lambda d: spec(d)["storageClusters"][0].update(fabric="backend-a"),
     "storage requires frontend fabric", "storageClusters[0].fabric"),
    ("storage NIC without IP", lambda d: spec(d)["storageClusters"][0]["devices"][0]["nics"][0].pop("ip"),
     "storage NIC requires frontend IP and matching fabric", "storageClusters[0].devices[0]"),
    # -- pools (§1.7)
    ("model/shape mismatch", setitem(lambda d: pool(d, "pcie-pool"), "gpuModel", "gb200_186gb"),
     'gpuModel "gb200_186gb" incompatible with shape "pcie"', "pools[0].gpuModel"),
    ("unknown model", setitem(lambda d: pool(d, "pcie-pool"), "gpuModel", "a100_40gb"),
     "unknown gpuModel", "pools[0].gpuModel"),
    ("pcie 3 GPUs", setitem(lambda d: pool(d, "pcie-pool"), "gpusPerNode", 3),
     "pcie gpusPerNode must be in [4,8]", "pools[0]"),
    ("pcie 9 GPUs", setitem(lambda d: pool(d, "pcie-pool"), "gpusPerNode", 9),
     "pcie gpusPerNode must be in [4,8]", "pools[0]"),
    ("hgx 7 GPUs", setitem(lambda d: pool(d, "hgx-pool"), "gpusPerNode", 7),
     "hgx gpusPerNode must be 8", "pools[2]"),
    ("hgx 0 GPUs", setitem(lambda d: pool(d, "hgx-pool"), "gpusPerNode", 0),
     "hgx gpusPerNode must be 8", "pools[2]"),
    ("nvl72 8 GPUs", setitem(lambda d: pool(d, "nvl-pool"), "gpusPerNode", 8),
     "NVL72 requires four GPUs per tray", "pools[1]"),
    ("node count 0", setitem(lambda d: pool(d, "pcie-pool"), "nodeCount", 0),
     "invalid pool name/count/hardware", "pools[0]"),
    ("cpus 0", lambda d: pool(d, "pcie-pool")["hardware"].update(cpus=0),
     "invalid pool name/count/hardware", "pools[0].hardware"),
    ("arch", lambda d: pool(d, "pcie-pool")["hardware"].update(arch="riscv"),
     "invalid pool name/count/hardware", "pools[0].hardware.arch"),
    ("pool name", setitem(lambda d: pool(d, "pcie-pool"), "name", "Pcie_Pool"), "invalid name", "pools[0].name"),
    ("duplicate pool", lambda d: add_pcie_pool(d, name="pcie-pool"), "duplicate pool pcie-pool", "pools[3].name"),
    ("power limit above max", lambda d: pool(d, "pcie-pool")["operating"].update(powerLimitW=351),
     "power limit exceeds sourced maximum or invalid", "pools[0].operating.powerLimitW"),
    ("fraction above 1", lambda d: pool(d, "pcie-pool")["operating"].update(idlePowerFraction=1.5),
     "nonfinite or invalid operating parameter", "pools[0].operating"),
    ("negative rise", lambda d: pool(d, "pcie-pool")["operating"].update(fullPowerRiseC=-1),
     "nonfinite or invalid operating parameter", "pools[0].operating"),
    # -- placements (§1.7.2)
    ("missing placement", lambda d: pool(d, "pcie-pool")["placements"][0].update(nodeCount=1),
     "node ordinal is missing (ordinal 1)", "pools[0].placements"),
    ("ordinal twice", lambda d: pool(d, "pcie-pool")["placements"].append(
        {"rack": "rack:site-a/pcie-a", "nodeStart": 1, "nodeCount": 1, "slotStart": 20,
         "nodeHeightU": 4}), "node ordinal assigned twice", "pools[0].placements[1]"),
    ("slots overlap across pools", lambda d: add_pcie_pool(d, nodeCount=1, placements=[
        {"rack": "rack:site-a/pcie-a", "nodeStart": 0, "nodeCount": 1, "slotStart": 7,
         "nodeHeightU": 4}]), "occupied rack slots overlap", "placements"),
    ("rack too short", lambda d: (rack(d, "hgx-a").update(heightU=3),
                                  pool(d, "hgx-pool")["placements"][0].update(nodeHeightU=4)),
     "rack slot out of range", "pools[2].placements[0]"),
    ("height 0", lambda d: pool(d, "pcie-pool")["placements"][0].update(nodeHeightU=0),
     "PCIe nodeHeightU and slotStart must be positive", "pools[0].placements[0]"),
    ("slot 0", lambda d: pool(d, "pcie-pool")["placements"][0].update(slotStart=0),
     "PCIe nodeHeightU and slotStart must be positive", "pools[0].placements[0]"),
    ("nvl72 height", lambda d: pool(d, "nvl-pool")["placements"][0].update(nodeHeightU=1),
     "NVL72 nodeHeightU must be omitted", "pools[1].placements[0].nodeHeightU"),
    ("nvl72 tray 18", lambda d: pool(d, "nvl-pool")["placements"][0].update(slotStart=1),
     "NVL72 tray ordinal out of range", "pools[1].placements[0].slotStart"),
    ("unknown rack", lambda d: pool(d, "pcie-pool")["placements"][0].update(rack="rack:site-a/x"),
     "invalid placement/rack/range", "pools[0].placements[0]"),
    ("rack of another shape", lambda d: pool(d, "pcie-pool")["placements"][0].update(
        rack="rack:site-a/hgx-a"), "invalid placement/rack/range", "pools[0].placements[0]"),
    ("range beyond pool", lambda d: pool(d, "pcie-pool")["placements"][0].update(nodeCount=3),
     "invalid placement/rack/range", "pools[0].placements[0]"),
    # -- addresses (§1.3)
    ("network address", lambda d: pool(d, "pcie-pool")["nodeIps"].update(startOffset=0),
     "network/broadcast/out-of-range IP assignment", "pools[0].nodeIps"),
    ("broadcast address", lambda d: pool(d, "pcie-pool")["nodeIps"].update(startOffset=254),
     "network/broadcast/out-of-range IP assignment", "pools[0].nodeIps"),
    ("non-canonical block", lambda d: pool(d, "pcie-pool")["nodeIps"].update(cidr="10.10.0.1/24"),
     "invalid IPv4 address block", "pools[0].nodeIps"),
    ("override IP", lambda d: pool(d, "pcie-pool").update(nodes=[{"ordinal": 0, "ip": "10.0.0.300"}]),
     'invalid IP "10.0.0.300"', "pools[0].nodes[0].ip"),
    ("duplicate IP", lambda d: pool(d, "pcie-pool").update(nodes=[{"ordinal": 0, "ip": "10.10.1.10"}]),
     "duplicate IP 10.10.1.10", "pools[0]"),
    # -- NICs and ports (§1.7.3)
    ("NIC unknown fabric", lambda d: pool(d, "pcie-pool")["nics"][0].update(fabric="nope"),
     "invalid/duplicate NIC", "pools[0].nics[0]"),
    ("NIC duplicate", lambda d: pool(d, "pcie-pool")["nics"].append(
        dict(pool(d, "pcie-pool")["nics"][0])), "invalid/duplicate NIC", "pools[0].nics"),
    ("NIC speed", lambda d: pool(d, "pcie-pool")["nics"][0].update(speedGbps=0),
     "invalid/duplicate NIC", "pools[0].nics[0]"),
    ("backend NIC without rail", lambda d: pool(d, "pcie-pool")["nics"][1].pop("rail"),
     "backend NIC requires rail and scalable unit", "pools[0].nics[1]"),
    ("backend NIC without SU", lambda d: pool(d, "pcie-pool").pop("scalableUnit"),
     "backend NIC requires rail and scalable unit", "pools[0].nics[1]"),
    ("backend NIC on wrong-rail leaf", lambda d: pool(d, "pcie-pool")["nics"][1].update(
        switch="backend-leaf-1"), "rail mismatch", "pools[0].nics[1]"),
    ("frontend NIC without switch", lambda d: pool(d, "pcie-pool")["nics"][0].pop("switch"),
     "frontend NIC requires switch", "pools[0].nics[0]"),
    ("frontend NIC unknown leaf", lambda d: pool(d, "pcie-pool")["nics"][0].update(switch="nope"),
     "unknown NIC leaf", "pools[0].nics[0]"),
    ("backend leaf missing", lambda d: pool(d, "pcie-pool")["nics"][1].update(rail=7),
     "unknown NIC leaf", "pools[0].nics[1]"),
    ("ambiguous backend leaf", lambda d: spec(d)["fabrics"][1]["devices"].append(
        {"name": "backend-leaf-0b", "kind": "leaf", "rail": 0, "scalableUnit": "unit-a"}),
     "ambiguous backend leaf", "nics"),
    ("frontend leaf exhausted", lambda d: leaf(d, "frontend-leaf-a")["ports"][0].update(count=22),
     "no free port or endpoint attached twice", "nics[0]"),
    ("explicit port already used by storage", lambda d: pool(d, "pcie-pool").update(nodes=[
        {"ordinal": 0, "attachments": [{"nic": "eth0", "switch": "frontend-leaf-a", "port": "swp21"}]}]),
     "no free port or endpoint attached twice", "pools[0].nics[0]"),
    # -- node and GPU overrides (§1.7.4, §1.7.5)
    ("duplicate hostname", lambda d: pool(d, "pcie-pool").update(nodes=[
        {"ordinal": 1, "hostname": "pcie-node-0000"}]), "duplicate hostname pcie-node-0000", "pools[0]"),
    ("hostname equal to a switch", lambda d: pool(d, "pcie-pool").update(nodes=[
        {"ordinal": 1, "hostname": "backend-leaf-0"}]), "duplicate hostname backend-leaf-0", "pools[0]"),
    ("node override range", lambda d: pool(d, "pcie-pool").update(nodes=[{"ordinal": 2}]),
     "node override out of range", "pools[0].nodes[0].ordinal"),
    ("duplicate node override", lambda d: pool(d, "pcie-pool").update(nodes=[{"ordinal": 1}, {"ordinal": 1}]),
     "duplicate override ordinal", "pools[0].nodes[1].ordinal"),
    ("duplicate node serial", lambda d: pool(d, "pcie-pool").update(nodes=[
        {"ordinal": 0, "serial": "S1"}, {"ordinal": 1, "serial": "S1"}]), "duplicate serial S1", "pools[0]"),
    ("nic address unknown", lambda d: pool(d, "pcie-pool").update(nodes=[
        {"ordinal": 0, "nicAddresses": [{"nic": "eth9", "ip": "10.9.9.9"}]}]),
     "unknown NIC address override", "nodes[0].nicAddresses[0]"),
    ("nic address duplicate", lambda d: pool(d, "pcie-pool").update(nodes=[
        {"ordinal": 0, "nicAddresses": [{"nic": "eth0", "ip": "10.9.9.9"},
                                        {"nic": "eth0", "ip": "10.9.9.8"}]}]),
     "duplicate NIC address override", "nodes[0].nicAddresses[1]"),
    ("attachment unknown", lambda d: pool(d, "pcie-pool").update(nodes=[
        {"ordinal": 0, "attachments": [{"nic": "eth9", "switch": "frontend-leaf-a"}]}]),
     "unknown NIC attachment override", "nodes[0].attachments[0]"),
    ("attachment duplicate", lambda d: pool(d, "pcie-pool").update(nodes=[
        {"ordinal": 0, "attachments": [{"nic": "eth0", "switch": "frontend-leaf-a"},
                                       {"nic": "eth0", "switch": "frontend-leaf-a"}]}]),
     "duplicate NIC attachment", "nodes[0].attachments[1]"),
    ("duplicate UUID", lambda d: pool(d, "pcie-pool").update(gpus=[
        {"nodeOrdinal": 0, "slot": 0, "uuid": "GPU-00000000-0000-0000-0000-000000000001"},
        {"nodeOrdinal": 1, "slot": 0, "uuid": "GPU-00000000-0000-0000-0000-000000000001"}]),
     "duplicate UUID GPU-00000000-0000-0000-0000-000000000001", "gpu:pcie-node-0001/0"),
    ("invalid UUID", lambda d: pool(d, "pcie-pool").update(gpus=[
        {"nodeOrdinal": 0, "slot": 0, "uuid": "GPU-1234"}]), "invalid GPU UUID", "gpus[0].uuid"),
    ("duplicate board serial", lambda d: pool(d, "pcie-pool").update(gpus=[
        {"nodeOrdinal": 0, "slot": 0, "boardSerial": "B1"},
        {"nodeOrdinal": 0, "slot": 1, "boardSerial": "B1"}]), "duplicate serial B1", "gpu:pcie-node-0000/1"),
    ("board serial mismatch", lambda d: pool(d, "nvl-pool").update(gpus=[
        {"nodeOrdinal": 0, "slot": 0, "boardSerial": "B1"},
        {"nodeOrdinal": 0, "slot": 1, "boardSerial": "B2"}]),
     "board serial mismatch within board", "pools[1].gpus[1].boardSerial"),
    ("duplicate PCI on one host", lambda d: pool(d, "pcie-pool").update(gpus=[
        {"nodeOrdinal": 0, "slot": 1, "pciBusId": "0:20:0.0"}]),
     "duplicate PCI address pcie-node-0000/00000000:20:00.0", "gpu:pcie-node-0000/1"),
    ("malformed PCI suffix", lambda d: pool(d, "pcie-pool").update(gpus=[
        {"nodeOrdinal": 0, "slot": 1, "pciBusId": "00000000:20:00.0x"}]),
     "invalid PCI address", "gpus[0].pciBusId"),
    ("PCI device above 31", lambda d: pool(d, "pcie-pool").update(gpus=[
        {"nodeOrdinal": 0, "slot": 1, "pciBusId": "0:20:20.0"}]), "invalid PCI address", "gpus[0].pciBusId"),
    ("GPU override range", lambda d: pool(d, "pcie-pool").update(gpus=[{"nodeOrdinal": 0, "slot": 4}]),
     "GPU override out of range", "pools[0].gpus[0]"),
    ("duplicate GPU override", lambda d: pool(d, "pcie-pool").update(gpus=[
        {"nodeOrdinal": 0, "slot": 1}, {"nodeOrdinal": 0, "slot": 1}]), "duplicate GPU override", "gpus[1]"),
    ("usable memory 0", lambda d: pool(d, "pcie-pool").update(gpus=[
        {"nodeOrdinal": 0, "slot": 1, "usableMemory": {"bytes": 0, "source": SRC}}]),
     "usable memory requires sourced positive bytes", "gpus[0].usableMemory"),
    ("unsourced usable memory", lambda d: pool(d, "pcie-pool").update(gpus=[
        {"nodeOrdinal": 0, "slot": 1, "usableMemory": {"bytes": 1}}]),
     "required field is missing", "gpus[0].usableMemory.source"),
    ("duplicate tray ID", lambda d: pool(d, "nvl-pool").update(nodes=[
        {"ordinal": 0, "trayId": "T1"}, {"ordinal": 1, "trayId": "T1"}]), "duplicate tray ID T1", "pools[1]"),
    ("storage binding to unknown cluster", lambda d: pool(d, "pcie-pool")["storage"].update(cluster="nope"),
     "storage NIC must have a frontend IP and matching fabric", "pools[0].storage"),
    ("storage NIC without IP", lambda d: pool(d, "pcie-pool")["nics"][0].pop("ips"),
     "storage NIC must have a frontend IP and matching fabric", "pools[0].storage"),
    # -- HGX (§1.9)
    ("HGX profile", lambda d: hgx_node(d)["nvlink"].update(profile="dgxa100"),
     'unsupported HGX NVLink profile "dgxa100"', "nodes[0].nvlink"),
    ("HGX module duplicate", lambda d: pool(d, "hgx-pool").update(gpus=[
        {"nodeOrdinal": 0, "slot": 0, "hgxModuleId": 1}]),
     "HGX module IDs must be a permutation of [0,7]", "pools[2].gpus"),
    ("HGX module 8", lambda d: pool(d, "hgx-pool").update(gpus=[
        {"nodeOrdinal": 0, "slot": 7, "hgxModuleId": 8}]),
     "HGX module IDs must be a permutation of [0,7]", "pools[2].gpus"),
    ("HGX switch ordinal 4", lambda d: hgx_node(d)["nvlink"].update(switches=[{"ordinal": 4}]),
     "HGX switch ordinal out of range", "switches[0].ordinal"),
    ("HGX switch ordinal twice", lambda d: hgx_node(d)["nvlink"].update(
        switches=[{"ordinal": 1}, {"ordinal": 1}]), "duplicate HGX switch ordinal", "switches[1].ordinal"),
    ("HGX switch name", lambda d: hgx_node(d)["nvlink"].update(switches=[{"ordinal": 1, "name": "Bad_"}]),
     "invalid name", "switches[0].name"),
    ("HGX switch named like a node", lambda d: hgx_node(d)["nvlink"].update(
        switches=[{"ordinal": 1, "name": "pcie-node-0000"}]), "duplicate hostname pcie-node-0000", "switches"),
    ("HGX switch serials", lambda d: hgx_node(d)["nvlink"].update(
        switches=[{"ordinal": 1, "serial": "X"}, {"ordinal": 2, "serial": "X"}]), "duplicate serial X", "switches"),
    ("HGX partition not covering", lambda d: hgx_node(d)["nvlink"].update(partitions=[
        {"name": "left", "gpus": [f"gpu:hgx-node-0001/{s}" for s in range(4)]}]),
     "custom partitions do not cover domain GPUs", "nvlink.partitions"),
    ("HGX partitions overlapping", lambda d: hgx_node(d)["nvlink"].update(partitions=[
        {"name": "a", "gpus": [f"gpu:hgx-node-0001/{s}" for s in range(5)]},
        {"name": "b", "gpus": [f"gpu:hgx-node-0001/{s}" for s in range(4, 8)]}]),
     "custom partitions overlap or reference nonexistent GPU", "partitions[1]"),
    ("HGX partition with a foreign GPU", lambda d: hgx_node(d)["nvlink"].update(partitions=[
        {"name": "a", "gpus": ["gpu:hgx-node-0002/0"]}]),
     "custom partitions overlap or reference nonexistent GPU", "partitions[0]"),
    ("HGX entity of another node", lambda d: hgx_node(d)["nvlink"].update(entityMappings=[
        {"kind": "gpu", "key": "gpu:hgx-node-0002/0", "vendorId": "0", "source": SRC}]),
     "entity outside HGX node domain membership", "entityMappings[0].key"),
    ("HGX entity without source", lambda d: hgx_node(d)["nvlink"].update(entityMappings=[
        {"kind": "gpu", "key": "gpu:hgx-node-0001/0", "vendorId": "0"}]),
     "required field is missing", "entityMappings[0].source"),
    ("HGX entity duplicate vendor id", lambda d: hgx_node(d)["nvlink"].update(entityMappings=[
        {"kind": "gpu", "key": "gpu:hgx-node-0001/0", "vendorId": "0", "source": SRC},
        {"kind": "gpu", "key": "gpu:hgx-node-0001/1", "vendorId": "0", "source": SRC}]),
     "invalid entity mapping", "entityMappings[1]"),
    # -- NVL72 (§1.8)
    ("NVL72 domain name", lambda d: nvl72_block(d).update(domain="Domain_A"), "invalid name", "nvlink.domain"),
    ("NVL72 switch tray 9", lambda d: nvl72_block(d).update(switchTrays=[{"ordinal": 9}]),
     "switch tray out of range", "switchTrays[0].ordinal"),
    ("NVL72 switch tray twice", lambda d: nvl72_block(d).update(
        switchTrays=[{"ordinal": 1}, {"ordinal": 1}]), "duplicate switch tray", "switchTrays[1]"),
    ("NVL72 switch ordinal 2", lambda d: nvl72_block(d).update(
        switchTrays=[{"ordinal": 1, "switches": [{"ordinal": 2}]}]), "switch ordinal out of range", "switches[0]"),
    ("NVL72 switch override twice", lambda d: nvl72_block(d).update(
        switchTrays=[{"ordinal": 1, "switches": [{"ordinal": 0}, {"ordinal": 0}]}]),
     "duplicate switch override", "switches[1]"),
    ("NVL72 switch-tray BMC named like a node", lambda d: nvl72_block(d).update(
        switchTrays=[{"ordinal": 3, "bmc": {"name": "nvl-node-0000", "kind": "bmc"}}]),
     "duplicate hostname nvl-node-0000", "switchTrays[3].bmc.name"),
    ("NVL72 partitions overlapping", lambda d: nvl72_block(d).update(partitions=[
        {"name": "a", "gpus": ["gpu:nvl-node-0000/0"]}, {"name": "b", "gpus": ["gpu:nvl-node-0000/0"]}]),
     "custom partitions overlap or reference nonexistent GPU", "partitions[1]"),
    ("NVL72 partitions incomplete", lambda d: nvl72_block(d).update(partitions=[
        {"name": "a", "gpus": ["gpu:nvl-node-0000/0"]}]),
     "custom partitions do not cover domain GPUs", "nvlink.partitions"),
    ("NVL72 partition duplicate name", lambda d: nvl72_block(d).update(partitions=[
        {"name": "a", "gpus": ["gpu:nvl-node-0000/0"]}, {"name": "a", "gpus": ["gpu:nvl-node-0000/1"]}]),
     "invalid/duplicate partition", "partitions[1]"),
    ("NVL72 correlated without a map", lambda d: nvl72_block(d).update(correlated=True),
     "NVLink correlation requires complete sourced endpoint/vendor map", "racks[2].nvlink"),
    ("NVL72 unsourced link count", lambda d: nvl72_block(d).update(linksPerGpu=18),
     "linksPerGpu requires positive sourced count", "racks[2].nvlink"),
    ("NVL72 port outside domain", lambda d: nvl72_block(d).update(portMappings=[
        {"tray": 9, "switch": 0, "port": 0, "vendorId": "0", "source": SRC}]),
     "port outside domain", "portMappings[0]"),
    ("NVL72 duplicate vendor id", lambda d: nvl72_block(d).update(portMappings=[
        {"tray": 0, "switch": 0, "port": 0, "vendorId": "7", "source": SRC},
        {"tray": 0, "switch": 0, "port": 1, "vendorId": "7", "source": SRC}]),
     "duplicate vendor ID", "portMappings[1]"),
    ("NVL72 link to unmapped port", lambda d: nvl72_block(d).update(links=[
        {"gpu": "gpu:nvl-node-0000/0", "gpuLinkIndex": 0, "tray": 0, "switch": 0, "port": 0,
         "source": SRC}]), "invalid/duplicate sourced endpoint", "links[0]"),
    ("NVL72 entity outside the rack", lambda d: nvl72_block(d).update(entityMappings=[
        {"kind": "cpu", "key": "cpu:pcie-node-0000/0", "vendorId": "0", "source": SRC}]),
     "entity outside domain/rack membership", "entityMappings[0].key"),
    # -- schedulers (§1.10)
    ("duplicate scheduler", lambda d: spec(d)["schedulers"].append(
        {"name": "scheduler-a", "kind": "slurm", "pools": ["pcie-pool"]}),
     "invalid/duplicate scheduler name or kind", "schedulers[1].name"),
    ("scheduler kind", lambda d: sched(d).update(kind="k8s"),
     "invalid/duplicate scheduler name or kind", "schedulers[0].kind"),
    ("pool with two schedulers", lambda d: spec(d)["schedulers"].append(
        {"name": "scheduler-b", "kind": "runai", "pools": ["pcie-pool"]}),
     "pool has multiple schedulers of record", "schedulers[1].pools[0]"),
    ("unknown scheduler pool", lambda d: sched(d)["pools"].append("nope"),
     "unknown scheduler pool", "schedulers[0].pools[3]"),
    ("empty scheduler pools", lambda d: sched(d).update(pools=[]),
     "duplicate/empty scheduler pools", "schedulers[0]"),
    ("duplicate project", lambda d: sched(d)["projects"].append({"name": "research"}),
     "duplicate project key", "schedulers[0].projects[2]"),
    ("negative quota", lambda d: sched(d)["projects"][0].update(gpuQuota=-1),
     "invalid project/quota/partition", "projects[0]"),
    ("slurm project without partition", lambda d: sched(d).update(kind="slurm"),
     "invalid project/quota/partition", "schedulers[0]"),
    ("duplicate workload", lambda d: sched(d)["workloads"].append(dict(workload(d, "serving-a"))),
     "invalid/duplicate workload key/role", "workloads[3].name"),
    ("workload role", lambda d: workload(d, "serving-a").update(role="gaming"),
     "invalid/duplicate workload key/role", "workloads[1].role"),
    ("unknown project", lambda d: workload(d, "serving-a").update(project="nope"),
     "unknown project", "workloads[1].project"),
    ("worker slot out of range", lambda d: workload(d, "serving-a")["workers"][0].update(gpuSlots=[4]),
     "worker requests nonexistent GPU", "workloads[1].workers[0]"),
    ("worker node out of range", lambda d: workload(d, "serving-a")["workers"][0].update(nodeOrdinal=2),
     "worker requests nonexistent GPU", "workloads[1].workers[0]"),
    ("same GPU twice in a job", lambda d: workload(d, "serving-a")["workers"].append(
        {"name": "worker-1", "pool": "pcie-pool", "nodeOrdinal": 0, "gpuSlots": [0]}),
     "conflicting within-job GPU lists", "gpuSlots"),
    ("worker outside scheduler pools", lambda d: sched(d).update(pools=["hgx-pool", "nvl-pool"]),
     "duplicate worker key or worker outside scheduler pools", "workloads"),
    ("duplicate worker", lambda d: workload(d, "serving-a")["workers"].append(
        {"name": "worker-0", "pool": "pcie-pool", "nodeOrdinal": 1, "gpuSlots": [0]}),
     "duplicate worker key or worker outside scheduler pools", "workloads[1].workers"),
    ("workload without workers", lambda d: workload(d, "serving-a").update(workers=[]),
     "workload requires workers", "workloads[1]"),
    ("cycle too short", lambda d: workload(d, "training-a").update(cycle="4h"),
     "durations must fit cycle", "workloads[0]"),
    ("running min above max", lambda d: workload(d, "training-a").update(runningMin="5h"),
     "durations must fit cycle", "workloads[0]"),
    ("1s duration", lambda d: workload(d, "training-a").update(pendingFor="1s"),
     "durations must be positive whole multiples of 60 seconds", "workloads[0].pendingFor"),
    ("malformed duration", lambda d: workload(d, "training-a").update(cycle="6 hours"),
     "durations must be positive whole multiples of 60 seconds", "workloads[0].cycle"),
    ("amplitude beyond 1", lambda d: workload(d, "training-a")["demand"].update(utilizationAmplitude=0.4),
     "demand envelope/memory accounting outside bounds", "workloads[0].demand"),
    ("amplitude below 0", lambda d: workload(d, "serving-a")["demand"].update(utilizationBase=0.05),
     "demand envelope/memory accounting outside bounds", "workloads[1].demand"),
    ("memory fractions above 1", lambda d: workload(d, "training-a")["demand"].update(
        memoryDynamicFraction=0.5), "demand envelope/memory accounting outside bounds", "demand"),
    ("requests on a training job", lambda d: workload(d, "training-a")["demand"].update(
        requestsPerSecondAtFullUtilization=1), "demand envelope/memory accounting outside bounds",
     "workloads[0]"),
    ("malformed period", lambda d: workload(d, "finetune-a")["demand"].update(period="often"),
     "demand period must be positive when supplied or amplitude nonzero", "workloads[2].demand"),
    ("zero period", lambda d: workload(d, "finetune-a")["demand"].update(period="0s"),
     "demand period must be positive when supplied or amplitude nonzero", "workloads[2].demand"),
    ("negative period", lambda d: workload(d, "finetune-a")["demand"].update(period="-1h"),
     "demand period must be positive when supplied or amplitude nonzero", "workloads[2].demand"),
    ("amplitude without period", lambda d: workload(d, "training-a")["demand"].pop("period"),
     "demand period must be positive when supplied or amplitude nonzero", "workloads[0].demand"),
    ("pod name too long", lambda d: workload(d, "serving-a")["workers"][0].update(name="w" * 40),
     "generated pod name exceeds limit or duplicates", "workloads[1].workers[0]"),
    ("Kubernetes worker without namespace", lambda d: workload(d, "serving-a").pop("namespace"),
     "Kubernetes workers require namespace/container", "workloads[1]"),
    ("standalone worker with namespace", lambda d: pool(d, "pcie-pool").pop("kubernetesCluster"),
     "standalone workers omit namespace/container", "workloads[1]"),
    ("mixed workers", lambda d: (pool(d, "pcie-pool").pop("kubernetesCluster"),
                                 workload(d, "training-a")["workers"].append(
        {"name": "worker-2", "pool": "pcie-pool", "nodeOrdinal": 1, "gpuSlots": [0]})),
     "mixed Kubernetes/standalone workers", "workloads[0].workers"),
    # -- faults (our declaration of §1.12 scenario effects)
    ("fault on an unknown target", lambda d: spec(d).update(faults=[
        {"mode": "gpu_xid_burst", "target": "gpu:nope-0000/0"}]), "unknown fault target", "faults[0].target"),
    ("fault mode", lambda d: spec(d).update(faults=[{"mode": "Xid!", "target": "gpu:x/0"}]),
     "invalid fault mode", "faults[0].mode"),
    ("fault target without a kind", lambda d: spec(d).update(faults=[{"mode": "x", "target": "nope"}]),
     "fault target must be a key", "faults[0].target"),
    ("fault window backwards", lambda d: spec(d).update(faults=[
        {"mode": "gpu_xid_burst", "target": "gpu:pcie-node-0000/0",
         "window": {"start": "2026-10-02T01:00:00Z", "end": "2026-10-02T00:00:00Z"}}]),
     "fault window must end after it starts", "faults[0].window"),
    ("fault window without zone", lambda d: spec(d).update(faults=[
        {"mode": "gpu_xid_burst", "target": "gpu:pcie-node-0000/0",
         "window": {"start": "2026-10-02T01:00:00"}}]),
     "timezone", "faults[0].window"),
    ("fault intensity", lambda d: spec(d).update(faults=[
        {"mode": "gpu_xid_burst", "target": "gpu:pcie-node-0000/0", "intensity": -1}]),
     "greater than or equal to 0", "faults[0].intensity"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("mutate", "reason", "where"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_broken_declaration_is_refused_with_its_reason_and_field(
    doc: Doc, refused: Callable[[Doc], list[Any]], mutate: Mutation, reason: str, where: str
) -> None:
    mutate(doc)
    errors = refused(doc)
    assert errors, "the declaration was accepted"
    hits = [e for e in errors if reason in e.message]
    assert hits, [str(e) for e in errors]
    assert where in (hits[0].location.field or ""), str(hits[0])
    assert hits[0].location.obj == "Fleet/ai-factory"
    assert hits[0].location.file == "test.yaml"


def test_the_unbroken_declaration_builds(doc: Doc, refused: Callable[[Doc], list[Any]]) -> None:
    assert refused(doc) == []


@pytest.mark.parametrize("count", [4, 5, 6, 7, 8])
def test_pcie_servers_take_four_to_eight_gpus(
    doc: Doc, refused: Callable[[Doc], list[Any]], count: int
) -> None:
    pool(doc, "pcie-pool")["gpusPerNode"] = count
    assert refused(doc) == []
