"""``glimmer certify cluster-info``: what a certification would find on a cluster
(specs/certify.md §8 ``cluster info``): its nodes (GPU, ready, cordoned), the GPU product and
architecture of the majority, the platform, GPUs per node, NIC resources, the topology domains
the nodes group into, and the namespace's Certifications.

Read with the rules a certification reads them with (:mod:`glimmer.certify.platform.detect`,
the catalog's GPU table and platform overrides), so what it says is what a run would use.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import typer

from glimmer.certify.catalog.build import TOPOLOGY_KEY
from glimmer.certify.catalog.entries import platform_overrides
from glimmer.certify.catalog.gpu import PRODUCT_LABEL, node_defaults, parse_product
from glimmer.certify.platform.detect import (
    GPU_PRESENT_LABEL,
    GPU_RESOURCE,
    MLNX_RESOURCE,
    RDMA_PREFIX,
    allocatable,
    allocatable_count,
    first_node_platform,
    node_labels,
    node_name,
    platform_of,
)
from glimmer.cli.certify_cluster import (
    DEFAULT_NAMESPACE,
    ContextOpt,
    KubeconfigOpt,
    NamespaceOpt,
    Obj,
    OutputOpt,
    connect,
    meta_of,
    phase_of,
)
from glimmer.cli.certify_run import Output
from glimmer.cli.output import print_json

SHOWN_DOMAINS = 8  # the table lists this many domains, the largest first; JSON lists them all


def _counts(values: Sequence[str]) -> Obj:
    return dict(sorted(Counter(values).items(), key=lambda kv: (-kv[1], kv[0])))


def _ready(node: Mapping[str, Any]) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def topology_key(platform: str, nodes: Sequence[Mapping[str, Any]], given: str | None) -> str:
    """The label nodes are grouped by: the one given, else the platform's own (its overrides
    name it: aws, gcp, azure), else NVLink cliques when the nodes carry them; "" for none."""
    if given:
        return given
    for item in platform_overrides(platform):
        key = ((item.get("orchestration") or {}).get("topology") or {}).get("topologyKey")
        if key:
            return str(key)
    return TOPOLOGY_KEY if any(TOPOLOGY_KEY in node_labels(n) for n in nodes) else ""


def topology_doc(key: str, nodes: Sequence[Mapping[str, Any]]) -> Obj | None:
    """The domains of ``key`` with their node counts (largest first), and how many nodes
    carry no value for it."""
    if not key:
        return None
    values = [node_labels(n).get(key) for n in nodes]
    return {
        "key": key,
        "domains": _counts([v for v in values if v is not None]),
        "unlabelled": sum(v is None for v in values),
    }


def cluster_doc(
    nodes: Sequence[Mapping[str, Any]],
    certifications: Sequence[Obj],
    given_key: str | None = None,
) -> Obj:
    """What cluster-info reports, from the Node objects (plain JSON)."""
    gpu = [n for n in nodes if node_labels(n).get(GPU_PRESENT_LABEL) == "true"]
    products = [node_labels(n).get(PRODUCT_LABEL, "") for n in gpu]
    archs = [parse_product(p) for p in products if p]
    arch_counts = _counts(archs)
    arch = next(iter(arch_counts), "")
    product = next((p for p in _counts([p for p in products if p]) if parse_product(p) == arch), "")
    platform = first_node_platform(gpu or nodes)
    gpus = [allocatable_count(n, GPU_RESOURCE) for n in gpu]
    nics: dict[str, Obj] = {}
    for n in gpu:
        for resource in allocatable(n):
            if resource.startswith(RDMA_PREFIX) or resource == MLNX_RESOURCE:
                count = allocatable_count(n, resource)
                shown = "unknown" if count is None else f"{count:g}"
                nics.setdefault(resource, {})
                nics[resource][shown] = nics[resource].get(shown, 0) + 1
    defaults = node_defaults(arch, platform) if arch else None
    return {
        "nodes": len(nodes),
        "gpuNodes": len(gpu),
        "ready": sum(_ready(n) for n in gpu),
        "cordoned": sorted(node_name(n) for n in gpu if (n.get("spec") or {}).get("unschedulable")),
        "platform": platform,
        "platforms": _counts([platform_of(n) for n in gpu or nodes]),
        "gpuArchitecture": arch,
        "gpuProduct": product,
        "architectures": arch_counts,
        "gpusPerNode": _counts(["unknown" if g is None else f"{g:g}" for g in gpus]),
        "defaults": (
            {"gpusPerNode": defaults.gpus_per_node, "mlnxPerNode": defaults.mlnx_per_node}
            if defaults
            else None
        ),
        "nicResources": nics,
        "topology": topology_doc(topology_key(platform, gpu, given_key), gpu),
        "certifications": [
            {"name": meta_of(c).get("name"), "phase": phase_of(c)} for c in certifications
        ],
    }


def _spread(counts: Mapping[str, int], unit: str = "") -> str:
    return ", ".join(f"{value}{unit} on {n} node(s)" for value, n in counts.items()) or "none"


def cluster_lines(doc: Mapping[str, Any], namespace: str) -> list[str]:
    cordoned = doc["cordoned"]
    nodes = f"{doc['nodes']} ({doc['gpuNodes']} with GPUs, {doc['ready']} of them Ready"
    nodes += f", {len(cordoned)} cordoned: {', '.join(cordoned)})" if cordoned else ")"
    platform = doc["platform"]
    if len(doc["platforms"]) > 1:
        platform += f" (the first node's; seen: {_spread(doc['platforms'])})"
    gpu = doc["gpuArchitecture"] or "unknown"
    if doc["gpuProduct"]:
        gpu += f" ({doc['gpuProduct']})"
    if len(doc["architectures"]) > 1:
        gpu += f"; the majority of: {_spread(doc['architectures'])}"
    lines = [
        f"Nodes:          {nodes}",
        f"Platform:       {platform}",
        f"GPU:            {gpu}",
        f"GPUs per node:  {_spread(doc['gpusPerNode'])} (allocatable {GPU_RESOURCE})",
    ]
    if doc["defaults"]:
        d = doc["defaults"]
        lines.append(
            f"Defaults:       gpusPerNode {d['gpusPerNode']}, mlnxPerNode {d['mlnxPerNode']} "
            f"({doc['gpuArchitecture']} on {doc['platform']})"
        )
    nics = doc["nicResources"]
    shown = "; ".join(f"{r}: {_spread(c)}" for r, c in sorted(nics.items())) or "none"
    lines.append(f"NIC resources:  {shown}")
    topology = doc["topology"]
    if topology:
        domains = topology["domains"]
        listed = ", ".join(f"{d} ({n})" for d, n in list(domains.items())[:SHOWN_DOMAINS])
        more = len(domains) - SHOWN_DOMAINS
        listed += f", {more} more" if more > 0 else ""
        unlabelled = topology["unlabelled"]
        listed += f"; {unlabelled} node(s) without it" if unlabelled else ""
        lines.append(f"Topology:       {topology['key']}: {len(domains)} domain(s): {listed}")
    certs = doc["certifications"]
    listed = ", ".join(f"{c['name']} ({c['phase']})" for c in certs) or "none"
    lines.append(f"Certifications: {listed} (namespace {namespace})")
    return lines


def cluster_info(
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
    output: OutputOpt = Output.TABLE,
    topology: Annotated[
        str | None,
        typer.Option(
            "--topology-key",
            metavar="LABEL",
            help="Group the nodes by this label (default: the platform's own, else "
            "nvidia.com/gpu.clique).",
        ),
    ] = None,
) -> None:
    """Print what a certification would find on the cluster.

    Nodes (ready, cordoned), the GPU product and architecture (the majority's), the platform,
    GPUs per node, NIC resources, topology domains and the namespace's Certifications."""
    ns = namespace or DEFAULT_NAMESPACE
    session = connect(kubeconfig, context)
    nodes = session.call("list nodes", lambda c: c.nodes())
    certs = session.call(f"list Certifications in {ns}", lambda c: c.certifications(ns))
    doc = cluster_doc(nodes, certs, topology)
    if output is Output.JSON:
        print_json({"namespace": ns, **doc})
    else:
        typer.echo("\n".join(cluster_lines(doc, ns)))
