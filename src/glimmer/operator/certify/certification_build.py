"""One category's Workflow, as the Certification controller creates it (specs/certify.md §3.1
``createWorkflowForCategory``), in the seed's order:

1. the target's nodes (:func:`glimmer.certify.discovery.discover_for_category`: the core's own
   selection, GPU nodes only, so the cluster and the simulator certify the same nodes); none →
   :class:`NoNodes` (the caller waits up to five minutes for them);
2. the platform from the first node, the GPU architecture by majority vote (the target's
   ``nvidia.com/gpu.product`` selector when no node is labelled);
3. the options (global ⊕ category), GPU defaults, MNNVL default — :func:`render.build_config`;
4. nodes whose allocatable GPUs are positive but under ``gpusPerNode`` dropped;
5. ``nodesPerJob``: unset → the largest count the entry accepts; set → at most the nodes there
   are, then the same search;
6–8. the entry rendered with the platform's overrides (:func:`build.build_workflow_spec`);
9. the post-resolve transforms (gang scheduler, image, env, workload labels; validated);
10. the Workflow object: labels, the requested-test-scale annotation, the resolved category
    (annotation ``certify.glimmer.ai/category``, so a Workflow is self-contained), and the
    Certification as its controlling owner.

Pure: the caller hands in the Certification and the Node objects.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from glimmer.api.certify.certification import Certification
from glimmer.api.certify.options import TestScale
from glimmer.certify.catalog.build import build_workflow_spec, max_valid_nodes
from glimmer.certify.catalog.entries import get_entry
from glimmer.certify.catalog.naming import workflow_name
from glimmer.certify.catalog.render import Context, build_config, wire
from glimmer.certify.discovery import (
    WAITING_FOR_NODES,
    ArchitectureUnknown,
    DiscoveryError,
    UnknownNodeNames,
    capacity_filter,
    discover_for_category,
)
from glimmer.certify.platform.detect import GPU_PRESENT_LABEL, node_name
from glimmer.certify.platform.errors import PlatformError
from glimmer.certify.platform.transforms import (
    ResolvedWorkflowTransforms,
    apply_resolved_workflow_transforms,
)
from glimmer.certify.platform.vocab import (
    CATEGORY_DOMAIN_LABEL,
    CATEGORY_VARIANT_LABEL,
    CERTIFICATION_LABEL,
    GROUP,
    MANAGED_BY,
    MANAGED_BY_KEY,
)
from glimmer.certify.spec import CertSpec, from_certification
from glimmer.errors import InputError

Obj = dict[str, Any]

CATEGORY_ANNOTATION = f"{GROUP}/category"
TEST_SCALE_ANNOTATION = f"{GROUP}/requested-test-scale"
CERTIFY_API_VERSION = f"{GROUP}/v1alpha1"


class BuildRefused(Exception):
    """The category cannot be built: the condition reason and message it fails with."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class NoNodes(BuildRefused):
    """No node matches the target (yet): the Certification waits for some (§3.1 step 6)."""


def gpu_nodes(nodes: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The Nodes GPU feature discovery marks as having GPUs, by name."""
    kept = [n for n in nodes if _labels(n).get(GPU_PRESENT_LABEL) == "true"]
    return sorted(kept, key=node_name)


def _labels(node: Mapping[str, Any]) -> Mapping[str, str]:
    found: Mapping[str, str] = (node.get("metadata") or {}).get("labels") or {}
    return found


def parse_certification(body: Mapping[str, Any]) -> Certification:
    """The Certification object as the model; every category must be in the catalog."""
    for i, c in enumerate(((body.get("spec") or {}).get("categories")) or ()):
        try:
            get_entry(str(c.get("domain", "")), str(c.get("variant", "")))
        except InputError as e:
            raise BuildRefused("CategoryNotFound", f"spec.categories[{i}]: {e.message}") from None
    try:
        return Certification.model_validate(dict(body))
    except ValueError as e:
        raise BuildRefused("InvalidSpec", str(e).splitlines()[0]) from None


def cert_spec(cert: Certification) -> CertSpec:
    try:
        return from_certification(cert)
    except InputError as e:
        raise BuildRefused("CategoryNotFound", e.message) from None


def category_doc(cert: Certification, index: int) -> Obj:
    """The resolved category a Workflow runs: what the Workflow controller rebuilds the
    core's Category from, without the Certification."""
    category = cert.spec.categories[index]
    return {
        "certification": cert.name,
        "domain": category.domain,
        "variant": category.variant,
        "options": wire(cert.spec.options_for(index)) or {},
        "target": wire(cert.spec.target) or {},
    }


def _nodes_per_job(requested: int | None, available: int, fit: int) -> int:
    if requested is None:
        return fit
    return min(requested, available, fit) if fit else 0


def build_workflow(
    body: Mapping[str, Any], cert: Certification, index: int, nodes: Sequence[Mapping[str, Any]]
) -> Obj:
    """The Workflow object of category ``index``; :class:`BuildRefused` when it cannot be."""
    spec = cert.spec
    category = spec.categories[index]
    ref = category.ref
    cert_spec(cert)
    try:
        found = discover_for_category(nodes, wire(spec.target))
    except ArchitectureUnknown as e:
        raise BuildRefused("WorkflowValidationFailed", f"{ref}: {e.message}") from None
    except UnknownNodeNames as e:
        raise BuildRefused(e.reason, f"{ref}: {e.message}") from None
    except DiscoveryError as e:
        raise NoNodes(WAITING_FOR_NODES, e.message) from None
    platform, arch = found.platform, found.arch
    entry = get_entry(category.domain, category.variant)
    options = spec.options_for(index)
    try:
        cfg = build_config(entry, Context(platform, arch), options, wire(spec.target))
        able = capacity_filter(found.nodes, cfg.gpus_per_node).nodes
        single = entry.per_node or options.test_scale == TestScale.INTRA_NODE
        if not single:
            fit = max_valid_nodes(entry, len(able), cfg.gpus_per_node, arch)
            npj = _nodes_per_job(options.nodes_per_job, len(able), fit)
            if npj < 1:
                raise BuildRefused(
                    "WorkflowValidationFailed",
                    f"{ref}: no valid nodesPerJob among {len(able)} node(s) of "
                    f"{cfg.gpus_per_node} GPUs",
                )
            cfg = dataclasses.replace(cfg, nodes_per_job=npj)
        built, _ = build_workflow_spec(entry, cfg)
        labels = (options.workload_metadata.labels if options.workload_metadata else None) or None
        resolved = apply_resolved_workflow_transforms(
            built,
            ResolvedWorkflowTransforms(
                gang_scheduler=wire(spec.gang_scheduler),
                image=options.image or "",
                env=[wire(v) for v in options.env or []],
                workload_labels=labels,
            ),
        )
    except (PlatformError, DiscoveryError) as e:
        raise BuildRefused("WorkflowValidationFailed", f"{ref}: {e.message}") from None
    meta = body.get("metadata") or {}
    annotations = {CATEGORY_ANNOTATION: json.dumps(category_doc(cert, index), sort_keys=True)}
    if options.test_scale is not None:
        annotations[TEST_SCALE_ANNOTATION] = str(options.test_scale)
    return {
        "apiVersion": CERTIFY_API_VERSION,
        "kind": "Workflow",
        "metadata": {
            "name": workflow_name(cert.name, category.domain, category.variant, category.options),
            "namespace": meta.get("namespace") or "default",
            "labels": {
                MANAGED_BY_KEY: MANAGED_BY,
                CERTIFICATION_LABEL: cert.name,
                CATEGORY_DOMAIN_LABEL: category.domain,
                CATEGORY_VARIANT_LABEL: category.variant,
            },
            "annotations": annotations,
            "ownerReferences": [controller_ref(body)],
        },
        "spec": resolved,
    }


def controller_ref(owner: Mapping[str, Any]) -> Obj:
    """A controlling owner reference to ``owner`` (deleting it deletes what it owns)."""
    meta = owner.get("metadata") or {}
    return {
        "apiVersion": str(owner.get("apiVersion") or CERTIFY_API_VERSION),
        "kind": str(owner.get("kind") or ""),
        "name": str(meta.get("name") or ""),
        "uid": str(meta.get("uid") or ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controlled_by(obj: Mapping[str, Any] | None, owner_uid: str) -> bool:
    """Whether ``owner_uid`` is ``obj``'s controlling owner."""
    refs = ((obj or {}).get("metadata") or {}).get("ownerReferences") or ()
    return any(r.get("controller") and r.get("uid") == owner_uid for r in refs)
