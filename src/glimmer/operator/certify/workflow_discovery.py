"""What a Workflow runs on and what it runs (specs/certify.md §3.2 discoverAndPartition), decided
once, on its first reconcile, and kept (ConfigMap ``group-nodes-<uid8>``): the replayed core
must see the same nodes in every replay, or it would ask for other jobs.

* **Nodes** (:mod:`glimmer.certify.discovery`): the GPU Nodes the orchestration target
  selects, by the certification core's own selection (labels, expressions, names, taints;
  cordoned nodes only when the target keeps them), every node on one platform (else
  ``HeterogeneousPlatform``), the majority GPU architecture (others excluded and said so),
  then nodes whose allocatable GPUs are positive but under what the rendered workload asks per
  node excluded.
* **What runs**: a Certification's Workflow carries its resolved category (annotation
  ``certify.glimmer.ai/category``) — the core runs that category; a WorkloadRun's Workflow
  carries none — its groups of ``trainer.numNodes`` run its workload as is, once per
  iteration.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from glimmer.api.certify.certification import Certification
from glimmer.certify.discovery import (
    DiscoveryError,
    discover_for_workflow,
    node_info,
    with_capacity,
    workload_gpus_per_node,
)
from glimmer.certify.platform.detect import HeterogeneousPlatform
from glimmer.certify.run import Targeted
from glimmer.certify.spec import Category, from_certification
from glimmer.operator.certify.certification_build import CATEGORY_ANNOTATION, CERTIFY_API_VERSION
from glimmer.operator.certify.workflow_cluster import meta

Obj = dict[str, Any]


class Refused(Exception):
    """The Workflow fails for good. ``workflow``: the Workflow as last written by the pass that
    refused (it recorded a Job's dependency refs first), so the Failed write is not a 409."""

    def __init__(
        self, reason: str, message: str, workflow: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.workflow = workflow


@dataclass(frozen=True)
class Discovered:
    target: Targeted
    platform: str
    events: tuple[tuple[str, str, str], ...] = ()  # (type, reason, message), Warnings


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


def discover(spec: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]]) -> Discovered:
    """The Workflow's nodes, platform and architecture (:mod:`glimmer.certify.discovery`, the
    rules the simulator's path selects by too); :class:`Refused` when none fit."""
    target = (spec.get("orchestration") or {}).get("target") or {}
    try:
        found = discover_for_workflow(nodes, target)
        want = workload_gpus_per_node(spec.get("jobTemplate"), spec.get("dependencies") or ())
        found = with_capacity(found, want)
    except DiscoveryError as e:
        raise Refused(e.reason, e.message) from None
    except HeterogeneousPlatform as e:
        raise Refused("HeterogeneousPlatform", e.message) from None
    targeted = Targeted(
        found.arch,
        tuple(node_info(n) for n in found.nodes),
        found.excluded_nodes,
        found.exclusion_reason,
    )
    return Discovered(targeted, found.platform, tuple(found.events()))
