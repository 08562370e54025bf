"""The fault modes the simulator can inject, as one data table.

Each row says which targets a mode accepts (by axis, optionally narrowed by a condition), how
far it reaches (which GPUs, NVLink edges or NIC ports it touches), what it does (its effect
class, read by allocation, physics and telemetry), and which burn-in test kinds and metrics
detect it. The detectors are the ones the fault-coverage sweep (tools/coverage) confirms by
injecting each mode into the simulated runners: a detector the sweep added to what the table
first expected says why it sees the fault (``Detector.why``), and one it refuted stays on the
mode with the reason (``FaultMode.refuted``), so a reader sees both what catches a mode and
what, plausibly but wrongly, does not. The first thirteen rows are the shared modes of
specs/fleet.md §4.1, in table order (capture walks them in this order); the rest are what a
readiness tool must catch on top. Code reads this table; ``docs`` and the coverage tests are
derived from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Axis(StrEnum):
    """What kind of entity a target key names; read from the key's prefix (see AXIS_OF_PREFIX)."""

    GPU = "gpu"
    NODE = "gpu_node"
    RACK = "gpu_rack"
    TRAY = "gpu_tray"
    DEVICE = "gpu_device"
    FABRIC = "gpu_fabric"
    SWITCH = "gpu_switch"
    PORT = "gpu_port"
    NIC = "gpu_nic"  # our addition: NIC ports are targets of the readiness modes
    STORAGE = "gpu_storage"
    NVSWITCH = "nvlink_switch"
    DOMAIN = "nvlink_domain"
    PARTITION = "nvlink_partition"
    NVPORT = "nvlink_port"
    SCHEDULER = "gpu_scheduler"
    PROJECT = "gpu_project"
    WORKLOAD = "gpu_workload"


AXIS_OF_PREFIX: dict[str, Axis] = {
    "gpu": Axis.GPU,
    "node": Axis.NODE,
    "rack": Axis.RACK,
    "tray": Axis.TRAY,
    "device": Axis.DEVICE,
    "fabric": Axis.FABRIC,
    "switch": Axis.SWITCH,
    "port": Axis.PORT,
    "nic": Axis.NIC,
    "storage": Axis.STORAGE,
    "nvswitch": Axis.NVSWITCH,
    "domain": Axis.DOMAIN,
    "partition": Axis.PARTITION,
    "nvport": Axis.NVPORT,
    "scheduler": Axis.SCHEDULER,
    "project": Axis.PROJECT,
    "gpuworkload": Axis.WORKLOAD,
}


def axis_of(key: str) -> Axis | None:
    """The axis of a target key (``gpu:host/0`` → GPU), or None for an unknown prefix."""
    prefix, sep, _ = key.partition(":")
    return AXIS_OF_PREFIX.get(prefix) if sep else None


class Condition(StrEnum):
    """A narrowing of an axis that needs the topology to check (§4.1 footnotes)."""

    COMPUTE_TRAY = "compute_tray"  # tray:<site>/<rack>/compute/<n>
    NVSWITCH_TRAY = "nvswitch_tray"  # tray:<site>/<rack>/nvswitch/<n>
    BACKEND = "backend"  # a fabric, switch or port of a backend fabric
    LIQUID_RACK = "liquid_rack"
    CDU_IN_LIQUID_RACK = "cdu_in_liquid_rack"
    REACHES_EDGE = "reaches_edge"  # the target reaches at least one confirmed NVLink edge


@dataclass(frozen=True)
class TargetRule:
    axis: Axis
    condition: Condition | None = None


class Reach(StrEnum):
    """How a captured fault's target turns into the GPUs (or edges, NIC ports) it affects."""

    CLOSURE = "closure"  # the GPU itself or any ancestor of it (§4.3 default)
    BACKEND_NICS = "backend_nics"  # GPUs of nodes with a backend NIC on the fabric/switch/port
    STORAGE_CLIENTS = "storage_clients"  # GPUs of nodes whose storage client uses the cluster
    SCHEDULED = "scheduled"  # GPUs held in the plan by matching workloads
    TRAY_DOMAIN = "tray_domain"  # every GPU of the domain the switch tray belongs to
    EDGES = "edges"  # NVLink edges whose GPU or port has the target in its closure
    NIC_PORTS = "nic_ports"  # NIC ports: the NIC itself, or every NIC of a node


class Effect(StrEnum):
    """What a mode does; allocation, physics and telemetry each read the classes they model."""

    EVENT = "event"  # nothing changes but an event counter (Xid burst, leak)
    UNAVAILABLE = "unavailable"  # fatal: GPUs unavailable, touching workloads released
    PREEMPTION = "preemption"
    QUOTA = "quota"
    CONGESTION = "congestion"  # utilisation × (1 − congestion_loss × I)
    STORAGE = "storage"  # utilisation × (1 − storage_loss × I)
    NVLINK = "nvlink"  # utilisation × (1 − congestion_loss × max(I_degraded, I_tray))
    COOLING = "cooling"
    EDGE_ERRORS = "edge_errors"  # NVLink errors/s = nvlink_errors_per_second × I per edge
    CLOCK_PIN = "clock_pin"  # SM clock held at a low P-state
    CORRUPTION = "corruption"  # wrong answers under load, nothing visible in telemetry
    ECC_CORRECTABLE = "ecc_correctable"
    ECC_UNCORRECTABLE = "ecc_uncorrectable"
    ROW_REMAP = "row_remap"
    PCIE_DOWNTRAIN = "pcie_downtrain"
    NIC_DOWN = "nic_down"
    NIC_FLAP = "nic_flap"
    NIC_DEGRADED = "nic_degraded"
    MEMLOCK = "memlock"  # RDMA cannot register enough memory: the runner refuses (Error)
    THERMAL_PASTE = "thermal_paste"  # extra temperature rise proportional to load


@dataclass(frozen=True)
class Detector:
    """A burn-in test kind and the metric that moves when the fault is present.

    ``metric`` None means the fault surfaces as the kind's outcome (an Error or a Fail
    without a gated metric), as the note says.
    """

    kind: str
    metric: str | None
    note: str = ""
    scope: str | None = None  # the scope at which it holds ("Node", "Pair"; None: any)
    why: str = ""  # for a detector the coverage sweep found: why it sees the fault


@dataclass(frozen=True)
class Refuted:
    """A detector once expected that the simulated runners show cannot see the mode."""

    detector: Detector
    why: str


@dataclass(frozen=True)
class FaultMode:
    name: str
    targets: tuple[TargetRule, ...]
    reach: Reach
    effect: Effect
    shared: bool  # one of the 13 shared contracts of §4.1
    detectors: tuple[Detector, ...]
    scope_note: str  # why no built-in profile detects it, when ``detectors`` is empty
    description: str
    drops_exporter: bool = False  # dcgm-exporter cannot report the affected GPUs at all
    rack_level: bool = False  # also folded per rack (a CDU target resolves to its rack)
    refuted: tuple[Refuted, ...] = ()  # expected detectors that do not see it, with why
    # Why the built-in profiles run or gate none of its detectors ("" when they do): the
    # coverage document says so instead of the sweep failing.
    outside_builtins: str = ""


def _t(axis: Axis, condition: Condition | None = None) -> TargetRule:
    return TargetRule(axis, condition)


def _d(kind: str, metric: str | None, note: str = "", scope: str | None = None) -> Detector:
    return Detector(kind, metric, note, scope)


def _found(kind: str, metric: str | None, why: str, scope: str | None = None) -> Detector:
    """A detector the coverage sweep found; an outcome-only one's reason names the outcome."""
    return Detector(kind, metric, why if metric is None else "", scope, why)


def _refuted(kind: str, metric: str | None, why: str) -> Refuted:
    return Refuted(Detector(kind, metric), why)


_GPU, _NODE, _RACK = _t(Axis.GPU), _t(Axis.NODE), _t(Axis.RACK)
_CTRAY = _t(Axis.TRAY, Condition.COMPUTE_TRAY)
_EDGE = Condition.REACHES_EDGE

# fmt: off
MODES: tuple[FaultMode, ...] = (
    # ---- the 13 shared modes of specs/fleet.md §4.1, in table order ----
    FaultMode("gpu_xid_burst", (_GPU, _NODE, _RACK, _CTRAY), Reach.CLOSURE, Effect.EVENT, True,
              (_d("host-health", "xidEvents"), _d("thermal-soak", "xidEvents", "kmsg grant"),
               _d("gpu-burn", "xidEvents", "kmsg grant")),
              "", "a burst of non-fatal driver Xid events"),
    FaultMode("gpu_fallen_off_bus", (_GPU, _NODE, _CTRAY), Reach.CLOSURE, Effect.UNAVAILABLE,
              True,
              (_d("host-health", "xidEvents", "Xid 79 in the kernel log"),
               _d("fingerprint-probe", "acceleratorCount", "the device leaves the PCI bus"),
               _d("gpu-burn", "deviceCount", "one device fewer than allocated"),
               *(_found(kind, None, "Fail: the runtime shows fewer GPUs than the node has (the "
                        "runner's own count)")
                 for kind in ("clockprobe", "gpu-burn", "thermal-soak", "memory-bw",
                              "dcgm-diag"))),
              "", "the GPU fell off the bus (Xid 79): unavailable, dropped by the exporter",
              drops_exporter=True),
    FaultMode("gpu_node_drain", (_NODE, _RACK, _CTRAY), Reach.CLOSURE, Effect.UNAVAILABLE, True,
              (), "a drain is scheduler state, not a hardware fault; burn-in cordons its "
              "targets itself and restores what it found, so a drained node is tested as is",
              "the node is drained: its GPUs take no work"),
    FaultMode("gpu_operand_unavailable", (_NODE,), Reach.CLOSURE, Effect.UNAVAILABLE, True,
              (), "GPU operator operands are platform software; runner pods cannot start and "
              "the attempt is an Error, which no gate judges",
              "GPU operator operands (driver, device plugin, exporter) are not ready",
              drops_exporter=True),
    FaultMode("gpu_preemption_storm",
              (_t(Axis.SCHEDULER), _t(Axis.PROJECT), _t(Axis.WORKLOAD)),
              Reach.SCHEDULED, Effect.PREEMPTION, True,
              (), "scheduler behaviour, not hardware; outside every burn-in profile",
              "the scheduler preempts the lowest-priority matching workloads"),
    FaultMode("gpu_quota_exhaustion", (_t(Axis.PROJECT),), Reach.SCHEDULED, Effect.QUOTA, True,
              (), "scheduler behaviour, not hardware; outside every burn-in profile",
              "the project's GPU quota shrinks to floor(quota × (1 − I))"),
    FaultMode("gpu_backend_congestion",
              (_t(Axis.FABRIC, Condition.BACKEND), _t(Axis.SWITCH, Condition.BACKEND),
               _t(Axis.PORT, Condition.BACKEND)),
              Reach.BACKEND_NICS, Effect.CONGESTION, True,
              (_d("ib-write-bw", "bandwidthGbps"), _d("nccl", "busBandwidthGBs", scope="Pair"),
               _d("fabric-soak", "minBandwidthGbps"),
               _found("gpudirect-rdma", "bandwidthGbps",
                      "GPUDirect RDMA crosses the same congested backend path as ib_write_bw")),
              "", "congestion on the backend (RDMA) fabric slows work crossing it"),
    FaultMode("gpu_storage_latency", (_t(Axis.STORAGE),), Reach.STORAGE_CLIENTS, Effect.STORAGE,
              True, (_d("disk-io", "ioLatencyUs", "only when DISK_IO_PATH is on that storage"),),
              "", "the shared storage cluster answers slowly",
              outside_builtins="no built-in profile runs disk-io (it needs a site's DISK_IO_PATH "
              "mount on the shared storage)"),
    FaultMode("gpu_cooling_fault",
              (_RACK, _t(Axis.DEVICE, Condition.CDU_IN_LIQUID_RACK)),
              Reach.CLOSURE, Effect.COOLING, True,
              (_d("thermal-soak", "gpuTempC"), _d("clockprobe", "sustainedClockPct"),
               _found("thermal-soak", "throttleEvents",
                      "a part held at its thermal limit latches thermal slowdown reasons"),
               _found("clockprobe", "throttleEvents", "same thermal reasons under the FMA load")),
              "", "rack cooling (or its CDU) fails: hotter GPUs, derated work, less flow",
              rack_level=True,
              refuted=(_refuted("thermal-soak", "sustainedClockPct",
                                "the soak's 60 % floor sits below a cooling-derated clock (0.7 × "
                                "~90 % ≈ 63 %); the soak sees the same fault as thermal throttle "
                                "events"),)),
    FaultMode("gpu_leak_detected",
              (_t(Axis.RACK, Condition.LIQUID_RACK), _t(Axis.DEVICE, Condition.CDU_IN_LIQUID_RACK)),
              Reach.CLOSURE, Effect.EVENT, True,
              (), "a facility event read by rack sensors; no runner observes it",
              "the liquid loop reports a leak", rack_level=True),
    FaultMode("gpu_nvlink_degraded", (_t(Axis.DOMAIN), _t(Axis.PARTITION)), Reach.CLOSURE,
              Effect.NVLINK, True,
              (_d("nccl", "busBandwidthGBs", "Node scope over NVLink", "Node"),
               _d("memory-bw", "peerReadBandwidthGBs"),
               _found("memory-bw", "peerWriteBandwidthGBs",
                      "peer writes cross the same degraded links as peer reads")),
              "", "the NVLink domain runs degraded: collectives slow down",
              outside_builtins="the built-in profiles gate no NVLink figure: memory-bandwidth "
              "gates only host<->device copies and nccl runs only at Pair scope (over the NIC)"),
    FaultMode("gpu_nvswitch_tray_failure", (_t(Axis.TRAY, Condition.NVSWITCH_TRAY),),
              Reach.TRAY_DOMAIN, Effect.NVLINK, True,
              (_d("nccl", "busBandwidthGBs", "Node scope over NVLink", "Node"),
               _found("memory-bw", "peerReadBandwidthGBs",
                      "peer copies cross the failed tray's switches")),
              "", "an NVL72 switch tray fails: the whole rack's domain loses bandwidth",
              outside_builtins="as for gpu_nvlink_degraded: no built-in test gates an NVLink "
              "figure"),
    FaultMode("gpu_nvlink_error_burst",
              (_t(Axis.GPU, _EDGE), _t(Axis.DOMAIN, _EDGE), _t(Axis.PARTITION, _EDGE),
               _t(Axis.NVSWITCH, _EDGE), _t(Axis.NVPORT, _EDGE)),
              Reach.EDGES, Effect.EDGE_ERRORS, True,
              (_d("dcgm-diag", "diagTestsFailed", "the NVLink subtest sees CRC errors"),),
              "", "a burst of NVLink CRC errors on the reached edges"),
    # ---- readiness modes: what a burn-in must catch beyond the shared contracts ----
    FaultMode("gpu_low_pstate", (_GPU, _NODE), Reach.CLOSURE, Effect.CLOCK_PIN, False,
              (_d("clockprobe", "sustainedClockPct"), _d("thermal-soak", "sustainedClockPct"),
               _d("clockprobe", "sustainedFmaThroughputTflops")),
              "", "the GPU is pinned in a low P-state and never reaches its boost clock"),
    FaultMode("gpu_silent_data_corruption", (_GPU,), Reach.CLOSURE, Effect.CORRUPTION, False,
              (_d("gpu-burn", "miscompares"), _d("thermal-soak", "miscompares"),
               _d("gemm-sweep", "maxRelativeError"), _d("nccl", "miscompares", scope="Pair")),
              "", "wrong results under load, with nothing in telemetry"),
    FaultMode("gpu_ecc_correctable", (_GPU,), Reach.CLOSURE, Effect.ECC_CORRECTABLE, False,
              (), "corrected errors are absorbed by design; the built-in profiles gate only "
              "uncorrected errors and remapped rows (it shows in DCGM_FI_DEV_ECC_SBE_VOL_TOTAL)",
              "a stream of correctable (single-bit) HBM ECC errors"),
    FaultMode("gpu_ecc_uncorrectable", (_GPU,), Reach.CLOSURE, Effect.ECC_UNCORRECTABLE, False,
              (_d("host-health", "eccErrors"), _d("gpu-burn", "eccErrors"),
               _d("thermal-soak", "eccErrors"),
               _found("dcgm-diag", "diagTestsFailed",
                      "DCGM's memory subtest fails on an uncorrectable error")),
              "", "uncorrectable (double-bit) HBM ECC errors"),
    FaultMode("gpu_row_remap", (_GPU,), Reach.CLOSURE, Effect.ROW_REMAP, False,
              (_d("host-health", "remappedRows"), _d("dcgm-diag", "remappedRows"),
               _found("dcgm-diag", "diagTestsFailed",
                      "at intensity 1 the remap fails and DCGM's memory subtest fails")),
              "", "HBM rows remapped after errors (a failed remap at I = 1)"),
    FaultMode("gpu_pcie_downtrained", (_GPU,), Reach.CLOSURE, Effect.PCIE_DOWNTRAIN, False,
              (_d("memory-bw", "hostToDeviceBandwidthGBs"),
               _d("memory-bw", "deviceToHostBandwidthGBs"),
               _found("host-health", "pcieReplayErrors",
                      "a marginal link that trained down also replays"),
               _found("dcgm-diag", "diagTestsFailed",
                      "DCGM's pcie subtest measures bandwidth below the SKU minimum")),
              "", "the GPU's PCIe link trained at a lower width and generation"),
    FaultMode("nic_link_down", (_t(Axis.NIC), _NODE), Reach.NIC_PORTS, Effect.NIC_DOWN, False,
              (_d("host-health", "nicLinkDownEvents"),
               _d("ib-write-bw", None, "Fail: RDMA hardware present but no ACTIVE port"),
               _found("nccl", None,
                      "Error: the rank behind the dead port never joins the rendezvous", "Pair"),
               _found("gpudirect-rdma", None, "Fail: RDMA hardware present but no ACTIVE port")),
              "", "a NIC port is down"),
    FaultMode("nic_link_flapping", (_t(Axis.NIC), _NODE), Reach.NIC_PORTS, Effect.NIC_FLAP,
              False,
              (_d("host-health", "nicLinkDownEvents"), _d("fabric-soak", "soakFailedIterations"),
               _d("fabric-soak", "linkErrorEvents"),
               _found("ib-write-bw", "bandwidthGbps",
                      "the port is down for part of every minute, so the mean bandwidth falls"),
               _found("nccl", "busBandwidthGBs",
                      "the collective's ring runs at the flapping link's mean rate", "Pair")),
              "", "a NIC port goes down and up repeatedly"),
    FaultMode("nic_degraded", (_t(Axis.NIC), _NODE), Reach.NIC_PORTS, Effect.NIC_DEGRADED,
              False,
              (_d("ib-write-bw", "bandwidthGbps"), _d("gpudirect-rdma", "bandwidthGbps"),
               _d("fabric-soak", "minBandwidthGbps"),
               _found("nccl", "busBandwidthGBs", "NCCL over one NIC scales with the port's rate",
                      "Pair"),
               _found("host-health", "nicLinkDownEvents",
                      "the port keeps retraining to a lower rate; each retrain is a link-down "
                      "transition")),
              "", "a NIC port runs below its line rate (bad cable or optic, lower speed)"),
    FaultMode("rdma_memlock_limit", (_NODE,), Reach.NIC_PORTS, Effect.MEMLOCK, False,
              (_d("ib-write-bw", None, "Error: memlock too small for the message size and QPs"),
               _d("nccl", None, "Error: memlock below what NCCL needs, before rendezvous", "Pair"),
               _found("gpudirect-rdma", None, "Error: the same memlock check as ib-write-bw")),
              "", "RLIMIT_MEMLOCK too small to register RDMA buffers"),
    FaultMode("gpu_thermal_paste_degraded", (_GPU,), Reach.CLOSURE, Effect.THERMAL_PASTE, False,
              (_d("thermal-soak", "gpuTempC"),
               _found("thermal-soak", "throttleEvents",
                      "the hot part reaches its slowdown temperature under the SGEMM load"),
               _found("clockprobe", "throttleEvents", "and under the FMA load")),
              "", "degraded thermal interface: the GPU runs hotter the harder it works",
              refuted=(
                  _refuted("thermal-soak", "meanTempUnderLoadC",
                           "thermal-soak never prints meanTempUnderLoadC (clockprobe does; the "
                           "soak prints meanTempC)"),
                  _refuted("clockprobe", "sustainedClockPct",
                           "the clock only backs off until the heat balances at the slowdown "
                           "temperature (a few % on an HGX H100), far above any floor; the part "
                           "shows as throttle events"))),
)
# fmt: on

MODE_BY_NAME: dict[str, FaultMode] = {m.name: m for m in MODES}
SHARED_MODES: tuple[FaultMode, ...] = tuple(m for m in MODES if m.shared)
# Capture walks modes in table order (§4.2); this is the rank of each mode in that walk.
MODE_ORDER: dict[str, int] = {m.name: i for i, m in enumerate(MODES)}


def mode(name: str) -> FaultMode | None:
    """The table row of a mode, or None for a name the simulator does not model."""
    return MODE_BY_NAME.get(name)
