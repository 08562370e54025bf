"""Every simulated runner prints what its real runner prints: raw keys that the contract parser
canonicalises with no rejected name, only names the kind is known to emit, evidence before one
final marker line, and an exit code that agrees with the marker."""

from __future__ import annotations

import re

import pytest
from runner_kit import HGX, HGX2, NVL, NVL2, PCIE, PCIE2, make_call, spec_of

from glimmer.contract.emitted import emitted_metrics
from glimmer.contract.kinds import BUILT_IN
from glimmer.contract.parse import parse
from glimmer.sim.runners import SIMULATED_KINDS, simulate_runner
from glimmer.sim.twin import FleetSim

PREFIX = {
    "compute-smoke": "FP4_GEMM", "clockprobe": "CLOCKPROBE", "thermal-soak": "THERMAL_SOAK",
    "gpu-burn": "GPU_BURN", "gemm-sweep": "GEMM_SWEEP", "memory-bw": "MEMORY_BW",
    "memory-stress": "STRESSAPPTEST", "host-health": "HOST_HEALTH", "dcgm-diag": "DCGM_DIAG",
    "ib-write-bw": "IB_WRITE_BW", "nccl": "NCCL", "gpudirect-rdma": "GPUDIRECT_RDMA",
    "tcp-baseline": "TCP_BASELINE", "disk-io": "DISK_IO", "fabric-soak": "FABRIC_SOAK",
    "fingerprint-probe": "FINGERPRINT_PROBE",
}  # fmt: skip
EXIT_OF_WORD = {"PASS": 0, "OK": 0, "FAIL": 1, "FAULT": 1, "SKIP": 2, "ERROR": 3}

# What each kind must report on a healthy datacenter node (canonical names).
EXPECTED: dict[str, set[str]] = {
    "clockprobe": {"sustainedClockPct", "smClockMHz", "ratedBoostClockMHz", "throttleEvents",
                   "deviceCount", "devicesVisible", "worstDeviceIndex", "worstDevicePciBusId",
                   "sustainedClockSpreadPct", "sustainedFmaThroughputTflops", "gpuTempC"},
    "thermal-soak": {"miscompares", "sdcDetections", "nonfiniteCount", "throttleEvents",
                     "sustainedClockPct", "gpuTempC", "elapsedS", "eccErrors", "xidEvents",
                     "xidWindowsWatched", "powerDrawW", "deviceCount"},
    "gpu-burn": {"miscompares", "nonfiniteCount", "eccErrors", "iterationsCompleted",
                 "sustainedThroughputTflops", "elapsedS", "deviceCount", "worstDeviceIndex"},
    "memory-bw": {"hostToDeviceBandwidthGBs", "deviceToHostBandwidthGBs",
                  "deviceToDeviceBandwidthGBs", "peerReadBandwidthGBs", "devicesVisible"},
    "memory-stress": {"memoryErrors", "miscompares", "sdcDetections", "readBandwidthMBs",
                      "writeBandwidthMBs", "elapsedS"},
    "host-health": {"xidEvents", "eccErrors", "remappedRows", "pcieReplayErrors",
                    "nicLinkDownEvents", "devicesVisible", "nodeReady"},
    "dcgm-diag": {"diagTestsFailed", "pcieReplayErrors", "remappedRows", "testsRun",
                  "devicesVisible", "elapsedS"},
    "ib-write-bw": {"bandwidthGbps", "latencyUs", "minLatencyUs", "maxLatencyUs",
                    "p99LatencyUs", "messageRateMpps"},
    "gpudirect-rdma": {"bandwidthGbps", "latencyUs"},
    "nccl": {"busBandwidthGBs", "algBandwidthGBs", "latencyUs", "miscompares"},
    "tcp-baseline": {"tcpThroughputGbps", "tcpRetransmits", "tcpRttUs"},
    "disk-io": {"writeBandwidthMBs", "readBandwidthMBs", "ioLatencyUs", "ioErrors"},
    "fabric-soak": {"minBandwidthGbps", "soakFailedIterations", "linkErrorEvents"},
    "fingerprint-probe": {"acceleratorCount", "pciAddresses", "acceleratorDrivers"},
}  # fmt: skip

PAIR_ONLY = ("ib-write-bw", "gpudirect-rdma", "tcp-baseline", "fabric-soak")
ENV = {
    "disk-io": {"DISK_IO_PATH": "/mnt/scratch"},
    "tcp-baseline": {"TCP_BASELINE_INTERFACE": "ib0"},
    "gemm-sweep": {"BURNIN_VARIANT_PRECISION": "bf16"},
}


def test_every_built_in_kind_has_a_simulated_runner() -> None:
    assert set(BUILT_IN) == SIMULATED_KINDS == set(PREFIX)


def _outputs(healthy: FleetSim, kind: str, node: str, peer: str) -> list[tuple[str, int]]:
    scope = "Pair" if kind in PAIR_ONLY else "Node"
    spec = spec_of(kind, scope)
    env = ENV.get(kind, {})
    if scope == "Pair":
        pair = (peer, node)
        outs = [
            simulate_runner(healthy, make_call(spec, n, nodes=pair, role=r, env=env))
            for r, n in (("server", peer), ("client", node))
        ]
    else:
        outs = [simulate_runner(healthy, make_call(spec, node, env=env))]
        if kind == "nccl":
            pair_spec = spec_of(kind, "Pair")
            outs.append(
                simulate_runner(
                    healthy, make_call(pair_spec, node, nodes=(peer, node), role="client")
                )
            )
    return [(o.stdout, o.exit_code) for o in outs]


@pytest.mark.parametrize("kind", sorted(PREFIX))
@pytest.mark.parametrize(("node", "peer"), [(HGX, HGX2), (NVL, NVL2), (PCIE, PCIE2)])
def test_output_parses_cleanly(healthy: FleetSim, kind: str, node: str, peer: str) -> None:
    allowed = emitted_metrics(kind)
    assert allowed is not None
    for stdout, code in _outputs(healthy, kind, node, peer):
        lines = stdout.rstrip("\n").split("\n")
        marker = re.fullmatch(rf"{PREFIX[kind]}_([A-Z]+)(?::.*)?", lines[-1])
        assert marker, f"last line is not a {PREFIX[kind]} marker: {lines[-1]!r}"
        assert EXIT_OF_WORD[marker.group(1)] == code
        assert not any(
            re.match(r"^[A-Z][A-Z0-9_]*_(PASS|FAIL|SKIP|ERROR)", ln) for ln in lines[:-1]
        )
        parsed = parse(kind, stdout, code)
        assert parsed.invalid_names == ()
        names = set(parsed.metrics) | set(parsed.unmeasurable)
        assert names <= allowed, f"{kind} printed names it is not known to emit: {names - allowed}"


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_healthy_hgx_reports_the_expected_metrics(healthy: FleetSim, kind: str) -> None:
    stdout, code = _outputs(healthy, kind, HGX, HGX2)[-1]
    assert code == 0, stdout
    parsed = parse(kind, stdout, code)
    missing = EXPECTED[kind] - set(parsed.metrics) - set(parsed.unmeasurable)
    assert not missing, f"{kind} did not report {missing}"


def test_raw_keys_are_printed_as_the_real_runners_print_them(healthy: FleetSim) -> None:
    """Aliased raw keys, not their canonical names (the parser does the renaming)."""
    raw = {
        "gpu-burn": ("errors=", "iterations=", "tflops="),
        "thermal-soak": ("peak_temp_c=", "throttle_count=", "soak_seconds=", "xid_count="),
        "host-health": ("xid_count=", "rows_remapped=", "pcie_replay_count=", "nic_link_down="),
        "clockprobe": ("sm_clock_mhz=", "rated_boost_clock_mhz="),
        "memory-bw": ("h2d_bandwidth_gbs=", "d2h_bandwidth_gbs=", "d2d_bandwidth_gbs="),
        "dcgm-diag": ("tests_failed=", "pcie_replay_count=", "rows_remapped="),
        "ib-write-bw": ("bw_average=", "latency_p99_us=", "msg_rate_mpps="),
        "gpudirect-rdma": ("bw_average=", "t_avg_usec="),
        "nccl": ("busbw=", "algbw=", "wrong_count="),
        "memory-stress": ("hardware_incidents=", "sdc_count=", "read_bandwidth_mbs="),
    }
    for kind, keys in raw.items():
        stdout = _outputs(healthy, kind, HGX, HGX2)[-1][0]
        for key in keys:
            assert f"\n{key}" in "\n" + stdout, f"{kind} does not print {key}"


def test_metrics_are_printed_before_the_marker(healthy: FleetSim) -> None:
    stdout = _outputs(healthy, "clockprobe", HGX, HGX2)[0][0]
    lines = stdout.strip().split("\n")
    assert all("=" in ln for ln in lines[:-1])
    assert "=" not in lines[-1]
