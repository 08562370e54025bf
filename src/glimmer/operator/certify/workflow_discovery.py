"""What a Workflow runs on and what it runs (specs/certify.md §3.2 discoverAndPartition), decided
once, on its first reconcile, and kept (ConfigMap ``group-nodes-<uid8>``): the replayed core
must see the same nodes in every replay, or it would ask for other jobs.

* **Nodes**: the GPU Nodes (``nvidia.com/gpu.present=true``) the orchestration target selects,
  by the certification core's own selection (labels, expressions, names, taints; cordoned nodes
  only when the target keeps them), every node on one platform (else
  ``HeterogeneousPlatform``), the majority GPU architecture (others excluded and said so),
  then nodes whose allocatable GPUs are positive but under what the rendered workload asks per
  node (the largest ``nvidia.com/gpu`` under any requests/limits) excluded.
* **What runs**: a Certification's Workflow carries its resolved category (annotation
  ``certify.glimmer.ai/category``) — the core runs that category; a WorkloadRun's Workflow
  carries none — its groups of ``trainer.numNodes`` run its workload as is, once per
  iteration.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from glimmer.api.certify.certification import Certification
from glimmer.backends.kubernetes.certify.nodes import node_info
from glimmer.certify.platform.detect import (
    GPU_RESOURCE,
    HeterogeneousPlatform,
    agreed_platform,
    allocatable_count,
    node_name,
)
from glimmer.certify.run import Targeted, target_nodes
from glimmer.certify.spec import (
    Category,
    CertSpec,
    NodeRequirement,
    TaintRequirement,
    from_certification,
)
from glimmer.errors import InputError
from glimmer.operator.certify.certification_build import (
    CATEGORY_ANNOTATION,
    CERTIFY_API_VERSION,
    gpu_nodes,
)
from glimmer.operator.certify.workflow_cluster import meta

Obj = dict[str, Any]


class Refused(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True)
class Discovered:
    target: Targeted
    platform: str


def target_spec(name: str, target: Mapping[str, Any]) -> CertSpec:
    """The orchestration target as the core's selection reads it."""
    return CertSpec(
        name=name,
        node_selector=dict(target.get("nodeSelector") or {}),
        match_expressions=tuple(
            NodeRequirement(str(r["key"]), str(r["operator"]), tuple(r.get("values") or ()))
            for r in target.get("matchExpressions") or ()
        ),
        node_names=tuple(target.get("nodeNames") or ()),
        taint_selectors=tuple(
            TaintRequirement(str(s["key"]), s.get("value"), s.get("effect"))
            for s in target.get("taintSelectors") or ()
        ),
        include_unschedulable=bool(target.get("includeUnschedulable")),
    )


def category_of(workflow: Mapping[str, Any]) -> Category | None:
    """The core's Category a Certification's Workflow runs (None: a WorkloadRun's)."""
    text = (meta(workflow).get("annotations") or {}).get(CATEGORY_ANNOTATION)
    if not text:
        return None
    doc = json.loads(text)
    cert = Certification.model_validate(
        {
            "apiVersion": CERTIFY_API_VERSION,
            "kind": "Certification",
            "metadata": {"name": doc.get("certification") or meta(workflow).get("name")},
            "spec": {
                "target": doc.get("target") or {},
                "categories": [
                    {
                        "domain": doc["domain"],
                        "variant": doc["variant"],
                        "options": doc.get("options") or {},
                    }
                ],
            },
        }
    )
    return from_certification(cert).categories[0]


def workload_gpus(spec: Mapping[str, Any]) -> int:
    """The most ``nvidia.com/gpu`` any requests/limits map asks for, anywhere in the job
    template or the dependencies (0: none asks)."""
    best = 0

    def walk(value: Any, under_request: bool) -> None:
        nonlocal best
        if isinstance(value, Mapping):
            for k, v in value.items():
                if under_request and k == GPU_RESOURCE:
                    with contextlib.suppress(ValueError):
                        best = max(best, int(float(str(v))))
                walk(v, k in ("requests", "limits"))
        elif isinstance(value, list):
            for v in value:
                walk(v, False)

    walk({"t": spec.get("jobTemplate"), "d": spec.get("dependencies")}, False)
    return best


def discover(
    workflow: Mapping[str, Any], spec: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]]
) -> Discovered:
    """The Workflow's nodes, platform and architecture; :class:`Refused` when none fit."""
    name = str(meta(workflow).get("name") or "")
    target = (spec.get("orchestration") or {}).get("target") or {}
    chosen_spec = target_spec(name, target)
    objects = gpu_nodes(nodes)
    try:
        targeted = target_nodes(name, [node_info(o) for o in objects], chosen_spec)
    except InputError as e:
        raise Refused(
            "NodeDiscoveryError", f"No target nodes found matching orchestration target: {e}"
        ) from None
    kept = {n.name for n in targeted.nodes}
    by_name = {node_name(o): o for o in objects}
    try:
        platform = agreed_platform([by_name[n] for n in sorted(kept)])
    except HeterogeneousPlatform as e:
        raise Refused("HeterogeneousPlatform", e.message) from None
    want = workload_gpus(spec)
    short = [
        (n, allocatable_count(by_name[n.name], GPU_RESOURCE) or 0)
        for n in targeted.nodes
        if want and 0 < (allocatable_count(by_name[n.name], GPU_RESOURCE) or 0) < want
    ]
    if not short:
        return Discovered(targeted, platform)
    left = tuple(n for n in targeted.nodes if n not in {s[0] for s in short})
    if not left:
        best = max(c for _, c in short)
        raise Refused(
            "PartitionError",
            f"No node can supply the {want} nvidia.com/gpu the workload requests per node: "
            f"best available is {best:g}",
        )
    detail = ", ".join(f"{n.name} has {c:g}" for n, c in short)
    note = (
        f"{len(short)} node(s) matched the target but have insufficient GPU capacity, the "
        f"workload requests {want} nvidia.com/gpu per node: {detail}"
    )
    reasons = ". ".join(r for r in (targeted.exclusion_reason, note) if r)
    excluded = (*targeted.excluded, *(n.name for n, _ in short))
    return Discovered(Targeted(targeted.gpu, left, excluded, reasons), platform)
