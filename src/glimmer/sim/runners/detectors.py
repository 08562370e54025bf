"""The detectors the fault-coverage sweep checks: the mode table's, corrected where the runners
and the built-in profiles show it wrong.

``MODES`` (glimmer.sim.modes) names, per fault mode, the test kinds and metrics expected to see
it. Running every mode through the simulated runners found some of those wrong — a metric the
kind never prints, a floor the fault cannot cross — and some detectors missing. The corrections
live here, each with its reason, so the mode table stays the simulator's and this file stays
the coverage sweep's; the generated docs/fault-coverage.md lists them.
"""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.sim.modes import MODES, FaultMode


@dataclass(frozen=True)
class CoverageDetector:
    kind: str
    metric: str | None  # None: the fault shows as the kind's outcome (Fail or Error)
    scope: str | None = None  # the scope the detector needs (None: any)
    note: str = ""


@dataclass(frozen=True)
class Edit:
    mode: str
    detector: CoverageDetector
    reason: str


# (mode, kind, metric) of MODES detectors dropped, with why.
REMOVED: tuple[Edit, ...] = (
    Edit("gpu_cooling_fault", CoverageDetector("thermal-soak", "sustainedClockPct"),
         "the soak's 60 % floor sits below a cooling-derated clock (0.7 × ~90 % ≈ 63 %); the "
         "soak sees the same fault as thermal throttle events"),
    Edit("gpu_thermal_paste_degraded", CoverageDetector("thermal-soak", "meanTempUnderLoadC"),
         "thermal-soak never prints meanTempUnderLoadC (clockprobe does; the soak prints "
         "meanTempC)"),
    Edit("gpu_thermal_paste_degraded", CoverageDetector("clockprobe", "sustainedClockPct"),
         "the clock only backs off until the heat balances at the slowdown temperature (a few "
         "% on an HGX H100), far above any floor; the part shows as throttle events"),
)  # fmt: skip

# Detectors MODES lacks, with why they see the fault.
ADDED: tuple[Edit, ...] = (
    Edit("gpu_backend_congestion", CoverageDetector("gpudirect-rdma", "bandwidthGbps"),
         "GPUDirect RDMA crosses the same congested backend path as ib_write_bw"),
    Edit("gpu_cooling_fault", CoverageDetector("thermal-soak", "throttleEvents"),
         "a part held at its thermal limit latches thermal slowdown reasons"),
    Edit("gpu_cooling_fault", CoverageDetector("clockprobe", "throttleEvents"),
         "same thermal reasons under the FMA load"),
    Edit("gpu_nvlink_degraded", CoverageDetector("memory-bw", "peerWriteBandwidthGBs"),
         "peer writes cross the same degraded links as peer reads"),
    Edit("gpu_nvswitch_tray_failure", CoverageDetector("memory-bw", "peerReadBandwidthGBs"),
         "peer copies cross the failed tray's switches"),
    Edit("gpu_row_remap", CoverageDetector("dcgm-diag", "diagTestsFailed"),
         "at intensity 1 the remap fails and DCGM's memory subtest fails"),
    Edit("gpu_ecc_uncorrectable", CoverageDetector("dcgm-diag", "diagTestsFailed"),
         "DCGM's memory subtest fails on an uncorrectable error"),
    Edit("gpu_pcie_downtrained", CoverageDetector("host-health", "pcieReplayErrors"),
         "a marginal link that trained down also replays"),
    Edit("gpu_pcie_downtrained", CoverageDetector("dcgm-diag", "diagTestsFailed"),
         "DCGM's pcie subtest measures bandwidth below the SKU minimum"),
    Edit("nic_link_down", CoverageDetector("nccl", None, "Pair"),
         "Error: the rank behind the dead port never joins the rendezvous"),
    Edit("nic_link_down", CoverageDetector("gpudirect-rdma", None),
         "Fail: RDMA hardware present but no ACTIVE port"),
    Edit("nic_link_flapping", CoverageDetector("ib-write-bw", "bandwidthGbps"),
         "the port is down for part of every minute, so the mean bandwidth falls"),
    Edit("nic_link_flapping", CoverageDetector("nccl", "busBandwidthGBs", "Pair"),
         "the collective's ring runs at the flapping link's mean rate"),
    Edit("nic_degraded", CoverageDetector("nccl", "busBandwidthGBs", "Pair"),
         "NCCL over one NIC scales with the port's rate"),
    Edit("nic_degraded", CoverageDetector("host-health", "nicLinkDownEvents"),
         "the port keeps retraining to a lower rate; each retrain is a link-down transition"),
    Edit("rdma_memlock_limit", CoverageDetector("gpudirect-rdma", None),
         "Error: the same memlock check as ib-write-bw"),
    Edit("gpu_thermal_paste_degraded", CoverageDetector("thermal-soak", "throttleEvents"),
         "the hot part reaches its slowdown temperature under the SGEMM load"),
    Edit("gpu_thermal_paste_degraded", CoverageDetector("clockprobe", "throttleEvents"),
         "and under the FMA load"),
    *(Edit("gpu_fallen_off_bus", CoverageDetector(kind, None),
           "Fail: the runtime shows fewer GPUs than the node has (the runner's own count)")
      for kind in ("clockprobe", "gpu-burn", "thermal-soak", "memory-bw", "dcgm-diag")),
)  # fmt: skip

# Detectors of MODES that hold only at one scope (the mode table's notes say so in words).
SCOPED: dict[tuple[str, str, str | None], str] = {
    ("gpu_nvlink_degraded", "nccl", "busBandwidthGBs"): "Node",
    ("gpu_nvswitch_tray_failure", "nccl", "busBandwidthGBs"): "Node",
    ("gpu_backend_congestion", "nccl", "busBandwidthGBs"): "Pair",
    ("gpu_silent_data_corruption", "nccl", "miscompares"): "Pair",
    ("rdma_memlock_limit", "nccl", None): "Pair",
}

# Modes whose detectors all lie outside what the built-in profiles run or gate: why, so the
# coverage document says it instead of the sweep failing.
OUTSIDE_BUILTINS: dict[str, str] = {
    "gpu_storage_latency": "no built-in profile runs disk-io (it needs a site's DISK_IO_PATH "
    "mount on the shared storage)",
    "gpu_nvlink_degraded": "the built-in profiles gate no NVLink figure: memory-bandwidth gates "
    "only host<->device copies and nccl runs only at Pair scope (over the NIC)",
    "gpu_nvswitch_tray_failure": "as for gpu_nvlink_degraded: no built-in test gates an NVLink "
    "figure",
}


def detectors(mode: FaultMode) -> tuple[CoverageDetector, ...]:
    """The corrected detectors of one mode, MODES' order first, additions after."""
    removed = {(e.detector.kind, e.detector.metric) for e in REMOVED if e.mode == mode.name}
    kept = [
        CoverageDetector(d.kind, d.metric, SCOPED.get((mode.name, d.kind, d.metric)), d.note)
        for d in mode.detectors
        if (d.kind, d.metric) not in removed
    ]
    return (*kept, *(e.detector for e in ADDED if e.mode == mode.name))


def all_detectors() -> dict[str, tuple[CoverageDetector, ...]]:
    return {m.name: detectors(m) for m in MODES}
