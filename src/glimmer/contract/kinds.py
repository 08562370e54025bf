"""The known test kinds as one data table: scopes, load character, default image, skip marker
and the raw-key aliases their runners print.

A kind's default image is one of glimmer's own runner images (contract/images.py) at this
glimmer's version: the row names the image, the image the tag and the vendor it drives.

TestKind is an open string: an unknown kind is somebody else's runner and gets only the generic
key conversion. ``custom`` is a known word but not a built-in kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from glimmer.contract.images import CUDA, RUNNER, RunnerImage
from glimmer.contract.vocab import Scope


@dataclass(frozen=True)
class KindSpec:
    name: str
    scopes: frozenset[Scope]
    burst_only: bool = False
    sustained_load: bool = False  # the node runs hot: the run declares heat-expected
    image: RunnerImage | None = None  # the default image; None: the test must name one
    group_capable: bool = False  # the default image can run one rank per node of a Group
    skip_marker: str | None = None  # e.g. "NCCL_SKIP"; host-health never skips
    aliases: dict[str, str] = field(default_factory=dict)  # raw key -> canonical name

    @property
    def default_image(self) -> str | None:
        """The image a test of this kind runs when it names none (§2.16's last rung)."""
        return self.image.reference(self.name) if self.image is not None else None

    @property
    def image_vendor(self) -> str | None:
        """The vendor the default image drives; None: it serves any vendor."""
        return self.image.vendor if self.image is not None else None


_N = frozenset({Scope.NODE})
_P = frozenset({Scope.PAIR})

# fmt: off
KINDS: tuple[KindSpec, ...] = (
    KindSpec("gpu-burn", _N, sustained_load=True, image=CUDA, skip_marker="GPU_BURN_SKIP",
             aliases={"errors": "miscompares", "iterations": "iterationsCompleted",
                      "tflops": "sustainedThroughputTflops", "xid_count": "xidEvents"}),
    KindSpec("compute-smoke", _N, burst_only=True, image=CUDA, skip_marker="FP4_GEMM_SKIP",
             aliases={"tflops": "throughputTflops"}),
    KindSpec("gemm-sweep", _N, image=CUDA, skip_marker="GEMM_SWEEP_SKIP",
             aliases={"window_seconds": "sampleWindowS", "gemm_iterations": "iterationsCompleted"}),
    KindSpec("dcgm-diag", _N, sustained_load=True, image=CUDA, skip_marker="DCGM_DIAG_SKIP",
             aliases={"tests_failed": "diagTestsFailed", "pcie_replay_count": "pcieReplayErrors",
                      "rows_remapped": "remappedRows"}),
    KindSpec("thermal-soak", _N, sustained_load=True, image=CUDA, skip_marker="THERMAL_SOAK_SKIP",
             aliases={"peak_temp_c": "gpuTempC", "peak_power_w": "powerDrawW",
                      "throttle_count": "throttleEvents", "soak_seconds": "elapsedS",
                      "xid_count": "xidEvents"}),
    KindSpec("nccl", frozenset({Scope.PAIR, Scope.GROUP, Scope.NODE}),
             image=CUDA, group_capable=True, skip_marker="NCCL_SKIP",
             aliases={"algbw": "algBandwidthGBs", "busbw": "busBandwidthGBs",
                      "wrong_count": "miscompares"}),
    KindSpec("ib-write-bw", _P, image=RUNNER, skip_marker="IB_WRITE_BW_SKIP",
             aliases={"bw_average": "bandwidthGbps", "bw_peak": "peakBandwidthGbps",
                      "latency_min_us": "minLatencyUs", "latency_max_us": "maxLatencyUs",
                      "latency_p99_us": "p99LatencyUs", "msg_rate_mpps": "messageRateMpps"}),
    KindSpec("gpudirect-rdma", _P, image=CUDA, skip_marker="GPUDIRECT_RDMA_SKIP",
             aliases={"bw_average": "bandwidthGbps", "t_avg_usec": "latencyUs"}),
    KindSpec("tcp-baseline", _P, skip_marker="TCP_BASELINE_SKIP"),
    KindSpec("memory-bw", _N, image=CUDA, skip_marker="MEMORY_BW_SKIP",
             aliases={"h2d_bandwidth_gbs": "hostToDeviceBandwidthGBs",
                      "d2h_bandwidth_gbs": "deviceToHostBandwidthGBs",
                      "d2d_bandwidth_gbs": "deviceToDeviceBandwidthGBs",
                      "peer_read_bandwidth_gbs": "peerReadBandwidthGBs",
                      "peer_write_bandwidth_gbs": "peerWriteBandwidthGBs",
                      "memory_bandwidth_gbs": "memoryBandwidthGBs"}),
    KindSpec("disk-io", _N, skip_marker="DISK_IO_SKIP"),
    KindSpec("fabric-soak", _P, sustained_load=True, skip_marker="FABRIC_SOAK_SKIP"),
    KindSpec("fingerprint-probe", _N, burst_only=True, skip_marker="FINGERPRINT_PROBE_SKIP"),
    KindSpec("host-health", _N, image=CUDA,
             aliases={"ib_counters_saturated": "fabricCountersSaturated",
                      "ib_saturated_counters": "fabricSaturatedCounters",
                      "ib_counter_status": "fabricCounterStatus",
                      "nic_link_down": "nicLinkDownEvents", "pcie_replay_count": "pcieReplayErrors",
                      "xid_count": "xidEvents", "rows_remapped": "remappedRows"}),
    KindSpec("clockprobe", _N, sustained_load=True, image=CUDA, skip_marker="CLOCKPROBE_SKIP",
             aliases={"sm_clock_mhz": "smClockMHz", "mem_clock_mhz": "memClockMHz",
                      "rated_boost_clock_mhz": "ratedBoostClockMHz"}),
    KindSpec("memory-stress", _N, sustained_load=True, image=RUNNER,
             skip_marker="STRESSAPPTEST_SKIP",
             aliases={"hardware_incidents": "memoryErrors", "sdc_count": "sdcDetections",
                      "read_bandwidth_mbs": "readBandwidthMBs",
                      "write_bandwidth_mbs": "writeBandwidthMBs"}),
)
# fmt: on

CUSTOM = "custom"
BUILT_IN: dict[str, KindSpec] = {k.name: k for k in KINDS}


def kind_spec(kind: str) -> KindSpec | None:
    """The table row of a built-in kind; None for ``custom`` and for unknown kinds."""
    return BUILT_IN.get(kind)


def is_built_in(kind: str) -> bool:
    return kind in BUILT_IN


def burst_only(kind: str) -> bool:
    spec = BUILT_IN.get(kind)
    return spec is not None and spec.burst_only


def drives_sustained_load(kind: str) -> bool:
    spec = BUILT_IN.get(kind)
    return spec is not None and spec.sustained_load
