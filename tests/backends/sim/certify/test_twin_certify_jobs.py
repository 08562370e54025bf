"""The twin's certification jobs (backends/sim/certify): simulated nccl-tests and training logs
are read by the same parsers as real ones, and their figures follow the fleet's links,
operating points and faults."""

from __future__ import annotations

import pytest

from glimmer.backends.sim.certify.dcgm import run_dcgm
from glimmer.backends.sim.certify.nccl import run_nccl
from glimmer.backends.sim.certify.training import run_training
from glimmer.certify.jobs import NcclJob, TrainingJob
from glimmer.certify.measure.bandwidth import NCCL_BANDWIDTH, bus_factor, parse_table
from glimmer.certify.measure.expect import floor, network_expectation, nvlink_expectation
from glimmer.certify.measure.goodput import parse_training
from glimmer.fleet.load import load_topology
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim

TOPO = load_topology("ai-factory")
NVL = tuple(n.hostname for n in TOPO.nodes if n.hostname.startswith("nvl-"))
HGX = ("hgx-node-0001", "hgx-node-0002")


def _sim(*faults: tuple[str, str]) -> FleetSim:
    return FleetSim(TOPO, [Fault(m, t) for m, t in faults])


def _peak(
    twin: FleetSim, nodes: tuple[str, ...], nvlink: bool = True, coll: str = "all_reduce"
) -> float:
    log = run_nccl(twin, NcclJob("g", coll, nodes, nvlink))
    peak = parse_table(log.text).peak_bus_bw()
    assert peak is not None, log.text
    return peak


def test_simulated_log_is_a_full_nccl_tests_table() -> None:
    log = run_nccl(_sim(), NcclJob("g", "all_reduce", NVL[:4], nvlink=False))
    table = parse_table(log.text)
    assert log.exit_code == 0 and log.path == "network"
    assert len(table.rows) == 32 and table.avg_bus_bw is not None and table.wrong == 0
    assert "# Using devices" in log.text and "#  Rank 15" in log.text
    assert len(NCCL_BANDWIDTH.parse(log.text)) == 32  # the LogProfile recipe reads it too
    big = table.rows[-1].out_of_place
    assert big.bus_bw == pytest.approx(big.alg_bw * bus_factor("all_reduce", 16), rel=0.01)


def test_same_job_same_log() -> None:
    job = NcclJob("g", "all_gather", HGX, nvlink=False, seed=3)
    assert run_nccl(_sim(), job).text == run_nccl(_sim(), job).text


def test_healthy_paths_reach_their_expectations() -> None:
    nvl = _peak(_sim(), NVL)
    exp = nvlink_expectation("NVIDIA-GB200", "all_reduce")
    assert exp is not None and floor(exp) < nvl < exp.value * 1.05
    net = _peak(_sim(), HGX, nvlink=False)
    assert floor(network_expectation(4, 400.0)) < net < network_expectation(4, 400.0).value


def test_nic_fault_hides_behind_nvlink_and_shows_over_the_fabric() -> None:
    sick = _sim(("nic_degraded", "nic:nvl-node-0003/eth2"))
    assert _peak(sick, NVL) == pytest.approx(_peak(_sim(), NVL), rel=0.02)
    assert _peak(sick, NVL, nvlink=False) < 0.6 * _peak(_sim(), NVL, nvlink=False)
    # Only groups holding the node are slow.
    assert _peak(sick, NVL[:2], nvlink=False) > floor(network_expectation(4, 400.0))


def test_down_port_and_memlock_stop_the_job_with_nccls_error() -> None:
    log = run_nccl(
        _sim(("nic_link_down", "nic:hgx-node-0002/eth3")), NcclJob("g", "all_reduce", HGX, False)
    )
    assert log.exit_code == 1 and "hgx-node-0002:eth3 port state DOWN" in log.error
    assert parse_table(log.text).rows == ()
    log = run_nccl(
        _sim(("rdma_memlock_limit", "node:hgx-node-0001")), NcclJob("g", "all_reduce", HGX, False)
    )
    assert "RLIMIT_MEMLOCK" in log.error


def test_nvlink_degradation_and_corruption() -> None:
    slow = _sim(("gpu_nvlink_degraded", TOPO.domains[2].key))
    assert _peak(slow, NVL) < _peak(_sim(), NVL)
    bad = run_nccl(
        _sim(("gpu_silent_data_corruption", "gpu:nvl-node-0004/1")), NcclJob("g", "all_reduce", NVL)
    )
    assert bad.exit_code == 1 and parse_table(bad.text).wrong > 0


def test_training_log_goodput_and_a_crash() -> None:
    ok = run_training(_sim(), TrainingJob("t", NVL))
    got = parse_training(ok.text)
    assert ok.exit_code == 0 and got is not None and got.ratio == pytest.approx(1.0)
    assert got.highest_step == 50 and got.avg_tflops_per_gpu == pytest.approx(911.0)
    crash = _sim(("gpu_xid_burst", "gpu:nvl-node-0007/0"))
    dead = run_training(crash, TrainingJob("t", NVL))
    assert dead.exit_code == 1 and dead.crashed_on == ("nvl-node-0007",)
    resumed = run_training(
        crash, TrainingJob("t", NVL, max_steps=400, checkpoint=True, save_interval=50)
    )
    g = parse_training(resumed.text)
    assert resumed.exit_code == 0 and g is not None and g.interruptions == 1
    assert 0 < g.ratio < 1 and g.reschedule > 0 and g.resume > 0


def test_dcgm_level_names_the_failed_subtest() -> None:
    r = run_dcgm(_sim(("gpu_row_remap", "gpu:nvl-node-0005/1")), "nvl-node-0005", 2)
    assert not r.passed and "row remapping failed" in r.reason
    assert run_dcgm(_sim(), "nvl-node-0005", 2).passed


def test_the_slowest_gpus_operating_point_paces_training() -> None:
    healthy = parse_training(run_training(_sim(), TrainingJob("t", NVL)).text)
    pinned = parse_training(
        run_training(_sim(("gpu_low_pstate", "gpu:nvl-node-0004/2")), TrainingJob("t", NVL)).text
    )
    assert healthy is not None and pinned is not None
    assert healthy.avg_tflops_per_gpu is not None and pinned.avg_tflops_per_gpu is not None
    assert pinned.avg_tflops_per_gpu < 0.5 * healthy.avg_tflops_per_gpu
    assert pinned.ratio == pytest.approx(1.0)  # slow is not lost: goodput stays whole
