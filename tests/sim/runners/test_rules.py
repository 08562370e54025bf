"""The skip and error rules of specs/burnin.md §9, and how each fault shows in a runner."""

from __future__ import annotations

import pytest
from runner_kit import (
    HGX,
    HGX2,
    NVL,
    NVL2,
    PCIE,
    PCIE2,
    fleet_of,
    make_call,
    replace_part,
    run,
    spec_of,
    twin_with,
)

from glimmer.contract.vocab import RunnerVerdict
from glimmer.fleet.topology import Topology
from glimmer.sim.runners import simulate_runner
from glimmer.sim.twin import FleetSim
from glimmer.verdict import combine_group

SKIP, FAIL, ERROR = RunnerVerdict.SKIP, RunnerVerdict.FAIL, RunnerVerdict.ERROR


# ---- compute-smoke and gemm-sweep ------------------------------------------------------------


@pytest.mark.parametrize("node", [HGX, PCIE])
def test_compute_smoke_skips_on_hopper(healthy: FleetSim, node: str) -> None:
    out, parsed = run(healthy, spec_of("compute-smoke"), node)
    assert out.exit_code == 2 and parsed.verdict is SKIP
    assert out.stdout.splitlines()[-1].startswith("FP4_GEMM_SKIP:")
    assert parsed.metrics["computeCap"] == "9.0"


def test_compute_smoke_skips_on_l40s() -> None:
    twin = FleetSim(fleet_of("l40s_48gb", "pcie"))
    _out, parsed = run(twin, spec_of("compute-smoke"), twin.topo.nodes[0].hostname)
    assert parsed.verdict is SKIP and parsed.metrics["computeCap"] == "8.9"


def test_compute_smoke_errors_on_datacenter_blackwell(healthy: FleetSim) -> None:
    out, parsed = run(healthy, spec_of("compute-smoke"), NVL)  # GB200, CC 10.0
    assert out.exit_code == 3 and parsed.verdict is ERROR
    assert "tcgen05" in parsed.message
    b200 = FleetSim(fleet_of("b200_180gb", "hgx"))
    assert run(b200, spec_of("compute-smoke"), b200.topo.nodes[0].hostname)[0].exit_code == 3


def test_gemm_sweep_rules(healthy: FleetSim) -> None:
    spec = spec_of("gemm-sweep")
    assert run(healthy, spec, HGX)[0].exit_code == 3  # precision unset
    fp4 = {"BURNIN_VARIANT_PRECISION": "fp4"}
    assert run(healthy, spec, HGX, env=fp4)[1].verdict is SKIP  # Hopper has no fp4
    bf16 = {"BURNIN_VARIANT_PRECISION": "bf16"}
    assert "cannot run on CC 9.0" in run(healthy, spec, HGX, env=bf16)[1].message
    assert run(healthy, spec, NVL, env=bf16)[0].exit_code == 3  # GB200: wrong-arch image
    assert run(healthy, spec, HGX, env={"BURNIN_VARIANT_PRECISION": "int4"})[0].exit_code == 3


# ---- gpudirect-rdma, nccl Node scope, Pair-only refusals -------------------------------------


def test_gpudirect_rdma_skips_without_a_peer_memory_provider(
    healthy: FleetSim, monkeypatch: pytest.MonkeyPatch
) -> None:
    replace_part(monkeypatch, "h100_pcie_80gb", peer_memory=False)
    spec = spec_of("gpudirect-rdma", "Pair")
    out, parsed = run(healthy, spec, PCIE, nodes=(PCIE2, PCIE), role="server")
    assert parsed.verdict is SKIP and "peer-memory" in parsed.message
    assert out.stdout.splitlines()[-1].startswith("GPUDIRECT_RDMA_SKIP:")


def test_nccl_node_scope_needs_two_gpus(factory: Topology) -> None:
    lost = [f"gpu_fallen_off_bus@gpu:{PCIE}/{slot}" for slot in (1, 2, 3)]
    twin = twin_with(factory, *lost)
    out, parsed = run(twin, spec_of("nccl"), PCIE)
    assert out.exit_code == 2 and parsed.verdict is SKIP
    assert out.stdout.splitlines()[-1].startswith("NCCL_SKIP:")
    ok, node = run(FleetSim(factory), spec_of("nccl"), HGX)
    assert ok.exit_code == 0 and node.metrics["ranks"] == "8"
    assert node.metrics["ncclTransport"] == "nvlink"


@pytest.mark.parametrize("kind", ["ib-write-bw", "gpudirect-rdma", "tcp-baseline", "fabric-soak"])
def test_pair_only_runners_refuse_a_group(healthy: FleetSim, kind: str) -> None:
    spec = spec_of(kind, "Group")
    out, parsed = run(healthy, spec, HGX, nodes=(HGX, HGX2, NVL), rank=0)
    assert out.exit_code == 3 and parsed.verdict is ERROR
    assert parsed.reported_nothing()


def test_pair_server_prints_little_and_the_client_measures(healthy: FleetSim) -> None:
    spec = spec_of("ib-write-bw", "Pair")
    server, s = run(healthy, spec, HGX2, nodes=(HGX2, HGX), role="server")
    client, c = run(healthy, spec, HGX, nodes=(HGX2, HGX), role="client")
    assert server.exit_code == 0 and not s.metrics
    assert client.exit_code == 0 and float(c.metrics["bandwidthGbps"]) > 398
    assert server.elapsed_seconds >= client.elapsed_seconds - 5


def test_group_only_rank_zero_reports(healthy: FleetSim) -> None:
    nodes = (HGX, HGX2, NVL, NVL2)
    spec = spec_of("nccl", "Group")
    ranks = [run(healthy, spec, n, nodes=nodes, rank=r)[1] for r, n in enumerate(nodes)]
    assert ranks[0].metrics["busBandwidthGBs"]
    assert all(not r.metrics for r in ranks[1:])
    combined = combine_group(list(nodes), ranks)
    assert combined.verdict is RunnerVerdict.PASS
    assert 40.0 < float(combined.metrics["busBandwidthGBs"]) < 48.0


@pytest.mark.parametrize("kind", ["ib-write-bw", "gpudirect-rdma", "fabric-soak"])
def test_memlock_limit_makes_rdma_kinds_error(factory: Topology, kind: str) -> None:
    twin = twin_with(factory, f"rdma_memlock_limit@node:{HGX}")
    out, parsed = run(twin, spec_of(kind, "Pair"), HGX, nodes=(HGX2, HGX), role="client")
    assert out.exit_code == 3 and "memlock" in parsed.message.lower()


def test_memlock_limit_makes_nccl_error(factory: Topology) -> None:
    twin = twin_with(factory, f"rdma_memlock_limit@node:{HGX}")
    out, _parsed = run(twin, spec_of("nccl", "Pair"), HGX, nodes=(HGX2, HGX), role="client")
    assert out.exit_code == 3
    # Node scope needs no RDMA registration: unaffected.
    assert run(twin, spec_of("nccl"), HGX)[0].exit_code == 0


def test_device_budget_must_match_the_visible_devices(healthy: FleetSim) -> None:
    spec = spec_of("gpu-burn")
    env = {"BURNIN_RESOURCE_LIMITS": "nvidia.com/gpu=4"}
    assert run(healthy, spec, HGX, env=env)[0].exit_code == 3
    ok = {"BURNIN_RESOURCE_LIMITS": "cpu=2,nvidia.com/gpu=8"}
    assert run(healthy, spec, HGX, env=ok)[0].exit_code == 0
    assert run(healthy, spec, HGX, env={"BURNIN_RESOURCE_LIMITS": ""})[0].exit_code == 3


def test_unknown_kind_and_unknown_node_are_errors(healthy: FleetSim) -> None:
    out = simulate_runner(healthy, make_call(spec_of("my-custom-probe"), HGX))
    assert out.exit_code == 3
    assert run(healthy, spec_of("clockprobe"), "no-such-node")[0].exit_code == 3


def test_nvidia_images_cannot_start_without_gpu_operands(factory: Topology) -> None:
    twin = twin_with(factory, f"gpu_operand_unavailable@node:{HGX}")
    assert run(twin, spec_of("clockprobe"), HGX)[0].exit_code == 128
    assert run(twin, spec_of("memory-stress"), HGX)[0].exit_code == 0  # vendor-free image


def test_host_health_without_kmsg_omits_xids(healthy: FleetSim) -> None:
    bare = spec_of("host-health", runner={})
    parsed = run(healthy, bare, HGX)[1]
    assert "xidEvents" not in parsed.metrics and parsed.metrics["xidSource"] == "none"


# ---- faults as runners see them -------------------------------------------------------------


def test_fallen_off_bus_is_a_missing_device_and_xid_79(factory: Topology) -> None:
    twin = twin_with(factory, f"gpu_fallen_off_bus@gpu:{HGX}/5")
    burn = run(twin, spec_of("gpu-burn"), HGX)[1]
    # The runner fails the node short of a GPU rather than judging the 7 it still sees.
    assert burn.verdict is FAIL and burn.metrics["devicesVisible"] == "7"
    assert "deviceCount" not in burn.metrics
    out, health = run(twin, spec_of("host-health"), HGX)
    assert health.verdict is FAIL and int(health.metrics["xidEvents"]) >= 1
    assert ": 79, GPU has fallen off the bus" in out.stdout
    assert "eccErrors" not in health.metrics  # node totals need every GPU to answer


def test_low_pstate_shows_in_clockprobe(factory: Topology) -> None:
    twin = twin_with(factory, f"gpu_low_pstate@gpu:{HGX}/3")
    _out, parsed = run(twin, spec_of("clockprobe"), HGX)
    assert parsed.verdict is FAIL
    assert float(parsed.metrics["sustainedClockPct"]) < 25.0
    assert parsed.metrics["worstDeviceIndex"] == "3"
    assert parsed.metrics["pdWedgeSuspected"] == "true"
    assert float(parsed.metrics["sustainedClockSpreadPct"]) > 70.0


def test_sdc_shows_as_miscompares(factory: Topology) -> None:
    twin = twin_with(factory, f"gpu_silent_data_corruption@gpu:{HGX}/2")
    for kind in ("gpu-burn", "thermal-soak"):
        parsed = run(twin, spec_of(kind), HGX)[1]
        assert parsed.verdict is FAIL and int(parsed.metrics["miscompares"]) > 0
        assert int(parsed.metrics["sdcDetections"]) >= 1


def test_degraded_nic_shows_in_rdma_and_nccl(factory: Topology) -> None:
    twin = twin_with(factory, f"nic_degraded@nic:{HGX}/eth1")
    ib = run(twin, spec_of("ib-write-bw", "Pair"), HGX, nodes=(HGX2, HGX), role="client")[1]
    assert 195.0 < float(ib.metrics["bandwidthGbps"]) < 205.0
    nccl = run(twin, spec_of("nccl", "Pair"), HGX, nodes=(HGX2, HGX), role="client")[1]
    assert float(nccl.metrics["busBandwidthGBs"]) < 25.0
    # The other end of the link sees the same link.
    ib2 = run(twin, spec_of("ib-write-bw", "Pair"), HGX2, nodes=(HGX, HGX2), role="client")[1]
    assert float(ib2.metrics["bandwidthGbps"]) < 205.0


def test_hbm_ecc_and_row_remaps(factory: Topology) -> None:
    twin = twin_with(factory, f"gpu_ecc_uncorrectable@gpu:{HGX}/1", f"gpu_row_remap@gpu:{HGX}/4")
    health = run(twin, spec_of("host-health"), HGX)[1]
    assert int(health.metrics["eccErrors"]) >= 1 and int(health.metrics["remappedRows"]) >= 1
    burn = run(twin, spec_of("gpu-burn"), HGX)[1]
    assert burn.verdict is FAIL and int(burn.metrics["eccErrors"]) >= 1


def test_pcie_downtrain_shows_in_copies_and_replays(factory: Topology) -> None:
    twin = twin_with(factory, f"gpu_pcie_downtrained@gpu:{HGX}/6=0.5")
    copies = run(twin, spec_of("memory-bw"), HGX)[1]
    assert 25.0 < float(copies.metrics["hostToDeviceBandwidthGBs"]) < 30.0  # x8
    assert int(run(twin, spec_of("host-health"), HGX)[1].metrics["pcieReplayErrors"]) > 0


def test_cooling_and_paste_heat_throttle_and_slow(factory: Topology) -> None:
    hot = twin_with(factory, "gpu_cooling_fault@rack:site-a/pcie-a")
    cool = FleetSim(factory)
    soak = spec_of("thermal-soak")
    sick, well = run(hot, soak, PCIE)[1], run(cool, soak, PCIE)[1]
    assert float(sick.metrics["gpuTempC"]) > float(well.metrics["gpuTempC"]) + 15
    assert int(sick.metrics["throttleEvents"]) > 0 and well.metrics["throttleEvents"] == "0"
    probe = run(hot, spec_of("clockprobe"), PCIE)[1]
    assert float(probe.metrics["sustainedClockPct"]) < 70.0
    paste = twin_with(factory, f"gpu_thermal_paste_degraded@gpu:{PCIE}/1")
    pasted = run(paste, soak, PCIE)[1]
    assert pasted.verdict is FAIL and int(pasted.metrics["throttleEvents"]) > 0
    assert pasted.metrics["worstDeviceIndex"] == "1"


def test_group_collective_runs_at_its_slowest_link(factory: Topology) -> None:
    nodes = (HGX, HGX2, NVL, NVL2)
    spec = spec_of("nccl", "Group")
    slow = twin_with(factory, f"nic_degraded@nic:{NVL}/eth1")
    rank0 = run(slow, spec, HGX, nodes=nodes, rank=0)[1]
    assert float(rank0.metrics["busBandwidthGBs"]) < 25.0
    locked = twin_with(factory, f"rdma_memlock_limit@node:{NVL2}")
    out, parsed = run(locked, spec, HGX, nodes=nodes, rank=0)
    assert out.exit_code == 3 and NVL2 in parsed.message
    assert run(locked, spec, NVL2, nodes=nodes, rank=3)[0].exit_code == 3


@pytest.mark.parametrize("slot", [0, 3, 7])
def test_a_pair_collective_checks_every_gpu_so_corruption_on_any_device_fails_it(
    factory: Topology, slot: int
) -> None:
    # The Pair collective used to check device 0 only: corruption on GPU 3 passed.
    twin = twin_with(factory, f"gpu_silent_data_corruption@gpu:{HGX}/{slot}")
    spec = spec_of("nccl", "Pair")
    for client, server in ((HGX, HGX2), (HGX2, HGX)):
        out, parsed = run(twin, spec, client, nodes=(server, client), role="client")
        assert parsed.verdict is FAIL, out.stdout
        assert int(parsed.metrics["miscompares"]) > 0


@pytest.mark.parametrize(
    "kind", ["clockprobe", "gpu-burn", "thermal-soak", "memory-bw", "dcgm-diag", "compute-smoke"]
)
def test_a_node_short_of_a_gpu_fails_every_runner_that_judges_its_gpus(
    factory: Topology, kind: str
) -> None:
    # These runners used to judge the 7 GPUs still visible and pass the node.
    twin = twin_with(factory, f"gpu_fallen_off_bus@gpu:{HGX}/5")
    out, parsed = run(twin, spec_of(kind), HGX)
    assert out.exit_code == 1 and parsed.verdict is FAIL, out.stdout
    assert "7 of the node's 8 GPUs are visible (missing: slot 5)" in parsed.message
    assert parsed.metrics["devicesVisible"] == "7"


@pytest.mark.parametrize("kind", ["clockprobe", "gpu-burn", "memory-bw", "dcgm-diag"])
def test_a_node_with_all_its_gpus_is_not_failed_for_its_count(healthy: FleetSim, kind: str) -> None:
    out, parsed = run(healthy, spec_of(kind), HGX)
    assert parsed.verdict is RunnerVerdict.PASS, out.stdout
