"""Which nodes a Workflow runs on (specs/certify.md §3.2 discoverTargetNodes, §3.1
createWorkflowForCategory steps 1-4), as pure functions over Node objects (plain mappings, as
the Kubernetes API returns them).

Order, as the original's: the target's labels, names and taints (:func:`glimmer.certify.target.
select`, the very rule the simulator's path uses, so both select the same nodes), cordoned
nodes dropped unless the target keeps them, GPU nodes only (``nvidia.com/gpu.present=true``),
by name; then one GPU architecture (the majority; the rest excluded), and the GPU capacity
filter against what the workload requests per node. Every exclusion is said in one
``exclusionReason`` joined with ". ", so a report shows why a matched node was not certified.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from glimmer.api.certify.options import quantity_value
from glimmer.certify.catalog.gpu import PRODUCT_LABEL, parse_product
from glimmer.certify.grouping import NodeInfo, Taint
from glimmer.certify.platform.detect import (
    GPU_PRESENT_LABEL,
    GPU_RESOURCE,
    agreed_platform,
    allocatable_count,
    first_node_platform,
    node_labels,
    node_name,
)
from glimmer.certify.spec import CertSpec, NodeRequirement, TaintRequirement
from glimmer.certify.target import (
    arch_of,
    majority_arch,
    select,
    unknown_names,
    unknown_names_message,
)
from glimmer.certify.threshold_verdict import go_duration
from glimmer.errors import InputError, Location

Node = Mapping[str, Any]

NODE_DISCOVERY_ERROR = "NodeDiscoveryError"
PARTITION_ERROR = "PartitionError"
ARCHITECTURE_UNKNOWN = "GPUArchitectureUnknown"
WAITING_FOR_NODES = "WaitingForNodes"
CORDONED_EVENT = "CordonedNodesExcluded"
HETEROGENEOUS_GPU_EVENT = "HeterogeneousGPU"
# How long a Certification waits for nodes to match its target before it fails (§3.1 step 6).
NODE_WAIT = timedelta(minutes=5)
TARGET_FIELD = "spec.orchestration.target"


class DiscoveryError(InputError):
    """The target cannot be run as written; ``reason`` is the condition reason to set."""

    reason = NODE_DISCOVERY_ERROR


class UnknownNodeNames(DiscoveryError):
    """``nodeNames`` names a node the cluster has no Node of: refused at once, never waited
    for (a Node that is not there yet is no reason to certify the others without it)."""


class PartitionError(DiscoveryError):
    reason = PARTITION_ERROR


class ArchitectureUnknown(DiscoveryError):
    reason = ARCHITECTURE_UNKNOWN


# ---- the target as CertSpec, the nodes as NodeInfo -------------------------------------------


def target_spec(target: Mapping[str, Any] | None, name: str = "workflow") -> CertSpec:
    """A wire TargetSpec (§2.1; None: every node) as the CertSpec :func:`select` reads."""
    t = target or {}
    return CertSpec(
        name=name,
        node_selector=dict(t.get("nodeSelector") or {}),
        match_expressions=tuple(
            NodeRequirement(str(r["key"]), str(r["operator"]), tuple(r.get("values") or ()))
            for r in t.get("matchExpressions") or ()
        ),
        node_names=tuple(t.get("nodeNames") or ()),
        taint_selectors=tuple(
            TaintRequirement(str(s["key"]), s.get("value") or None, s.get("effect") or None)
            for s in t.get("taintSelectors") or ()
        ),
        include_unschedulable=bool(t.get("includeUnschedulable")),
    )


def node_info(node: Node) -> NodeInfo:
    """A Node object as the selection and grouping read it."""
    spec = node.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    taints = tuple(
        Taint(str(t.get("key", "")), str(t.get("value") or ""), str(t.get("effect") or ""))
        for t in spec.get("taints") or ()
        if isinstance(t, Mapping)
    )
    labels = {str(k): str(v) for k, v in node_labels(node).items()}
    return NodeInfo(node_name(node), labels, taints, bool(spec.get("unschedulable")))


def _gpu(node: NodeInfo) -> bool:
    return node.labels.get(GPU_PRESENT_LABEL) == "true"


# ---- discoverTargetNodes ---------------------------------------------------------------------


@dataclass(frozen=True)
class Discovered:
    """The target's schedulable GPU nodes by name, and the GPU nodes it matched but that are
    cordoned (left out; by name)."""

    nodes: tuple[Node, ...]
    cordoned: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(node_name(n) for n in self.nodes)


def discover_target_nodes(nodes: Sequence[Node], target: Mapping[str, Any] | None) -> Discovered:
    """§3.2 discoverTargetNodes: nodeSelector, matchExpressions, nodeNames, taintSelectors;
    cordoned nodes dropped unless the target includes unschedulable ones (only GPU nodes are
    reported as cordoned); GPU nodes only; sorted by name. A ``nodeNames`` entry no Node has →
    :class:`UnknownNodeNames`, as the simulator's path refuses it."""
    spec = target_spec(target)
    by_name = {node_name(n): n for n in nodes}
    infos = [node_info(n) for n in nodes]
    unknown = unknown_names(infos, spec.node_names)
    if unknown:
        raise UnknownNodeNames(
            unknown_names_message("the cluster", unknown),
            Location(field=f"{TARGET_FIELD}.nodeNames"),
        )
    matched = select(infos, replace(spec, include_unschedulable=True))
    gpus = [n for n in matched if _gpu(n)]
    keep = spec.keeps_unschedulable
    cordoned = tuple(n.name for n in gpus if n.unschedulable and not keep)
    kept = tuple(by_name[n.name] for n in gpus if keep or not n.unschedulable)
    return Discovered(kept, cordoned)


def cordoned_reason(cordoned: Sequence[str]) -> str:
    return (
        f"{len(cordoned)} node(s) matched the target but were unschedulable (cordoned): "
        + ", ".join(cordoned)
    )


def no_nodes_error(where: Location | None = None) -> DiscoveryError:
    return DiscoveryError(
        "No target nodes found matching orchestration target",
        where or Location(field=TARGET_FIELD),
    )


# ---- one GPU architecture --------------------------------------------------------------------


@dataclass(frozen=True)
class ArchChoice:
    """The architecture certified, the nodes of it, and the nodes of others (excluded)."""

    arch: str
    nodes: tuple[Node, ...]
    excluded: tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        if not self.excluded:
            return ""
        return f"target set has more than one GPU architecture; certified {self.arch} only"


def choose_architecture(
    nodes: Sequence[Node],
    node_selector: Mapping[str, str] | None = None,
    where: Location | None = None,
) -> ArchChoice:
    """The majority architecture of ``nodes`` (ties to the earliest node's; unlabelled nodes do
    not vote) and its nodes; with no labelled node, the target's ``nvidia.com/gpu.product``
    selector; with neither, ArchitectureUnknown (§3.1 step 2)."""
    infos = [node_info(n) for n in nodes]
    arch = majority_arch(infos)
    if not arch:
        arch = parse_product((node_selector or {}).get(PRODUCT_LABEL, ""))
        if not arch:
            raise ArchitectureUnknown(
                "cannot determine GPU architecture of the target nodes "
                f"({PRODUCT_LABEL} label is required)",
                where or Location(field=TARGET_FIELD),
            )
        return ArchChoice(arch, tuple(nodes))
    kept = tuple(n for n, i in zip(nodes, infos, strict=True) if arch_of(i) == arch)
    excluded = tuple(i.name for i in infos if arch_of(i) != arch)
    return ArchChoice(arch, kept, excluded)


# ---- the GPU capacity filter -----------------------------------------------------------------


def _gpu_requests(obj: Any) -> list[float]:
    out: list[float] = []
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            for key, value in item.items():
                if key in ("requests", "limits") and isinstance(value, Mapping):
                    got = quantity_value(value.get(GPU_RESOURCE)) if GPU_RESOURCE in value else None
                    if got is not None:
                        out.append(got)
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return out


def workload_gpus_per_node(
    job_template: Mapping[str, Any] | None, dependencies: Sequence[Any] = ()
) -> int:
    """The most ``nvidia.com/gpu`` any ``requests``/``limits`` map asks for, anywhere in the
    job template or a dependency (0 when none does): what one node must supply."""
    found = _gpu_requests(job_template or {}) + _gpu_requests(list(dependencies))
    return int(max(found, default=0))


@dataclass(frozen=True)
class CapacityCut:
    """Nodes that can supply the request (unknown capacity kept), and the ones that cannot,
    with what they have."""

    nodes: tuple[Node, ...]
    short: tuple[tuple[str, int], ...] = ()
    requested: int = 0

    @property
    def reason(self) -> str:
        if not self.short:
            return ""
        have = ", ".join(f"{name} has {n}" for name, n in self.short)
        return (
            f"{len(self.short)} node(s) matched the target but have insufficient GPU capacity, the "
            f"workload requests {self.requested} {GPU_RESOURCE} per node: {have}"
        )


def capacity_filter(
    nodes: Sequence[Node], gpus_per_node: int, where: Location | None = None
) -> CapacityCut:
    """Drop nodes whose allocatable GPUs are positive but below ``gpus_per_node``; absent or
    zero allocatable is unknown (a node still registering its devices) and kept. Every node
    short → PartitionError naming the best available."""
    if gpus_per_node <= 0:
        return CapacityCut(tuple(nodes))
    kept: list[Node] = []
    short: list[tuple[str, int]] = []
    for node in nodes:
        have = allocatable_count(node, GPU_RESOURCE)
        if have is not None and 0 < have < gpus_per_node:
            short.append((node_name(node), int(have)))
        else:
            kept.append(node)
    if nodes and not kept:
        best = max(n for _, n in short)
        raise PartitionError(
            f"No node can supply the {gpus_per_node} {GPU_RESOURCE} per node the workload "
            f"requests: best available is {best} across {len(short)} matching node(s). Lower "
            "gpusPerNode or target nodes with more GPUs",
            where or Location(field=TARGET_FIELD),
        )
    return CapacityCut(tuple(kept), tuple(short), gpus_per_node)


# ---- the whole discovery ---------------------------------------------------------------------


def exclusion_summary(reasons: Sequence[str]) -> str:
    """The exclusion reasons that apply, joined with ". " (the status field's one line)."""
    return ". ".join(r for r in reasons if r)


@dataclass(frozen=True)
class Discovery:
    """What discovery decided: the nodes, their architecture, and every matched node left out
    (by name, sorted) with why, plus the events the controller emits for it."""

    nodes: tuple[Node, ...]
    arch: str
    cordoned: tuple[str, ...] = ()
    arch_excluded: tuple[str, ...] = ()
    capacity_short: tuple[tuple[str, int], ...] = ()
    reasons: tuple[str, ...] = ()
    platform: str = ""  # set by discover_for_workflow / discover_for_category

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(node_name(n) for n in self.nodes)

    @property
    def excluded_nodes(self) -> tuple[str, ...]:
        short = (name for name, _ in self.capacity_short)
        return tuple(sorted({*self.cordoned, *self.arch_excluded, *short}))

    @property
    def exclusion_reason(self) -> str:
        return exclusion_summary(self.reasons)

    def events(self) -> list[tuple[str, str, str]]:
        """(type, reason, message) of the Warning events discovery raises (§3.2)."""
        out: list[tuple[str, str, str]] = []
        if self.cordoned:
            out.append(("Warning", CORDONED_EVENT, cordoned_reason(self.cordoned)))
        if self.arch_excluded:
            message = (
                f"target set has more than one GPU architecture; certified {self.arch} only, "
                f"excluded: {', '.join(self.arch_excluded)}"
            )
            out.append(("Warning", HETEROGENEOUS_GPU_EVENT, message))
        return out


def discover(
    nodes: Sequence[Node],
    target: Mapping[str, Any] | None,
    where: Location | None = None,
) -> Discovery:
    """Discovery up to the architecture (the capacity filter needs the rendered request, so
    :func:`with_capacity` follows once overrides applied). No node → NodeDiscoveryError."""
    found = discover_target_nodes(nodes, target)
    if not found.nodes:
        raise no_nodes_error(where)
    selector = (target or {}).get("nodeSelector") or {}
    choice = choose_architecture(found.nodes, selector, where)
    reasons = (cordoned_reason(found.cordoned) if found.cordoned else "", choice.reason)
    return Discovery(
        choice.nodes,
        choice.arch,
        found.cordoned,
        choice.excluded,
        reasons=tuple(r for r in reasons if r),
    )


def discover_for_workflow(
    nodes: Sequence[Node], target: Mapping[str, Any] | None, where: Location | None = None
) -> Discovery:
    """The Workflow controller's discovery (§3.2): :func:`discover`, then a platform every
    discovered node agrees on (HeterogeneousPlatform naming who does not)."""
    found = discover(nodes, target, where)
    return replace(found, platform=agreed_platform(found.nodes, where))


def discover_for_category(
    nodes: Sequence[Node], target: Mapping[str, Any] | None, where: Location | None = None
) -> Discovery:
    """The Certification's steps 1-2 of createWorkflowForCategory (§3.1): :func:`discover`,
    and the first node's platform (the Workflow re-checks that all agree)."""
    found = discover(nodes, target, where)
    return replace(found, platform=first_node_platform(found.nodes))


def with_capacity(found: Discovery, gpus_per_node: int, where: Location | None = None) -> Discovery:
    """``found`` after the GPU capacity filter, its reason added to the summary."""
    cut = capacity_filter(found.nodes, gpus_per_node, where)
    reasons = (*found.reasons, cut.reason) if cut.reason else found.reasons
    return replace(found, nodes=cut.nodes, capacity_short=cut.short, reasons=reasons)


def check_nodes_required(needed: int, found: Discovery, where: Location | None = None) -> int:
    """nodesPerJob after discovery (§3.2): below 1 means every node; more than there are is a
    PartitionError saying why nodes are missing and what to change."""
    have = len(found.nodes)
    if needed < 1:
        return have
    if needed <= have:
        return needed
    causes = f" ({found.exclusion_reason})" if found.exclusion_reason else ""
    raise PartitionError(
        f"Not enough schedulable nodes: need {needed}, found {have}{causes}. Set nodesPerJob "
        f"to {have}, or narrow the target to one architecture, or lower gpusPerNode",
        where or Location(field=TARGET_FIELD),
    )


# ---- waiting for nodes (§3.1 step 6) ---------------------------------------------------------


def still_waiting(created: datetime, now: datetime, wait: timedelta = NODE_WAIT) -> bool:
    """Whether a Certification whose target matches nothing keeps waiting (nodes may still be
    joining) rather than failing: for ``wait`` from its creation."""
    return now - created < wait


def waiting_message(
    target: Mapping[str, Any] | None,
    created: datetime,
    now: datetime,
    wait: timedelta = NODE_WAIT,
) -> str:
    """The WaitingForNodes message: the selector that matched nothing, and how much longer."""
    left = max(wait - (now - created), timedelta(0))
    selector = (target or {}).get("nodeSelector") or {}
    shown = ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<all nodes>"
    return (
        f"No schedulable GPU nodes match target nodeSelector {shown}; waiting "
        f"{go_duration(left)} more for nodes to join"
    )
