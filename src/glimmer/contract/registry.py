"""The metric registry: every metric glimmer knows, as one data table.

Each row says what the metric measures, its unit (read from the name's suffix), whether it may
decide acceptance or is evidence only, how a segmented soak folds it across windows, and how a
Group folds it across ranks. The linter, the folds and ``docs/metrics.md`` are all derived from
this table; nothing else restates it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Unit(StrEnum):
    """Units a metric name can carry as its suffix. NONE is dimensionless."""

    NONE = ""
    GBPS = "Gbps"
    GBS = "GBs"
    MBS = "MBs"
    TFLOPS = "Tflops"
    MHZ = "MHz"
    US = "Us"
    MS = "Ms"
    PCT = "Pct"
    C = "C"
    W = "W"
    S = "S"


class ThresholdUse(StrEnum):
    """Acceptance metrics may decide a verdict; Evidence metrics are recorded only."""

    ACCEPTANCE = "Acceptance"
    EVIDENCE = "Evidence"


class Aggregation(StrEnum):
    """How a segmented soak folds a metric across its windows."""

    SUM = "Sum"
    MIN = "Min"
    MAX = "Max"
    LAST = "Last"


class Combination(StrEnum):
    """How a Group folds a metric across ranks. Collective takes the lowest rank's value."""

    COLLECTIVE = "Collective"
    SUM = "Sum"
    MAX = "Max"
    MIN = "Min"


@dataclass(frozen=True)
class MetricSpec:
    name: str
    unit: Unit
    use: ThresholdUse
    aggregation: Aggregation
    combination: Combination | None  # None: unclassified, kept only when every rank agrees
    description: str


def _m(
    name: str,
    unit: Unit,
    use: ThresholdUse,
    aggregation: Aggregation,
    combination: Combination | None,
    description: str,
) -> MetricSpec:
    return MetricSpec(name, unit, use, aggregation, combination, description)


# fmt: off
METRICS: tuple[MetricSpec, ...] = (
    _m("bandwidthGbps", Unit.GBPS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, Combination.MIN,
       "mean RDMA-write link throughput (ib-write-bw, gpudirect-rdma)"),
    _m("tcpThroughputGbps", Unit.GBPS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, Combination.MIN,
       "iperf3 sender TCP throughput; deliberately distinct from the RDMA figure"),
    _m("minBandwidthGbps", Unit.GBPS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, Combination.MIN,
       "fabric-soak: slowest window (the accepted figure)"),
    _m("meanBandwidthGbps", Unit.GBPS, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "fabric-soak: mean over windows"),
    _m("p1BandwidthGbps", Unit.GBPS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "fabric-soak: 1st-percentile window, nearest-rank"),
    _m("bandwidthStdDevGbps", Unit.GBPS, ThresholdUse.EVIDENCE, Aggregation.MAX, None,
       "fabric-soak: spread across windows (flapping vs steadily slow)"),
    _m("peakBandwidthGbps", Unit.GBPS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "best single RDMA iteration; duration-mode runners never emit it"),
    _m("busBandwidthGBs", Unit.GBS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, Combination.COLLECTIVE,
       "NCCL bus bandwidth (algbw × collective factor); same name at Node/Pair/Group"),
    _m("algBandwidthGBs", Unit.GBS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, Combination.COLLECTIVE,
       "NCCL algorithm bandwidth (bytes/time) at the peak sample"),
    _m("ranks", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "how many ranks/devices joined the collective"),
    _m("hostToDeviceBandwidthGBs", Unit.GBS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "host→device copy bandwidth (worst cell/device)"),
    _m("deviceToHostBandwidthGBs", Unit.GBS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "device→host copy bandwidth (worst cell/device)"),
    _m("peerReadBandwidthGBs", Unit.GBS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "worst cell of all-pairs GPU↔GPU read matrix; n/a with <2 GPUs"),
    _m("peerReadBandwidthMaxGBs", Unit.GBS, ThresholdUse.EVIDENCE, Aggregation.MAX, None,
       "best cell of that read matrix"),
    _m("peerWriteBandwidthGBs", Unit.GBS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "worst cell of all-pairs write matrix; n/a with <2 GPUs"),
    _m("peerWriteBandwidthMaxGBs", Unit.GBS, ThresholdUse.EVIDENCE, Aggregation.MAX, None,
       "best cell of that write matrix"),
    _m("deviceToDeviceBandwidthGBs", Unit.GBS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "device-local copy bandwidth (memory subsystem)"),
    _m("memoryBandwidthGBs", Unit.GBS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, Combination.MIN,
       "sustained device memory bandwidth over the window (not a peak)"),
    _m("readBandwidthMBs", Unit.MBS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "sustained read throughput (stressapptest; disk-io)"),
    _m("writeBandwidthMBs", Unit.MBS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "sustained write throughput (stressapptest; disk-io)"),
    _m("latencyUs", Unit.US, ThresholdUse.ACCEPTANCE, Aggregation.MAX, Combination.MAX,
       "mean round-trip latency"),
    _m("minLatencyUs", Unit.US, ThresholdUse.EVIDENCE, Aggregation.MIN, None,
       "fastest single round trip"),
    _m("maxLatencyUs", Unit.US, ThresholdUse.EVIDENCE, Aggregation.MAX, Combination.MAX,
       "slowest single round trip"),
    _m("p99LatencyUs", Unit.US, ThresholdUse.ACCEPTANCE, Aggregation.MAX, Combination.MAX,
       "99th-percentile latency (fabric round trip or storage op)"),
    _m("tcpRttUs", Unit.US, ThresholdUse.ACCEPTANCE, Aggregation.MAX, Combination.MAX,
       "mean smoothed RTT seen by the TCP sender"),
    _m("messageRateMpps", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "million messages/s; NB \"Mpps\" is not a registered suffix so its unit is none"),
    _m("ioLatencyUs", Unit.US, ThresholdUse.ACCEPTANCE, Aggregation.MAX, Combination.MAX,
       "mean per-operation storage latency"),
    _m("elapsedS", Unit.S, ThresholdUse.ACCEPTANCE, Aggregation.SUM, Combination.MAX,
       "wall seconds the test body ran"),
    _m("durationRequestedS", Unit.S, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "BURNIN_DURATION_SECONDS echoed back"),
    _m("warmupS", Unit.S, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "seconds of load before sampling began"),
    _m("sampleWindowS", Unit.S, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "seconds during which samples were taken"),
    _m("gpuTempC", Unit.C, ThresholdUse.ACCEPTANCE, Aggregation.MAX, Combination.MAX,
       "peak GPU temperature"),
    _m("meanTempUnderLoadC", Unit.C, ThresholdUse.ACCEPTANCE, Aggregation.MAX, Combination.MAX,
       "mean GPU temperature over the load window"),
    _m("tempAtMinClockC", Unit.C, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "temperature at the slowest clock sample"),
    _m("thermalTempThresholdC", Unit.C, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "configured temp above which a shortfall may be blamed on heat"),
    _m("powerDrawW", Unit.W, ThresholdUse.ACCEPTANCE, Aggregation.MAX, Combination.MAX,
       "peak board power"),
    _m("meanPowerW", Unit.W, ThresholdUse.ACCEPTANCE, Aggregation.MAX, None,
       "mean board power over the load window"),
    _m("enforcedPowerLimitW", Unit.W, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "power limit the driver is enforcing"),
    _m("defaultPowerLimitW", Unit.W, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "nameplate default power limit"),
    _m("powerLimitRatioPct", Unit.PCT, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "enforced ÷ default × 100; omitted if either is unreadable (e.g. GB10)"),
    _m("sustainedClockPct", Unit.PCT, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "mean SM clock as % of rated boost"),
    _m("smClockMHz", Unit.MHZ, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "mean SM clock"),
    _m("memClockMHz", Unit.MHZ, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "mean memory clock"),
    _m("ratedBoostClockMHz", Unit.MHZ, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "nameplate boost clock (the % denominator)"),
    _m("minSmClockPct", Unit.PCT, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "lowest single SM-clock sample, % of rated"),
    _m("maxSmClockPct", Unit.PCT, ThresholdUse.EVIDENCE, Aggregation.MAX, None,
       "highest single SM-clock sample, % of rated"),
    _m("clockFloorPct", Unit.PCT, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "configured general clock floor, echoed"),
    _m("thermalClockFloorPct", Unit.PCT, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "configured heat-attributed floor, echoed"),
    _m("clockFloorAppliedPct", Unit.PCT, ThresholdUse.EVIDENCE, Aggregation.MIN, None,
       "which of the two floors was applied"),
    _m("gpuUtilizationPct", Unit.PCT, ThresholdUse.EVIDENCE, Aggregation.MAX, None,
       "mean device utilisation under load"),
    _m("memUtilizationPct", Unit.PCT, ThresholdUse.EVIDENCE, Aggregation.MAX, None,
       "mean memory-controller utilisation under load"),
    _m("throughputTflops", Unit.TFLOPS, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "compute-smoke: one unwarmed launch; a liveness signal only"),
    _m("sustainedThroughputTflops", Unit.TFLOPS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "SGEMM throughput averaged over a sustained burn (gpu-burn/thermal-soak)"),
    _m("sustainedFmaThroughputTflops", Unit.TFLOPS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "clockprobe FP32 FMA-chain throughput over the window"),
    _m("peakFmaThroughputTflops", Unit.TFLOPS, ThresholdUse.EVIDENCE, Aggregation.MAX, None,
       "best single window of the FMA chain"),
    _m("throughputConsistencyPct", Unit.PCT, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "sustained ÷ peak FMA × 100 (collapse detector)"),
    _m("achievedTflops", Unit.TFLOPS, ThresholdUse.ACCEPTANCE, Aggregation.MIN, None,
       "gemm-sweep throughput at this cell's precision"),
    _m("maxRelativeError", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.MAX, None,
       "worst |dev−ref| / max|ref| (precision-specific bound)"),
    _m("gemmPrecision", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "label: which precision the cell ran"),
    _m("gemmShape", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "label: MxNxK"),
    _m("maxAbsError", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.MAX, None,
       "largest absolute difference vs reference"),
    _m("maxAbsRef", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.MAX, None,
       "largest |ref| (denominator of maxRelativeError)"),
    _m("totalKernelMs", Unit.MS, ThresholdUse.EVIDENCE, Aggregation.SUM, None,
       "summed device kernel time"),
    _m("nonfiniteCount", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, Combination.SUM,
       "NaN/Inf values in output"),
    _m("miscompares", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, Combination.SUM,
       "values that differ from the reference"),
    _m("sdcDetections", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, Combination.SUM,
       "distinct silent-corruption incidents"),
    _m("eccErrors", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.LAST, Combination.SUM,
       "ECC error count (host-health: lifetime uncorrected; soak: window delta)"),
    _m("memoryErrors", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, Combination.SUM,
       "stressapptest hardware incidents (host DRAM)"),
    _m("xidEvents", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, Combination.SUM,
       "driver fault events (NVIDIA Xid / amdgpu reset+RAS) in the window"),
    _m("lastXidCode", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "code of the latest Xid (dcgm: lifetime field; soak: window)"),
    _m("remappedRows", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.LAST, Combination.SUM,
       "device memory rows remapped (lifetime)"),
    _m("pcieReplayErrors", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, Combination.SUM,
       "PCIe replay events in the window"),
    _m("tcpRetransmits", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, Combination.SUM,
       "TCP retransmitted segments"),
    _m("acceleratorCount", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.LAST, None,
       "accelerators the PCI bus reports (fingerprint-probe)"),
    _m("ioErrors", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, Combination.SUM,
       "I/O errors during a storage test (0 is a real measurement)"),
    _m("nicLinkDownEvents", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, Combination.SUM,
       "fabric NIC link-down transitions in the window"),
    _m("soakIterations", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.SUM, None,
       "fabric-soak windows attempted"),
    _m("soakFailedIterations", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, Combination.SUM,
       "fabric-soak windows that failed/timed out"),
    _m("soakServerRestarts", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.SUM, None,
       "server-side listener restarts during a fabric soak"),
    _m("linkErrorEvents", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, Combination.SUM,
       "sum of port error counters that moved during the soak (delta); n/a if unreadable/reset"),
    _m("throttleEvents", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, Combination.SUM,
       "transitions into a capping/protective throttle state"),
    _m("throttledSamples", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, None,
       "samples with a capping reason latched"),
    _m("throttleReasonsMask", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.MAX, None,
       "OR of raw throttle-reason bits (decimal bitfield)"),
    _m("unsupportedReads", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.MAX, None,
       "count of driver reads refused"),
    _m("deviceCount", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.LAST, None,
       "devices the runner actually measured and folded"),
    _m("devicesVisible", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "devices the runtime showed the pod"),
    _m("deviceWindowS", Unit.S, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "per-device window actually used"),
    _m("worstDeviceIndex", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "index of the device behind the gated figure (this window)"),
    _m("worstDevicePciBusId", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "PCI address of that device"),
    _m("deviceHomogeneous", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "label true/false: all devices same name+CC"),
    _m("deviceConcurrency", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "label: sequential | all"),
    _m("sustainedClockSpreadPct", Unit.PCT, ThresholdUse.ACCEPTANCE, Aggregation.MAX, None,
       "(best−worst)/best×100 of sustainedClockPct across devices"),
    _m("gemmThroughputSpreadPct", Unit.PCT, ThresholdUse.ACCEPTANCE, Aggregation.MAX, None,
       "spread of achievedTflops across devices"),
    _m("fmaThroughputSpreadPct", Unit.PCT, ThresholdUse.ACCEPTANCE, Aggregation.MAX, None,
       "spread of sustainedFmaThroughputTflops across devices"),
    _m("hostToDeviceBandwidthSpreadPct", Unit.PCT, ThresholdUse.ACCEPTANCE, Aggregation.MAX, None,
       "spread of hostToDeviceBandwidthGBs across devices"),
    _m("diagTestsFailed", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, None,
       "DCGM subtests that failed"),
    _m("testsWarned", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, None,
       "DCGM subtests that warned"),
    _m("iterationsCompleted", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, None,
       "stress/GEMM iterations completed"),
    _m("samplesTaken", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.SUM, None,
       "measurement samples collected"),
    _m("loadLaunches", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.SUM, None,
       "load-kernel launches in the window"),
    _m("loadThreads", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "threads the load was launched with"),
    _m("loadItersPerLaunch", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "calibrated inner iterations per launch"),
    _m("tcpTestInterface", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "interface tcp-baseline loaded"),
    _m("tcpMgmtInterface", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "default-route (management) interface it refused to load"),
    _m("pciAddresses", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "accelerator PCI slots, comma-joined"),
    _m("pciVendorIds", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "PCI vendor IDs"),
    _m("pciDeviceIds", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "PCI device IDs"),
    _m("acceleratorVendors", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "distinct vendor names (or raw hex)"),
    _m("acceleratorDrivers", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "bound kernel modules; omitted if none bound"),
    _m("diskIoPath", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "directory disk-io measured"),
    _m("gpuName", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "product name label"),
    _m("computeCap", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "major.minor compute capability (a version, not a number)"),
    _m("pciBusId", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "first device's PCI address"),
    _m("driverVersion", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "driver version string"),
    _m("builtCudaArch", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "nvcc target the image was built for"),
    _m("migMode", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "enabled/disabled"),
    _m("nvmlUnsupported", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "names of refused driver reads"),
    _m("configWarnings", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "semicolon notes on adjusted config"),
    _m("throttleReasons", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "throttle-reason names (or \"none\")"),
    _m("throttleClassification", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "none|thermal|powerCap|applicationClocks|unknown"),
    _m("ncclTransport", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "nvlink|p2p|shm|net, best-effort from NCCL logs"),
    _m("pdWedgeSuspected", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "true|false|unknown (GB10 power-delivery wedge signature)"),
    _m("idleClockLockSuspected", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "true|false|unknown (amdgpu idle-clock lock)"),
    _m("gfxTarget", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "AMD gfx target label"),
    _m("clockFloorBasis", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "general|thermal"),
    _m("fabricCountersSaturated", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.MAX, None,
       "IB/RoCE error counters pinned at max (count)"),
    _m("fabricSaturatedCounters", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "names of pegged counters"),
    _m("fabricCounterStatus", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "ok|absent"),
    _m("eccMode", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "Enabled/Disabled/unsupported/mixed label"),
    _m("eccSource", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "where ECC counters came from (e.g. amdgpu-sysfs)"),
    _m("eccVendorConflict", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "two vendors' ECC on one node (first wins)"),
    _m("amdRasUnreadableFiles", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "amdgpu RAS files that could not be read"),
    _m("xidSource", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "kmsg|kernlog|none"),
    _m("xidSourceDetail", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "why the Xid scan could not run (free text)"),
    _m("xidLogDropped", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "1 when a kernel-log drain lost records"),
    _m("xidWindowsWatched", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.SUM, Combination.SUM,
       "1 per fully watched window, summed across segments"),
    _m("xidPreexisting", Unit.NONE, ThresholdUse.ACCEPTANCE, Aggregation.LAST, Combination.MAX,
       "Xids already in the log before the window (this boot)"),
    _m("nodeReady", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "host-health verdict echoed true/false"),
    _m("hostHealthVersion", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "schema version of host-health output"),
    _m("hostHealthStage", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "furthest stage reached (streamed breadcrumb)"),
    _m("hostHealthPanic", Unit.NONE, ThresholdUse.EVIDENCE, Aggregation.LAST, None,
       "summary of a recovered panic"),
)
# fmt: on

REGISTRY: dict[str, MetricSpec] = {m.name: m for m in METRICS}

# Spread metrics are undefined on one device (the runner prints n/a), so a gate on them must be
# RequiredIfMeasurable or it fails every single-GPU node.
SPREAD_METRICS: frozenset[str] = frozenset(
    {
        "sustainedClockSpreadPct",
        "gemmThroughputSpreadPct",
        "fmaThroughputSpreadPct",
        "hostToDeviceBandwidthSpreadPct",
    }
)


def lookup(name: str) -> MetricSpec | None:
    """The registry row for ``name``, or None for an unregistered (open-world) metric."""
    return REGISTRY.get(name)


def aggregation_of(name: str) -> Aggregation:
    """Window fold of a metric; unregistered names keep the newest value."""
    spec = REGISTRY.get(name)
    return spec.aggregation if spec else Aggregation.LAST


def safe_to_threshold_on(name: str) -> bool:
    """Unregistered names are assumed gateable; registered ones only if Acceptance."""
    spec = REGISTRY.get(name)
    return spec is None or spec.use is ThresholdUse.ACCEPTANCE
