"""Appendix A and §6/§8 golden values on the reference fixture (specs/fleet.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference_fleet import (
    NVL_RACK,
    PCIE_RACK,
    SERVING,
    T0,
    TRAINING,
    Reference,
    build_reference,
    gpu,
    nvl,
    pcie,
    simulate,
    with_rack_device_watts,
)

from glimmer.sim.faults import Fault

NVL0, NVL2 = 0, 2  # node indices of nvl-node-0000 and nvl-node-0002
NVL_R, PCIE_R = 0, 1


def test_reference_instant_gpu_node_and_rack_figures(reference: Reference) -> None:
    _, ops = simulate(reference)
    g0 = gpu(nvl(0), 0)
    assert ops.demand_utilization[g0] == pytest.approx(0.7921308055, abs=1e-10)
    assert ops.power_w[g0] == pytest.approx(980.490, abs=5e-4)
    assert ops.temperature_c[g0] == pytest.approx(57.683, abs=5e-4)
    assert ops.memory_used_bytes[g0] == 126_333_632_982
    assert ops.node_power_w[NVL0] == pytest.approx(4439.70, abs=5e-3)
    assert ops.node_power_w[NVL2] == pytest.approx(826.0)
    assert ops.rack_power_w[NVL_R] == pytest.approx(26_095.40, abs=5e-3)
    assert ops.rack_liquid_heat_w[NVL_R] == pytest.approx(23_485.86, abs=5e-3)
    assert ops.rack_return_temp_c[NVL_R] == pytest.approx(26.8729, abs=5e-5)
    assert ops.rack_power_w[PCIE_R] == pytest.approx(1_201.52, abs=5e-3)
    serving = 0  # workloads in key order: serving-a, training-a
    assert ops.workload_requests_per_second[serving] == pytest.approx(3.6299, abs=5e-5)


def test_air_rack_has_no_liquid_figures(reference: Reference) -> None:
    _, ops = simulate(reference)
    assert ops.rack_liquid_heat_w[PCIE_R] == 0.0
    for values in (ops.rack_flow_lpm, ops.rack_supply_temp_c, ops.rack_return_temp_c):
        assert math.isnan(values[PCIE_R])


def test_rack_cooling_at_half_intensity_cuts_flow_and_raises_supply(reference: Reference) -> None:
    _, ops = simulate(reference, faults=(Fault("gpu_cooling_fault", NVL_RACK, 0.5),))
    assert ops.rack_power_w[NVL_R] == pytest.approx(25_011.29, abs=5e-3)
    assert ops.rack_flow_lpm[NVL_R] == pytest.approx(135.0)
    assert ops.rack_supply_temp_c[NVL_R] == pytest.approx(32.5)
    assert ops.rack_return_temp_c[NVL_R] == pytest.approx(34.8934, abs=5e-5)


def test_declared_device_watts_add_to_the_rack(reference: Reference) -> None:
    ref = with_rack_device_watts(reference, 100.0)  # a 100 W test PDU in the NVL72 rack
    _, ops = simulate(ref)
    assert ops.rack_power_w[NVL_R] == pytest.approx(26_095.40 + 100.0, abs=5e-3)


def test_node_power_is_gpu_sum_plus_base_cores_and_nics(reference: Reference) -> None:
    _, ops = simulate(reference)
    load = ops.node_load_fraction[NVL0]
    gpus = ops.power_w[0:4].sum()
    assert ops.node_power_w[NVL0] == pytest.approx(gpus + 250 + 2 * 144 * load + 10 * 5 * load)


def test_full_cooling_fault_and_fallen_gpu_give_idle_gpus_44_8_c(reference: Reference) -> None:
    faults = (
        Fault("gpu_cooling_fault", NVL_RACK, 1.0),
        Fault("gpu_fallen_off_bus", f"gpu:{nvl(0)}/0", 1.0),
    )
    allocation, ops = simulate(reference, faults=faults)
    for slot in (0, 1):
        g = gpu(nvl(0), slot)
        assert ops.utilization[g] == 0.0
        assert ops.power_w[g] == pytest.approx(144.0)
        assert ops.cooling_derate[g] == pytest.approx(0.7)
        assert ops.temperature_c[g] == pytest.approx(44.8)
    assert not ops.available[gpu(nvl(0), 0)]
    training = 1
    assert ops.workload_effective_utilization[training] == 0.0
    assert ops.workload_demand_utilization[training] == 0.0
    assert ops.workload_memory_used_bytes[training] == 0.0
    assert allocation.status(TRAINING) is not None


def test_inference_under_backend_congestion_on_one_node() -> None:
    """§6.5: base 0.5 on 8 GB200, rps 10, congestion I=1 on one node's 4 GPUs."""
    from dataclasses import replace

    from glimmer.sim.allocation import Schedule, WorkloadSpec

    ref = build_reference()
    w = ref.columns.workloads
    flat = replace(
        w,
        utilization_base=np.array([0.5, 0.7]),
        utilization_amplitude=np.array([0.0, 0.1]),
        memory_reserved_fraction=np.array([0.65, 0.6]),
        memory_dynamic_fraction=np.array([0.0, 0.1]),
    )
    eight = tuple(gpu(nvl(n), s) for n in (2, 3) for s in range(4))
    serving = WorkloadSpec(SERVING, "scheduler:scheduler-a", "project:scheduler-a/serving", 20,
                           1440, 1, 1380, 1380, eight)  # fmt: skip
    schedule = Schedule(ref.seed, (serving, ref.schedule.workloads[1]),
                        {"project:scheduler-a/research": 8, "project:scheduler-a/serving": 8},
                        ref.schedule.n_gpus)  # fmt: skip
    ref = replace(ref, schedule=schedule, columns=replace(ref.columns, workloads=flat))
    ref.reach.gpu_map["port:backend-a/backend-leaf-0/swp3"] = [gpu(nvl(2), s) for s in range(4)]
    _, ops = simulate(ref, faults=(Fault("gpu_backend_congestion",
                                         "port:backend-a/backend-leaf-0/swp3"),))  # fmt: skip
    assert ops.workload_effective_utilization[0] == pytest.approx(0.35)
    assert ops.workload_requests_per_second[0] == pytest.approx(28.0)
    assert ops.workload_memory_used_bytes[0] == 8 * math.floor(186e9 * 0.65)


def test_zero_intensity_fault_reproduces_the_baseline_exactly(reference: Reference) -> None:
    _, base = simulate(reference)
    _, zero = simulate(reference, faults=(Fault("gpu_cooling_fault", NVL_RACK, 0.0),))
    for name in ("power_w", "temperature_c", "utilization", "node_power_w", "rack_power_w"):
        assert np.array_equal(getattr(base, name), getattr(zero, name), equal_nan=True)


def test_pcie_rack_is_nodes_plus_fixed_overhead(reference: Reference) -> None:
    _, ops = simulate(reference)
    nodes = ops.node_power_w[18:20].sum()
    assert ops.rack_power_w[PCIE_R] == pytest.approx(nodes + 200.0)
    assert gpu(pcie(0), 0) == 72 and PCIE_RACK.endswith("pcie-a")


def test_operating_points_are_deterministic_across_builds() -> None:
    _, a = simulate(build_reference(), T0 + 3600)
    _, b = simulate(build_reference(), T0 + 3600)
    assert np.array_equal(a.power_w, b.power_w)
