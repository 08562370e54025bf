"""Which canonical metric names each built-in kind's runners print.

The linter uses this to flag a gate on a metric a kind never emits: such a gate fails closed on
every node (a shipped sample once did exactly that for a week-long soak). The sets are canonical
names, after the kind's aliases, and are the union over every image of the kind (the ROCm
siblings are images of the same kind, so a gate cannot know which one will run). They include
the unregistered names first-party runners print, because unregistered names are legal gates.

Sources: the per-kind runner descriptions of the contract. Where a description names a family
of keys without spelling every member (clockprobe's nine per-reason sample counters, host-health's
AER and ECC detail keys), the members are spelled the way those runners spell the rest of their
output; a gate on a misspelt family member is then reported, which is the conservative side.
"""

from __future__ import annotations

from glimmer.contract.kinds import BUILT_IN


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Every multi-device runner folds its devices to the worst one and says how it did so.
_MULTI_DEVICE = _names(
    """
    deviceCount devicesVisible deviceWindowS deviceConcurrency worstDeviceIndex
    worstDevicePciBusId deviceHomogeneous
    """
)

_GPU_IDENTITY = _names("gpuName computeCap pciBusId driverVersion migMode builtCudaArch")

# NVML's nine clock-event reasons, one sample counter each (unregistered, so open world).
_PER_REASON_SAMPLES = _names(
    """
    gpuIdleSamples applicationsClocksSamples swPowerCapSamples hwSlowdownSamples
    syncBoostSamples swThermalSlowdownSamples hwThermalSlowdownSamples hwPowerBrakeSamples
    displayClockSamples
    """
)

# NVML self-audit every NVML-reading runner prints.
_SELF_AUDIT = _names("nvmlUnsupported unsupportedReads configWarnings")

# thermal-soak and gpu-burn share one soak engine (byte-identical source), so one output.
_SOAK_CORE = (
    _names(
        """
        miscompares sdcDetections nonfiniteCount eccErrors eccMode xidEvents iterationsCompleted
        elapsedS durationRequestedS warmupS sustainedClockPct minSmClockPct maxSmClockPct
        smClockMHz memClockMHz ratedBoostClockMHz gpuUtilizationPct memUtilizationPct
        gpuTempC meanTempC powerDrawW meanPowerW throttleEvents throttledSamples
        throttleReasonsMask throttleReasons powerCapEvents sustainedThroughputTflops gemmActiveS
        matrixN clockFloorPct tempCeilingC faultsInjected
        xidSource xidSourceDetail xidWindowsWatched lastXidCode xidLogDropped
        sustainedClockSpreadPct gfxTarget
        """
    )
    | _MULTI_DEVICE
    | _GPU_IDENTITY
    | _SELF_AUDIT
)

_EMITTED: dict[str, frozenset[str]] = {
    "compute-smoke": _names(
        """
        builtCudaArch gpuName computeCap m n k maxAbsRef maxAbsError maxRelError nonfiniteCount
        elapsedMs throughputTflops forcedComputeCap gfxTarget
        """
    )
    | _MULTI_DEVICE,
    "clockprobe": _names(
        """
        durationRequestedS warmupS sampleWindowS elapsedS clockFloorPct thermalClockFloorPct
        thermalTempThresholdC loadThreads loadItersPerLaunch loadLaunches samplesTaken
        sustainedClockPct smClockMHz memClockMHz ratedBoostClockMHz minSmClockPct maxSmClockPct
        sustainedFmaThroughputTflops peakFmaThroughputTflops throughputConsistencyPct
        gpuUtilizationPct memUtilizationPct gpuTempC meanTempUnderLoadC tempAtMinClockC
        powerDrawW meanPowerW enforcedPowerLimitW defaultPowerLimitW powerLimitRatioPct
        throttleEvents throttledSamples throttleReasonsMask throttleReasons
        throttleClassification pdWedgeSuspected clockFloorAppliedPct clockFloorBasis
        sustainedClockSpreadPct fmaThroughputSpreadPct idleClockLockSuspected gfxTarget
        """
    )
    | _PER_REASON_SAMPLES
    | _MULTI_DEVICE
    | _GPU_IDENTITY
    | _SELF_AUDIT,
    "thermal-soak": _SOAK_CORE,
    "gpu-burn": _SOAK_CORE,
    "gemm-sweep": _names(
        """
        achievedTflops maxRelativeError maxAbsError maxAbsRef nonfiniteCount gemmPrecision
        gemmShape sampleWindowS iterationsCompleted totalKernelMs gemmThroughputSpreadPct
        """
    )
    | _MULTI_DEVICE
    | _GPU_IDENTITY,
    # The NVIDIA image reports copy paths only; the ROCm image adds a STREAM triad
    # (memoryBandwidthGBs) and a spread. Neither claims deviceCount.
    "memory-bw": _names(
        """
        hostToDeviceBandwidthGBs deviceToHostBandwidthGBs deviceToDeviceBandwidthGBs
        hostToDeviceBandwidthMaxGBs deviceToHostBandwidthMaxGBs deviceToDeviceBandwidthMaxGBs
        peerReadBandwidthGBs peerWriteBandwidthGBs peerReadBandwidthMaxGBs
        peerWriteBandwidthMaxGBs memoryBandwidthGBs hostToDeviceBandwidthSpreadPct
        nvbandwidthRef gpuName gpuClass devicesVisible cudaDriverVersion transferSizeBytes
        testSamples elapsedS gfxTarget
        """
    ),
    "memory-stress": _names(
        """
        memoryErrors miscompares sdcDetections readBandwidthMBs writeBandwidthMBs elapsedS
        satRunS durationRequestedS memoryCoveredPct threads tool toolVersion satStatus
        """
    ),
    "host-health": _names(
        """
        xidEvents eccErrors remappedRows pcieReplayErrors nicLinkDownEvents
        xidPreexisting kernelHwErrors kernelHwErrorsPreexisting xidLogDropped
        eccMode eccSbeTotal eccDbeTotal eccSource eccVendorConflict amdRasUnreadableFiles
        retiredPagesTotal pcieAerFatal pcieAerNonfatal pcieAerCorrectable
        nicCount nicUp nicLinkDownTotal nicAbsentReason ibPorts ibPortsActive
        fabricCountersSaturated fabricSaturatedCounters fabricCounterStatus
        gpuTempC powerDrawW gpuName devicesVisible driverVersion observationWindowS elapsedS
        nodeReady nvmlStatus xidSource xidSourceDetail aerStatus nicStatus pcieReplaySource
        hostHealthVersion hostHealthStage hostHealthPanic
        """
    ),
    "dcgm-diag": _names(
        """
        diagTestsFailed pcieReplayErrors gpuTempC lastXidCode remappedRows eccSbeTotal
        eccDbeTotal elapsedS testsRun testsWarned testsNotRun testsSkipped diagLevel
        diagLevelSource diagTests diagParams diagTimeoutS dcgmVersion driverVersion
        devicesVisible dcgmiExitCode sampleCount counterBaselineReset prunedObjects
        """
    ),
    # Duration mode never produces a peak (it prints 0.00), so peakBandwidthGbps is absent
    # even though the alias for bw_peak exists.
    "ib-write-bw": _names(
        "bandwidthGbps latencyUs minLatencyUs maxLatencyUs p99LatencyUs messageRateMpps"
    ),
    "gpudirect-rdma": _names("bandwidthGbps latencyUs"),
    "nccl": _names("busBandwidthGBs algBandwidthGBs latencyUs miscompares ranks ncclTransport"),
    "tcp-baseline": _names(
        """
        tcpThroughputGbps tcpRetransmits tcpRttUs elapsedS tcpTestInterface tcpMgmtInterface
        tcpNetNamespace
        """
    ),
    "disk-io": _names(
        "writeBandwidthMBs readBandwidthMBs ioLatencyUs p99LatencyUs ioErrors diskIoPath"
    ),
    # The soak reports window statistics; the single-run bandwidthGbps is never printed.
    "fabric-soak": _names(
        """
        minBandwidthGbps p1BandwidthGbps meanBandwidthGbps peakBandwidthGbps
        bandwidthStdDevGbps soakIterations soakFailedIterations soakServerRestarts
        linkErrorEvents
        """
    ),
    "fingerprint-probe": _names(
        """
        acceleratorCount pciAddresses pciVendorIds pciDeviceIds acceleratorVendors
        acceleratorDrivers
        """
    ),
}

# Aliases whose target a kind's runner never prints (kept for older runner builds).
ALIASES_NEVER_EMITTED: frozenset[tuple[str, str]] = frozenset({("ib-write-bw", "bw_peak")})


def emitted_metrics(kind: str) -> frozenset[str] | None:
    """Canonical names a built-in kind emits; None for ``custom`` and unknown kinds, whose
    output nobody here can know."""
    return _EMITTED.get(kind) if kind in BUILT_IN else None


def kinds_emitting(name: str) -> tuple[str, ...]:
    """Built-in kinds whose runners print ``name``, in the kind table's order."""
    return tuple(kind for kind in BUILT_IN if name in _EMITTED.get(kind, frozenset()))
