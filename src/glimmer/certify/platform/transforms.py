"""The post-resolve transforms of a Workflow spec, in one named stage with a pinned order.

1. gang scheduling of the dependencies
2. the trainer image
3. the dependency images
4. the env write
5. workload metadata, resolved and written

Gang scheduling, images and env touch disjoint fields, so only step 5's position matters:
writing workload metadata last makes the resolved catalog-and-override JobSpec the base map,
which makes its precedence unambiguous. The resolved intent is then recorded on
``spec.gangScheduler`` and the result validated, so no caller can forget either.

The steps are called through their modules so that a test can watch the order.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from glimmer.certify.platform import env_write, gang, image, validate_gang
from glimmer.certify.platform.labels import (
    LABELS_PATH,
    insert_consistent_label,
    merge_labels,
    validate_labels,
)
from glimmer.certify.platform.walk import get_path

Obj = dict[str, Any]


@dataclass(frozen=True)
class ResolvedWorkflowTransforms:
    """What the owner (a Certification, global options merged with the category's) resolved."""

    gang_scheduler: Mapping[str, Any] | None = None
    image: str = ""
    env: Sequence[Mapping[str, Any]] = ()
    workload_labels: Mapping[str, str] | None = field(default=None)


def compose_workload_metadata(
    job_spec: Mapping[str, Any], owner_labels: Mapping[str, str] | None, gs: Any
) -> Obj:
    """The job spec with workloadMetadata resolved: the labels already in it, overlaid by the
    owner's, plus the queue label (insert/same/conflict), validated after insertion."""
    out: Obj = copy.deepcopy(dict(job_spec))
    labels = merge_labels(get_path(out, "workloadMetadata", "labels"), owner_labels)
    resolved = gang.resolved_gang_scheduler(gs)
    if resolved is not None:
        labels = insert_consistent_label(labels, resolved["queueLabelKey"], resolved["queue"])
    validate_labels(labels, LABELS_PATH)
    if labels:
        out["workloadMetadata"] = {**(out.get("workloadMetadata") or {}), "labels": labels}
    return out


def _record_intent(spec: Obj, gs: Any) -> None:
    resolved = gang.resolved_gang_scheduler(gs)
    if resolved is None:
        spec.pop("gangScheduler", None)
    else:
        spec["gangScheduler"] = resolved


def apply_resolved_workflow_transforms(
    spec: Mapping[str, Any], t: ResolvedWorkflowTransforms
) -> Obj:
    """The resolved Workflow spec after every post-resolve transform, the persisted gang intent
    and :func:`validate_resolved_job_template`. Call after overrides are resolved."""
    out: Obj = copy.deepcopy(dict(spec))
    deps = gang.apply_gang_scheduler_to_dependencies(
        out.get("dependencies") or [], t.gang_scheduler
    )
    jt = image.apply_image_to_job_template(out.get("jobTemplate") or {}, t.image)
    deps = image.apply_image_to_dependencies(deps, t.image)
    jt = env_write.apply_env_to_job_template(jt, deps, t.env)
    jt["spec"] = compose_workload_metadata(
        jt.get("spec") or {}, t.workload_labels, t.gang_scheduler
    )
    if "dependencies" in out or deps:
        out["dependencies"] = deps
    out["jobTemplate"] = jt
    _record_intent(out, t.gang_scheduler)
    jt["spec"] = validate_gang.validate_resolved_job_template(
        jt["spec"], deps, out.get("gangScheduler")
    )
    return out


def apply_workload_run_scheduling(
    spec: Mapping[str, Any], gs: Mapping[str, Any] | None, md: Mapping[str, Any] | None
) -> Obj:
    """The construction-time half for a WorkloadRun: workload metadata composed as in step 5 and
    the resolved intent recorded. No dependency rewrite: the builders already emitted scheduler
    and queue. Provisional: structural overrides run later and are re-validated then."""
    out: Obj = copy.deepcopy(dict(spec))
    jt = out.setdefault("jobTemplate", {})
    labels = (md or {}).get("labels")
    jt["spec"] = compose_workload_metadata(jt.get("spec") or {}, labels, gs)
    _record_intent(out, gs)
    return out
