"""Telemetry and its Prometheus exposition: names, labels, faults, determinism, promtool."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from glimmer.fleet.load import load_topology
from glimmer.fleet.topology import Topology
from glimmer.sim.clock import EPOCH
from glimmer.sim.exposition import Family, MetricType, SeriesSet, escape_label_value, label_block
from glimmer.sim.faults import Fault, Window
from glimmer.sim.telemetry import SERIES
from glimmer.sim.twin import FleetSim

_LINE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{.*\})? (\S+)$")


def samples(text: str) -> dict[tuple[str, str], float]:
    out: dict[tuple[str, str], float] = {}
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        m = _LINE.match(line)
        assert m, line
        out[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return out


def value(text: str, name: str, **labels: str) -> float:
    found = [
        v
        for (n, lb), v in samples(text).items()
        if n == name and all(f'{k}="{x}"' in lb for k, x in labels.items())
    ]
    assert len(found) == 1, (name, labels, found)
    return found[0]


@pytest.fixture(scope="module")
def fixture_topo() -> Topology:
    return load_topology("ai-factory-fixture")


@pytest.fixture(scope="module")
def hgx_topo() -> Topology:
    return load_topology("hgx-fixture")


def test_gpu_series_carry_dcgm_names_and_labels(fixture_topo: Topology) -> None:
    text = FleetSim(fixture_topo).exposition_at(EPOCH)
    line = next(x for x in text.splitlines() if x.startswith("DCGM_FI_DEV_GPU_UTIL{"))
    for label in ("gpu", "UUID", "device", "modelName", "Hostname", "pci_bus_id"):
        assert f'{label}="' in line
    for s in SERIES:
        assert f"# TYPE {s.family.name} {s.family.type}" in text
        assert f"# HELP {s.family.name} " in text
    # 80 GPUs, all visible: every per-GPU family of always-present series has 80 samples.
    assert text.count("\nDCGM_FI_DEV_POWER_USAGE{") == 80


def test_utilisation_power_and_memory_follow_the_operating_point(fixture_topo: Topology) -> None:
    sim = FleetSim(fixture_topo, noise=False)
    text = sim.exposition_at(EPOCH)
    gpu0 = {"Hostname": "nvl-node-0000", "gpu": "0"}
    assert value(text, "DCGM_FI_DEV_GPU_UTIL", **gpu0) == 79
    assert value(text, "DCGM_FI_DEV_POWER_USAGE", **gpu0) == pytest.approx(980.490, abs=1e-3)
    assert value(text, "DCGM_FI_DEV_GPU_TEMP", **gpu0) == 58
    assert value(text, "DCGM_FI_DEV_FB_USED", **gpu0) == 126_333_632_982 // 2**20
    assert value(text, "glimmer_node_power_watts", Hostname="nvl-node-0000") == pytest.approx(
        4439.70, abs=2e-3
    )


def test_same_seed_and_instant_give_the_same_exposition(fixture_topo: Topology) -> None:
    a = FleetSim(fixture_topo).exposition_at(EPOCH + 90)
    b = FleetSim(load_topology("ai-factory-fixture")).exposition_at(EPOCH + 90)
    assert a == b
    c = FleetSim(fixture_topo).exposition_at(EPOCH + 91)
    assert a != c  # the noise moves from one second to the next


def test_noise_is_small_and_centred(fixture_topo: Topology) -> None:
    sim = FleetSim(fixture_topo)
    clean = FleetSim(fixture_topo, noise=False)
    noisy = [value(sim.exposition_at(EPOCH + s), "DCGM_FI_DEV_POWER_USAGE",
                   Hostname="nvl-node-0002", gpu="0") for s in range(40)]  # fmt: skip
    exact = value(clean.exposition_at(EPOCH), "DCGM_FI_DEV_POWER_USAGE",
                  Hostname="nvl-node-0002", gpu="0")  # fmt: skip
    assert abs(np.mean(noisy) - exact) < 0.01 * exact
    assert max(abs(x - exact) for x in noisy) < 0.05 * exact


def test_a_gpu_that_fell_off_the_bus_leaves_the_exporter(fixture_topo: Topology) -> None:
    sim = FleetSim(fixture_topo, [Fault("gpu_fallen_off_bus", "gpu:nvl-node-0005/2")])
    text = sim.exposition_at(EPOCH)
    assert text.count("\nDCGM_FI_DEV_POWER_USAGE{") == 79
    assert 'Hostname="nvl-node-0005"} ' not in "".join(
        x for x in text.splitlines() if x.startswith("DCGM_FI_DEV_POWER_USAGE") and 'gpu="2"' in x
    )
    assert value(text, "glimmer_node_gpus_visible", Hostname="nvl-node-0005") == 3


def test_ecc_faults_count_up_and_set_the_xid(hgx_topo: Topology) -> None:
    fault = Fault("gpu_ecc_uncorrectable", "gpu:hgx-node-0000/4", 1.0, Window(EPOCH, None))
    sim = FleetSim(hgx_topo, [fault])
    early, later = sim.exposition_at(EPOCH + 20), sim.exposition_at(EPOCH + 200)
    gpu4 = {"gpu": "4"}
    assert value(early, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", **gpu4) == 1
    assert value(later, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", **gpu4) == 10
    assert value(later, "DCGM_FI_DEV_XID_ERRORS", **gpu4) == 48
    assert value(later, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", gpu="3") == 0


def test_nvlink_crc_integrates_the_per_gpu_edge_sum(hgx_topo: Topology) -> None:
    """§7: 0.5/s on each of a GPU's 18 edges for 10 s → 90 CRC errors."""
    fault = Fault("gpu_nvlink_error_burst", "gpu:hgx-node-0000/0", 0.5, Window(EPOCH, EPOCH + 10))
    sim = FleetSim(hgx_topo, [fault])
    text = sim.exposition_at(EPOCH + 3600)
    assert value(text, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", gpu="0") == 90
    assert value(text, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", gpu="1") == 0


def test_overlapping_counter_faults_integrate_the_maximum(hgx_topo: Topology) -> None:
    faults = [
        Fault("gpu_nvlink_error_burst", "gpu:hgx-node-0000/0", 0.5, Window(EPOCH, EPOCH + 20)),
        Fault("gpu_nvlink_error_burst", "gpu:hgx-node-0000/0", 1.0, Window(EPOCH + 10, EPOCH + 20)),
    ]
    text = FleetSim(hgx_topo, faults).exposition_at(EPOCH + 100)
    # 10 s at 0.5 then 10 s at 1.0 (not 1.5) on 18 edges at 1 error/s: 18 × (5 + 10) = 270.
    assert value(text, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", gpu="0") == 270


def test_low_pstate_shows_in_the_sm_clock(hgx_topo: Topology) -> None:
    sim = FleetSim(hgx_topo, [Fault("gpu_low_pstate", "node:hgx-node-0000")], noise=False)
    text = sim.exposition_at(EPOCH)
    clocks = [v for (n, _), v in samples(text).items() if n == "DCGM_FI_DEV_SM_CLOCK"]
    assert len(clocks) == 8 and max(clocks) <= 0.2 * 1980


def test_nic_faults_show_link_state(fixture_topo: Topology) -> None:
    node = next(n for n in fixture_topo.nodes if n.hostname == "pcie-node-0001")
    nic = node.nics[0]
    sim = FleetSim(fixture_topo, [Fault("nic_link_down", nic.key)])
    text = sim.exposition_at(EPOCH)
    assert value(text, "glimmer_nic_link_up", Hostname="pcie-node-0001", nic=nic.name) == 0
    assert value(text, "glimmer_nic_link_up", Hostname="pcie-node-0000", nic=nic.name) == 1


def test_label_values_are_escaped() -> None:
    assert escape_label_value('a"b\\c\nd') == 'a\\"b\\\\c\\nd'
    assert label_block({"x": 'q"'}) == '{x="q\\""}'
    family = Family("glimmer_test_value", "help with \\ and\nnewline", MetricType.GAUGE, 2)
    text = SeriesSet(family, [label_block({"host": 'we"ird\\'})]).render(np.array([1.5]))
    assert "# HELP glimmer_test_value help with \\\\ and\\nnewline\n" in text
    assert 'glimmer_test_value{host="we\\"ird\\\\"} 1.50\n' in text


def test_non_finite_values_print_as_prometheus_words() -> None:
    family = Family("glimmer_x", "x", MetricType.GAUGE, 1)
    text = SeriesSet(family, ["", "", ""]).render(np.array([np.nan, np.inf, -np.inf]))
    assert text.splitlines()[2:] == ["glimmer_x NaN", "glimmer_x +Inf", "glimmer_x -Inf"]


# dcgm-exporter's own names break two of promtool's style lints (camelCase labels such as
# modelName/UUID/Hostname, and counters ending in "_TOTAL" rather than "_total"); the spec
# requires those names, so those findings are expected. Anything else is a failure.
_EXPECTED_LINTS = (
    "label names should be written in 'snake_case' not 'camelCase'",
    'counter metrics should have "_total" suffix',
)


def _promtool(promtool: str, text: str) -> list[str]:
    done = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60
    )
    assert done.returncode in (0, 3), done.stdout + done.stderr
    assert "error while linting" not in done.stdout + done.stderr
    return sorted({line for line in (done.stdout + done.stderr).splitlines() if line.strip()})


def test_promtool_accepts_the_exposition(promtool: str, hgx_topo: Topology) -> None:
    faults = [
        Fault("gpu_nvlink_error_burst", "gpu:hgx-node-0000/0", 0.5),
        Fault("gpu_fallen_off_bus", "gpu:hgx-node-0000/7"),
        Fault("gpu_ecc_correctable", "gpu:hgx-node-0000/1"),
    ]
    text = FleetSim(hgx_topo, faults).exposition_at(EPOCH + 600)
    for finding in _promtool(promtool, text):
        name, _, problem = finding.partition(" ")
        assert problem in _EXPECTED_LINTS, finding
        if problem == _EXPECTED_LINTS[1]:
            assert name.startswith("DCGM_FI_DEV_")


def test_promtool_finds_nothing_in_our_own_series(promtool: str, fixture_topo: Topology) -> None:
    text = FleetSim(fixture_topo).exposition_at(EPOCH)
    own = "".join(
        block
        for block in re.split(r"(?=# HELP )", text)
        if block.startswith("# HELP glimmer_rack_")
    )
    assert own
    assert _promtool(promtool, own) == []
