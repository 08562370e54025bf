"""The simulator on real built fleets: golden values end to end, fault validity, reach."""

from __future__ import annotations

import numpy as np
import pytest

from glimmer.errors import InputError
from glimmer.fleet.load import load_topology
from glimmer.fleet.topology import Topology
from glimmer.sim.allocation import Phase
from glimmer.sim.clock import EPOCH
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim

HGX_DOMAIN = "domain:site-a/hgx-a/hgx/hgx-node-0000/baseboard"


@pytest.fixture(scope="module")
def fixture_topo() -> Topology:
    return load_topology("ai-factory-fixture")


@pytest.fixture(scope="module")
def hgx_topo() -> Topology:
    return load_topology("hgx-fixture")


def test_reference_fleet_reproduces_appendix_a(fixture_topo: Topology) -> None:
    sim = FleetSim(fixture_topo)
    state = sim.state_at(EPOCH)
    assert all(w.phase is Phase.RUNNING for w in state.allocation.workloads)
    ops = state.operating
    g0 = sim.gpu_index("gpu:nvl-node-0000/0")
    assert ops.power_w[g0] == pytest.approx(980.490, abs=5e-4)
    assert ops.temperature_c[g0] == pytest.approx(57.683, abs=5e-4)
    assert ops.memory_used_bytes[g0] == 126_333_632_982
    racks = [r.key for r in fixture_topo.racks]
    assert ops.rack_power_w[racks.index("rack:site-a/nvl-a")] == pytest.approx(26_095.40, abs=5e-3)
    assert ops.rack_power_w[racks.index("rack:site-a/pcie-a")] == pytest.approx(1_201.52, abs=5e-3)


def test_rack_cooling_golden_through_a_declared_style_fault(fixture_topo: Topology) -> None:
    sim = FleetSim(fixture_topo, [Fault("gpu_cooling_fault", "rack:site-a/nvl-a", 0.5)])
    ops = sim.state_at(EPOCH).operating
    r = [x.key for x in fixture_topo.racks].index("rack:site-a/nvl-a")
    assert ops.rack_power_w[r] == pytest.approx(25_011.29, abs=5e-3)
    assert ops.rack_return_temp_c[r] == pytest.approx(34.8934, abs=5e-5)


@pytest.mark.parametrize(
    ("mode", "target", "needle"),
    [
        ("gpu_low_pstate", "rack:site-a/nvl-a", "cannot target"),
        ("gpu_low_pstate", "gpu:nvl-node-0099/0", "no target"),
        ("no_such_mode", "gpu:nvl-node-0000/0", "unknown fault mode"),
        ("gpu_nvlink_error_burst", "gpu:nvl-node-0000/0", "reaches_edge"),
        ("gpu_nvswitch_tray_failure", "tray:site-a/nvl-a/compute/0", "nvswitch_tray"),
        ("gpu_leak_detected", "rack:site-a/pcie-a", "liquid_rack"),
    ],
)
def test_a_fault_the_fleet_cannot_take_is_refused_by_name(
    fixture_topo: Topology, mode: str, target: str, needle: str
) -> None:
    with pytest.raises(InputError) as err:
        FleetSim(fixture_topo, [Fault(mode, target)])
    assert needle in str(err.value)
    assert f"{mode}@{target}" in str(err.value)


def test_congestion_refuses_a_frontend_port_and_takes_a_backend_one(fixture_topo: Topology) -> None:
    nics = {n.role: n for node in fixture_topo.nodes for n in node.nics}
    with pytest.raises(InputError, match="backend"):
        FleetSim(fixture_topo, [Fault("gpu_backend_congestion", nics["frontend"].port_key)])
    sim = FleetSim(fixture_topo, [Fault("gpu_backend_congestion", nics["backend"].port_key)])
    assert sim.state_at(EPOCH).levels.of("gpu_backend_congestion").max() == 1.0


def test_hgx_burst_reach_and_overlap_by_maximum(hgx_topo: Topology) -> None:
    sim = FleetSim(
        hgx_topo,
        [
            Fault("gpu_nvlink_error_burst", HGX_DOMAIN, 0.5),
            Fault("gpu_nvlink_error_burst", "gpu:hgx-node-0000/0", 0.5),
        ],
    )
    ops = sim.state_at(EPOCH).operating
    assert ops.edge_errors_per_second.size == 144
    assert ops.edge_errors_per_second.sum() == pytest.approx(72.0)  # not 81


def test_hgx_gpu_burst_reaches_its_18_edges_only(hgx_topo: Topology) -> None:
    sim = FleetSim(hgx_topo, [Fault("gpu_nvlink_error_burst", "gpu:hgx-node-0000/3", 0.5)])
    rates = sim.state_at(EPOCH).operating.edge_errors_per_second
    assert np.count_nonzero(rates) == 18 and set(rates[rates > 0].tolist()) == {0.5}


def test_low_pstate_and_thermal_paste_move_clock_and_temperature(hgx_topo: Topology) -> None:
    base = FleetSim(hgx_topo, noise=False).state_at(EPOCH).operating
    sim = FleetSim(
        hgx_topo,
        [
            Fault("gpu_low_pstate", "gpu:hgx-node-0000/1"),
            Fault("gpu_thermal_paste_degraded", "gpu:hgx-node-0000/2"),
        ],
        noise=False,
    )
    ops = sim.state_at(EPOCH).operating
    assert ops.clock_fraction[1] == pytest.approx(0.2)
    assert ops.clock_fraction[0] == 1.0
    assert ops.temperature_c[2] > base.temperature_c[2]
    assert ops.temperature_c[0] == base.temperature_c[0]


def test_active_faults_respect_windows(fixture_topo: Topology) -> None:
    from glimmer.sim.faults import Window

    fault = Fault("gpu_xid_burst", "node:nvl-node-0003", 1.0, Window(EPOCH, EPOCH + 600))
    sim = FleetSim(fixture_topo, [fault])
    assert sim.active_faults(EPOCH - 1) == ()
    assert len(sim.faults_on(EPOCH + 599, "node:nvl-node-0003")) == 1
    assert sim.active_faults(EPOCH + 600) == ()


def _with_declared_faults(topo: Topology, faults: list[dict[str, object]]) -> Topology:
    from glimmer.api.fleet import Fault as Declared
    from glimmer.fleet.build import build

    spec = topo.fleet.spec.model_copy(
        update={"faults": [Declared.model_validate(f) for f in faults]}
    )
    return build(topo.fleet.model_copy(update={"spec": spec}))


def test_declared_faults_act_inside_their_window(fixture_topo: Topology) -> None:
    topo = _with_declared_faults(
        fixture_topo,
        [{"mode": "gpu_fallen_off_bus", "target": "gpu:nvl-node-0000/2",
          "window": {"start": "2026-10-02T00:10:00Z", "end": "2026-10-02T00:20:00Z"}}],
    )  # fmt: skip
    sim = FleetSim(topo)
    training = "gpuworkload:scheduler-a/training-a"
    before = sim.state_at(EPOCH + 300).allocation.status(training)
    during = sim.state_at(EPOCH + 900).allocation.status(training)
    after = sim.state_at(EPOCH + 1200).allocation.status(training)
    assert before is not None and before.phase is Phase.RUNNING
    assert during is not None and during.phase is Phase.FAILED
    assert after is not None and after.phase is Phase.RUNNING


def test_a_declared_fault_on_a_wrong_target_is_refused(fixture_topo: Topology) -> None:
    topo = _with_declared_faults(
        fixture_topo, [{"mode": "gpu_leak_detected", "target": "rack:site-a/pcie-a"}]
    )
    with pytest.raises(InputError, match="declared fault gpu_leak_detected@rack:site-a/pcie-a"):
        FleetSim(topo)


def test_physics_refuses_a_plan_from_a_rebuilt_or_copied_topology(fixture_topo: Topology) -> None:
    import copy

    from glimmer.sim.physics import OperatingPointError

    sim = FleetSim(fixture_topo)
    rebuilt = FleetSim(load_topology("ai-factory-fixture"))
    foreign = rebuilt.allocation_at(EPOCH)
    with pytest.raises(OperatingPointError, match="snapshot origin differs from topology"):
        sim.operating_points(foreign)
    own = sim.allocation_at(EPOCH)
    with pytest.raises(OperatingPointError, match="origin"):
        sim.operating_points(copy.deepcopy(own))
    _, ops = sim.operating_points(own)
    assert ops.power_w.shape == (fixture_topo.gpu_count,)


def test_physics_refuses_an_inconsistent_holding(fixture_topo: Topology) -> None:
    from dataclasses import replace

    from glimmer.sim.physics import HELD, OperatingPointError

    sim = FleetSim(fixture_topo)
    own = sim.allocation_at(EPOCH)
    state = own.holding.state.copy()
    state[10] = HELD  # held, but by no workload
    bad = replace(own, holding=replace(own.holding, state=state))
    with pytest.raises(OperatingPointError, match="unknown workload key"):
        sim.operating_points(bad)
