"""Where a certification runs, read from its nodes (specs/certify.md §3.6): the platform from a
Node's ``spec.providerID`` and labels, and the RDMA NIC resource of an on-prem GB200/GB300 fleet.

Input is Node objects as the Kubernetes API returns them (plain mappings); :func:`node_object`
turns a :class:`~glimmer.certify.grouping.NodeInfo` (what the simulator's substrate lists) into
one, so the simulator and a cluster are judged by the same rules.

The certification path takes the first node's platform (a cluster is one platform, and the
first node is as good a witness as any); the Workflow path requires every node to agree and
refuses a mixed set, naming who disagrees, because the overrides it applies are per platform.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from glimmer.api.certify.options import quantity_value
from glimmer.certify.catalog.gpu import PRODUCT_LABEL
from glimmer.certify.grouping import NodeInfo
from glimmer.certify.platform.errors import PlatformError
from glimmer.errors import InputError, Location

Node = Mapping[str, Any]

HOSTNAME_LABEL = "kubernetes.io/hostname"
FORGE_SITE_LABEL = "nke.nvidia.com/site-name"
TOGETHER_WORKER_LABEL = "node-role.together.ai/worker"
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
GPU_RESOURCE = "nvidia.com/gpu"
MLNX_RESOURCE = "nvidia.com/mlnxnics"
RDMA_PREFIX = "rdma/"
DEFAULT_PLATFORM = "onprem"
HETEROGENEOUS_PLATFORM = "HeterogeneousPlatform"
NIC_DETECTION_EVENT = "NICResourceDetection"
# Only these architectures on an on-prem site take their NIC resource from the nodes: clouds
# name theirs in the platform overrides, and older parts use nvidia.com/mlnxnics.
NIC_DETECTED_ARCHITECTURES = frozenset({"gb200", "gb300"})
NIC_AMBIGUOUS = "ambiguous"  # several candidates suffice on every node
NIC_SHORT = "short"  # candidates exist, none at the requested count on every node
NIC_NONE = "none"  # the nodes offer no candidate at all

# §3.6, in the order tried: a providerID prefix and its platform. A prefix whose platform
# depends on a label too is resolved in :func:`platform_of`.
PROVIDER_PREFIXES: tuple[tuple[str, str], ...] = (
    ("aws://", "aws"),
    ("gce://", "gcp"),
    ("azure://", "azure"),
    ("ocid1.", "oci"),
    ("openstack://", "onprem"),
    ("nscale://", "nscale"),
    ("kubevirt://", "togetherai"),  # only with the Together worker label, else on-prem
    # Metal3 is how CAPI provisions bare metal: Mistral's sites do, but so may any on-prem site
    # (the documented trap); the table is the original's, kept as it is.
    ("metal3://", "mistral"),
)


def _section(node: Node, part: str) -> Mapping[str, Any]:
    got = node.get(part)
    return got if isinstance(got, Mapping) else {}


def node_name(node: Node) -> str:
    return str(_section(node, "metadata").get("name", ""))


def node_labels(node: Node) -> Mapping[str, str]:
    got = _section(node, "metadata").get("labels")
    return got if isinstance(got, Mapping) else {}


def allocatable(node: Node) -> Mapping[str, Any]:
    got = _section(node, "status").get("allocatable")
    return got if isinstance(got, Mapping) else {}


def allocatable_count(node: Node, resource: str) -> float | None:
    """How many of ``resource`` the node can allocate; None when it does not say (or says
    something that is not a quantity): unknown, never zero."""
    raw = allocatable(node).get(resource)
    return None if raw is None else quantity_value(raw)


def platform_of(node: Node) -> str:
    """The platform one node is on (§3.6)."""
    provider = str(_section(node, "spec").get("providerID") or "")
    labels = node_labels(node)
    if not provider:
        forge = "forge" in labels.get(HOSTNAME_LABEL, "") or FORGE_SITE_LABEL in labels
        return "forge" if forge else DEFAULT_PLATFORM
    for prefix, platform in PROVIDER_PREFIXES:
        if provider.startswith(prefix):
            if platform == "togetherai" and TOGETHER_WORKER_LABEL not in labels:
                return DEFAULT_PLATFORM
            return platform
    return DEFAULT_PLATFORM


def first_node_platform(nodes: Sequence[Node]) -> str:
    """The certification path's platform: the first node's (on-prem when there is none)."""
    return platform_of(nodes[0]) if nodes else DEFAULT_PLATFORM


class HeterogeneousPlatform(InputError):
    """The target's nodes are on more than one platform (the Workflow's HeterogeneousPlatform)."""

    reason = HETEROGENEOUS_PLATFORM


def agreed_platform(nodes: Sequence[Node], where: Location | None = None) -> str:
    """The Workflow path's platform: every node's, which must be the same; on-prem when there
    is no node. HeterogeneousPlatform names each platform seen and its nodes otherwise."""
    by_platform: dict[str, list[str]] = {}
    for node in nodes:
        by_platform.setdefault(platform_of(node), []).append(node_name(node))
    if len(by_platform) <= 1:
        return next(iter(by_platform), DEFAULT_PLATFORM)
    seen = "; ".join(f"{p}: {', '.join(sorted(names))}" for p, names in sorted(by_platform.items()))
    raise HeterogeneousPlatform(
        f"the target nodes are on more than one platform ({seen}); a Workflow applies one "
        "platform's overrides, so narrow the target to one platform",
        where or Location(field="spec.orchestration.target"),
    )


# ---- the NIC resource ------------------------------------------------------------------------


def _is_candidate(resource: str) -> bool:
    return resource.startswith(RDMA_PREFIX) or resource == MLNX_RESOURCE


@dataclass(frozen=True)
class NicDetection:
    """What NIC auto-detection decided: the resource to request ("" for none) and, when it
    declined though it was asked, why (the text of a Normal NICResourceDetection event)."""

    resource: str = ""
    message: str = ""
    candidates: tuple[str, ...] = ()  # the RDMA resources the nodes offer
    # Why nothing was chosen: NIC_AMBIGUOUS, NIC_NONE or NIC_SHORT ("" when chosen or not asked).
    declined: str = ""

    @property
    def ambiguous(self) -> bool:
        """More than one resource would do on every node: choosing would be a guess."""
        return self.declined == NIC_AMBIGUOUS


def detects_nic(platform: str, arch: str, configured: str | None) -> bool:
    """Whether §3.6 auto-detection applies: on-prem GB200/GB300 with nicResourceName unset."""
    return not configured and platform == "onprem" and arch in NIC_DETECTED_ARCHITECTURES


def detect_nic(
    nodes: Sequence[Node], mlnx_per_node: int, *, platform: str, arch: str, configured: str = ""
) -> NicDetection:
    """The NIC resource to request per node (§3.6). The configured name always wins; otherwise,
    on on-prem GB200/GB300 only, the one candidate (any ``rdma/*``, or exactly
    ``nvidia.com/mlnxnics``) every node allocates at least ``mlnx_per_node`` of. None, several or
    too few → nothing, with the reason, which names the requested count."""
    if configured:
        return NicDetection(configured)
    if not detects_nic(platform, arch, configured) or mlnx_per_node <= 0:
        return NicDetection()
    offered = sorted({r for n in nodes for r in allocatable(n) if _is_candidate(r)})
    enough = [
        r
        for r in offered
        if nodes and all((allocatable_count(n, r) or 0) >= mlnx_per_node for n in nodes)
    ]
    wanted = f"{mlnx_per_node} per node on every one of the {len(nodes)} target node(s)"
    if len(enough) == 1:
        return NicDetection(enough[0], "", tuple(offered))
    if len(enough) > 1:
        message = (
            f"NIC resource not auto-detected: more than one RDMA resource is allocatable at "
            f"{wanted} ({', '.join(enough)}); set nicResourceName to the one the workload uses"
        )
        declined = NIC_AMBIGUOUS
    elif offered:
        message = (
            f"NIC resource not auto-detected: no RDMA resource is allocatable at {wanted} "
            f"(offered: {', '.join(offered)}); set nicResourceName, or lower mlnxPerNode"
        )
        declined = NIC_SHORT
    else:
        message = (
            f"NIC resource not auto-detected: the target nodes offer no RDMA resource (rdma/* or "
            f"{MLNX_RESOURCE}) and {wanted} was requested; set nicResourceName, or set "
            "mlnxPerNode to 0 to run without one"
        )
        declined = NIC_NONE
    return NicDetection("", message, tuple(offered), declined)


def refuse_ambiguous_nic(found: NicDetection, field_path: str) -> None:
    """The refusal of a path that must not silently run without NICs (a render checked
    against live nodes): more than one candidate is a question only the owner can answer."""
    if found.ambiguous:
        raise PlatformError(found.message, Location(field=field_path))


# ---- the simulator's nodes -------------------------------------------------------------------


def node_object(
    info: NodeInfo,
    *,
    provider_id: str = "",
    allocatable: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``info`` as the Node object a cluster would return: its labels, taints and cordon, and
    ``nvidia.com/gpu.present=true`` on a node with a GPU product label (what GPU feature
    discovery writes), so that discovery treats a simulated fleet as it treats a cluster."""
    labels = dict(info.labels)
    if PRODUCT_LABEL in labels:
        labels.setdefault(GPU_PRESENT_LABEL, "true")
    spec: dict[str, Any] = {"unschedulable": info.unschedulable}
    if provider_id:
        spec["providerID"] = provider_id
    if info.taints:
        spec["taints"] = [
            {"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect}
            for t in info.taints
        ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": info.name, "labels": labels},
        "spec": spec,
        "status": {"allocatable": dict(allocatable or {})},
    }
