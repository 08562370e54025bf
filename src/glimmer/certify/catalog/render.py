"""Rendering a Certification, a WorkloadRun or one catalog entry into the Kubernetes objects a
cluster would receive: each category's dependencies (TrainingRuntime, ConfigMaps, claims...) and
its Kubeflow ``TrainJob``.

Offline, like ``nvcrectl certification render``: the platform comes from a flag (on-prem when
none), the GPU architecture from a flag or the target's ``nvidia.com/gpu.product`` selector, and
each category runs one Job of ``nodesPerJob`` nodes (1 when unset).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from glimmer.api.certify.certification import Certification
from glimmer.api.certify.options import CategoryOptions, TestScale
from glimmer.certify.catalog.build import BuildConfig, build_workflow_spec
from glimmer.certify.catalog.entries import Entry, get_entry
from glimmer.certify.catalog.gpu import (
    MNNVL_BY_DEFAULT,
    PRODUCT_LABEL,
    architectures,
    node_defaults,
    parse_product,
)
from glimmer.certify.catalog.naming import (
    job_name,
    job_scoped_suffix,
    workflow_name,
    workload_name,
)
from glimmer.certify.catalog.scope import rename_job_scoped
from glimmer.certify.platform.errors import PlatformError, owned_by
from glimmer.certify.platform.labels import label_key, label_path
from glimmer.certify.platform.overrides import Applied
from glimmer.certify.platform.transforms import (
    ResolvedWorkflowTransforms,
    apply_resolved_workflow_transforms,
)
from glimmer.certify.platform.vocab import (
    APPLIED_OVERRIDES_ANNOTATION,
    CATEGORY_DOMAIN_LABEL,
    CATEGORY_VARIANT_LABEL,
    CERTIFICATION_LABEL,
    CONTROLLER_PATCH_MANAGER,
    DETECTED_GPU_ANNOTATION,
    DETECTED_PLATFORM_ANNOTATION,
    JOB_LABEL,
    MANAGED_BY,
    MANAGED_BY_KEY,
    NODE,
    TRAIN_JOB,
    TRAINER_API_VERSION,
    WORKFLOW_LABEL,
    validate_flag,
)
from glimmer.certify.platform.walk import get_path

Obj = dict[str, Any]
DEFAULT_PLATFORM = "onprem"


@dataclass(frozen=True)
class Context:
    """Where a render happens: platform and GPU architecture."""

    platform: str
    gpu_architecture: str


def wire(model: BaseModel | None) -> Any:
    """A model as plain wire data (camelCase, unset and null fields left out)."""
    if model is None:
        return None
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def resolve_arch(flag: str, node_selector: Mapping[str, str] | None) -> str:
    """The GPU architecture: the flag (a name or a product label) wins over the target's
    ``nvidia.com/gpu.product`` selector; "" when neither says."""
    raw = flag or (node_selector or {}).get(PRODUCT_LABEL, "")
    if not raw:
        return ""
    arch = raw if raw in architectures() else parse_product(raw)
    if arch not in architectures():
        raise PlatformError(
            f"unknown GPU architecture {raw!r}: one of {', '.join(architectures())}, or a "
            f"{PRODUCT_LABEL} value such as NVIDIA-H100-80GB-HBM3"
        )
    return arch


def context(platform: str, gpu: str, node_selector: Mapping[str, str] | None) -> Context:
    """The render context; the GPU architecture is required for catalog categories."""
    validate_flag(platform)
    arch = resolve_arch(gpu, node_selector)
    return Context(platform or DEFAULT_PLATFORM, arch)


def _labels(extra: Mapping[str, str]) -> Obj:
    return {MANAGED_BY_KEY: MANAGED_BY, **extra}


def _with_labels(obj: Any, labels: Mapping[str, str], namespace: str | None) -> Any:
    out = copy.deepcopy(obj)
    if not isinstance(out, dict):
        return out
    out.pop("when", None)
    meta = out.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), **labels}
    if namespace and not str(out.get("kind", "")).startswith("Cluster"):
        meta.setdefault("namespace", namespace)
    return out


def _controller_patch(job: str, pull_secrets: Sequence[Obj]) -> Obj:
    # The controller's own patch: the job label on the worker pods (so node events map back to
    # the Job) and the pull secrets, which never go into the runtime itself.
    pod: Obj = {"metadata": {"labels": {JOB_LABEL: job}}}
    if pull_secrets:
        pod["spec"] = {"imagePullSecrets": [dict(s) for s in pull_secrets]}
    return {
        "manager": CONTROLLER_PATCH_MANAGER,
        "trainingRuntimeSpec": {
            "template": {
                "spec": {
                    "replicatedJobs": [{"name": NODE, "template": {"spec": {"template": pod}}}]
                }
            }
        },
    }


def finish(
    spec: Mapping[str, Any],
    workflow: str,
    namespace: str | None,
    owner_labels: Mapping[str, str],
    ctx: Context,
    applied: Sequence[Applied],
    pull_secrets: Sequence[Obj] = (),
) -> list[Obj]:
    """The objects of one Workflow's single Job: job-scoped dependencies renamed, then the
    TrainJob with the resolved workload labels and the render's provenance."""
    job = job_name(workflow)
    gs = spec.get("gangScheduler")
    deps, job_spec = rename_job_scoped(
        spec.get("dependencies") or [],
        get_path(spec, "jobTemplate", "spec") or {},
        job_scoped_suffix(workflow),
        gs,
    )
    tracking = {**owner_labels, WORKFLOW_LABEL: workflow}
    objects = [_with_labels(d, _labels(tracking), namespace) for d in deps]
    train_job: Obj = copy.deepcopy(get_path(job_spec, "workload", "trainJob") or {})
    train_job.setdefault("runtimePatches", []).append(_controller_patch(job, pull_secrets))
    metadata: Obj = {
        "name": workload_name(job),
        "labels": {
            **(get_path(job_spec, "workloadMetadata", "labels") or {}),
            **_labels({JOB_LABEL: job}),
        },
        "annotations": {
            DETECTED_PLATFORM_ANNOTATION: ctx.platform,
            DETECTED_GPU_ANNOTATION: ctx.gpu_architecture or "unknown",
            APPLIED_OVERRIDES_ANNOTATION: json.dumps(
                [f"{a.when}: {a.patches}" for a in applied if not a.no_op]
            ),
        },
    }
    if namespace:
        metadata["namespace"] = namespace
    objects.append(
        {
            "apiVersion": TRAINER_API_VERSION,
            "kind": TRAIN_JOB,
            "metadata": metadata,
            "spec": train_job,
        }
    )
    return objects


def build_config(
    entry: Entry, ctx: Context, options: CategoryOptions, target: Mapping[str, Any] | None
) -> BuildConfig:
    """The resolved build settings of one category (GPU defaults overridden by options)."""
    if not ctx.gpu_architecture:
        raise PlatformError(
            f"cannot determine the GPU architecture for {entry.ref}: pass --gpu or set "
            f"{PRODUCT_LABEL} in spec.target.nodeSelector"
        )
    defaults = node_defaults(ctx.gpu_architecture, ctx.platform)
    intra_node = options.test_scale == TestScale.INTRA_NODE
    return BuildConfig(
        platform=ctx.platform,
        gpu_architecture=ctx.gpu_architecture,
        nodes_per_job=1 if entry.per_node or intra_node else (options.nodes_per_job or 1),
        gpus_per_node=defaults.gpus_per_node
        if options.gpus_per_node is None
        else options.gpus_per_node,
        mlnx_per_node=defaults.mlnx_per_node
        if options.mlnx_per_node is None
        else options.mlnx_per_node,
        enable_mnnvl=(
            ctx.gpu_architecture in MNNVL_BY_DEFAULT
            if options.enable_mnnvl is None
            else options.enable_mnnvl
        ),
        options=options,
        target=target,
    )


def _blame_category(e: PlatformError, cert: Certification, index: int) -> PlatformError:
    """An error rendering category ``index``, blamed on the Certification's field: the workload
    label the category (or the spec) sets, else the category. A field the error names is a path
    of the rendered Workflow, so it moves into the message."""
    key = label_key(e)
    category = cert.spec.categories[index].options
    for owner, options in ((f"spec.categories[{index}].options", category), ("spec", cert.spec)):
        md = options.workload_metadata if options else None
        if key is not None and md and md.labels and key in md.labels:
            owned_by(e, label_path(f"{owner}.workloadMetadata.labels", key))
            return e
    owned_by(e, f"spec.categories[{index}]")
    return e


def render_certification(cert: Certification, platform: str = "", gpu: str = "") -> list[Obj]:
    """Every category's objects, in category order."""
    spec = cert.spec
    ctx = context(platform, gpu, spec.target.node_selector)
    gs = wire(spec.gang_scheduler)
    objects: list[Obj] = []
    for index, category in enumerate(spec.categories):
        try:
            entry = get_entry(category.domain, category.variant)
            options = spec.options_for(index)
            cfg = build_config(entry, ctx, options, wire(spec.target))
            built, applied = build_workflow_spec(entry, cfg)
            labels = (
                options.workload_metadata.labels if options.workload_metadata else None
            ) or None
            resolved = apply_resolved_workflow_transforms(
                built,
                ResolvedWorkflowTransforms(
                    gang_scheduler=gs,
                    image=options.image or "",
                    env=[wire(v) for v in options.env or []],
                    workload_labels=labels,
                ),
            )
        except PlatformError as e:
            raise _blame_category(e, cert, index) from None
        workflow = workflow_name(cert.name, category.domain, category.variant, category.options)
        owner = {
            CERTIFICATION_LABEL: cert.name,
            CATEGORY_DOMAIN_LABEL: category.domain,
            CATEGORY_VARIANT_LABEL: category.variant,
        }
        secrets = [wire(s) for s in options.image_pull_secrets or []]
        objects += finish(resolved, workflow, cert.metadata.namespace, owner, ctx, applied, secrets)
    return objects


def render_entry(
    domain: str, variant: str, platform: str = "", gpu: str = "", name: str = "render"
) -> list[Obj]:
    """One catalog entry with default options, as a Certification named ``name`` would render it."""
    entry = get_entry(domain, variant)
    ctx = context(platform, gpu, None)
    options = CategoryOptions()
    built, applied = build_workflow_spec(entry, build_config(entry, ctx, options, None))
    resolved = apply_resolved_workflow_transforms(built, ResolvedWorkflowTransforms())
    owner = {CATEGORY_DOMAIN_LABEL: domain, CATEGORY_VARIANT_LABEL: variant}
    return finish(resolved, workflow_name(name, domain, variant, None), None, owner, ctx, applied)
