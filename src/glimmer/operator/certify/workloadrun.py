"""The WorkloadRun controller (specs/certify.md §3.5): one Workflow of the run's name, built by
the catalog's WorkloadRun renderer, and the Workflow's state mirrored back.

* terminal → nothing; a Workflow recorded → mirror it: detection and node-result refs,
  ``ValidationFailed`` first (reason ``ThresholdViolation``), then ``Succeeded/
  WorkflowSucceeded`` or ``Failed`` (``WorkflowValidationFailed`` when the Workflow failed its
  thresholds, else ``WorkflowFailed``); a Workflow gone, confirmed by a live read →
  ``Failed/WorkflowDeleted``;
* otherwise build: the platform and GPU architecture from the GPU nodes the target selects
  (best effort: none → the unknown row, 4 GPUs, no NICs), then
  :func:`glimmer.certify.catalog.workloadrun.build_workload_run_spec`; a build error is
  deterministic (the spec is immutable) → ``Failed/BuildFailed``, never retried;
* the name: a Workflow of the run's name that this run controls is adopted; one being deleted,
  or one left by a deleted predecessor WorkloadRun of the same name, is waited for; any other
  → ``Failed/WorkflowNameCollision``.

The trio's False members carry reason ``Superseded`` (§1.1).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from glimmer.api.certify.workloadrun import WorkloadRun
from glimmer.backends.kubernetes.certify.nodes import node_info
from glimmer.backends.kubernetes.certify.resources import WORKFLOWS, WORKLOAD_RUNS
from glimmer.backends.kubernetes.errors import AlreadyExists
from glimmer.certify.catalog.gpu import node_defaults
from glimmer.certify.catalog.render import Context, resolve_arch
from glimmer.certify.catalog.workloadrun import build_workload_run_spec
from glimmer.certify.discovery import target_spec
from glimmer.certify.platform.detect import DEFAULT_PLATFORM, first_node_platform
from glimmer.certify.platform.errors import PlatformError
from glimmer.certify.platform.vocab import MANAGED_BY, MANAGED_BY_KEY, WORKLOAD_RUN_LABEL
from glimmer.certify.target import majority_arch, select
from glimmer.operator.certify.certification_build import (
    CERTIFY_API_VERSION,
    controlled_by,
    controller_ref,
    gpu_nodes,
)
from glimmer.operator.certify.certification_conditions import (
    FAILED,
    IN_PROGRESS,
    SUCCEEDED,
    VALIDATION_FAILED,
    find,
    is_true,
    set_condition,
    set_exclusive,
    terminal,
)
from glimmer.operator.certify.workflow_cluster import Cluster, Obj, Rejected, meta

SUPERSEDED = "Superseded"


class WorkloadRunController:
    """Reconciles WorkloadRuns through ``cluster``; ``poll`` is the mirror's requeue (15 s)."""

    def __init__(self, cluster: Cluster, now: Callable[[], datetime], poll: float = 15.0) -> None:
        self.cluster = cluster
        self.now = now
        self.poll = poll

    def reconcile(self, namespace: str, name: str) -> float | None:
        body = self.cluster.get(WORKLOAD_RUNS, name, namespace)
        if body is None or meta(body).get("deletionTimestamp"):
            return None  # the Workflow is owned: the garbage collector takes it
        status: Obj = dict(body.get("status") or {})
        if terminal(status.get("conditions")):
            return None
        if status.get("workflowRef"):
            return self._mirror(body, status)
        return self._create(body, status)

    # -- build and create ---------------------------------------------------------------------

    def _create(self, body: Obj, status: Obj) -> float | None:
        namespace = str(meta(body).get("namespace") or "default")
        name = str(meta(body)["name"])
        try:
            run = WorkloadRun.model_validate(body)
        except ValueError as e:
            self._write(body, status, FAILED, "BuildFailed", str(e).splitlines()[0])
            return None
        ctx = self._context(run, body)
        try:
            spec, _ = build_workload_run_spec(run, ctx)
        except PlatformError as e:
            self._write(body, status, FAILED, "BuildFailed", str(e))
            return None
        workflow = {
            "apiVersion": CERTIFY_API_VERSION,
            "kind": "Workflow",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": {MANAGED_BY_KEY: MANAGED_BY, WORKLOAD_RUN_LABEL: name},
                "ownerReferences": [controller_ref(body)],
            },
            "spec": spec,
        }
        try:
            self.cluster.create(WORKFLOWS, workflow, namespace)
        except AlreadyExists:
            adopt, wait = self._taken(body, status, namespace, name)
            if not adopt:
                return wait
        except Rejected as e:
            self._write(body, status, FAILED, "BuildFailed", f"Workflow {name} rejected: {e}")
            return None
        defaults = node_defaults(ctx.gpu_architecture, ctx.platform)
        gpus = (
            run.spec.gpus_per_node if run.spec.gpus_per_node is not None else defaults.gpus_per_node
        )
        status.update(
            workflowRef={"name": name, "namespace": namespace},
            detectedPlatform=ctx.platform,
            detectedGPUArchitecture=ctx.gpu_architecture or "unknown",
            resolvedGpusPerNode=gpus,
        )
        self._write(body, status, IN_PROGRESS, "WorkflowCreated", f"Workflow {name} created")
        return self.poll

    def _taken(
        self, body: Obj, status: Obj, namespace: str, name: str
    ) -> tuple[bool, float | None]:
        """A Workflow of this name exists: adopt it (True), or wait the seconds given, or fail
        (False, None)."""
        found = self.cluster.get(WORKFLOWS, name, namespace)
        if found is None or meta(found).get("deletionTimestamp"):
            return False, self.poll
        uid = str(meta(body).get("uid") or "")
        if controlled_by(found, uid):
            return True, None
        refs = meta(found).get("ownerReferences") or ()
        if any(
            r.get("controller") and r.get("kind") == "WorkloadRun" and r.get("name") == name
            for r in refs
        ):
            return False, self.poll  # a deleted predecessor's: the garbage collector frees it
        self._write(
            body,
            status,
            FAILED,
            "WorkflowNameCollision",
            f"Workflow {namespace}/{name} exists and is not controlled by this WorkloadRun",
        )
        return False, None

    def _context(self, run: WorkloadRun, body: Obj) -> Context:
        """Platform and GPU architecture from the GPU nodes the target selects (best effort)."""
        target = (body.get("spec") or {}).get("target") or {
            "nodeSelector": {"nvidia.com/gpu.present": "true"}
        }
        objects = gpu_nodes(self.cluster.nodes())
        chosen = {n.name for n in select([node_info(o) for o in objects], target_spec(target))}
        nodes = [o for o in objects if str(meta(o).get("name")) in chosen]
        if not nodes:
            selector = run.spec.target.node_selector if run.spec.target else None
            try:
                return Context(DEFAULT_PLATFORM, resolve_arch("", selector))
            except PlatformError:
                return Context(DEFAULT_PLATFORM, "")
        arch = majority_arch([node_info(n) for n in nodes])
        return Context(first_node_platform(nodes), "" if arch == "unknown" else arch)

    # -- mirror -------------------------------------------------------------------------------

    def _mirror(self, body: Obj, status: Obj) -> float | None:
        ref = status["workflowRef"]
        wf = self.cluster.get(WORKFLOWS, str(ref["name"]), ref.get("namespace"))
        if wf is None:
            self._write(
                body, status, FAILED, "WorkflowDeleted", f"Workflow {ref['name']} was deleted"
            )
            return None
        wstatus = wf.get("status") or {}
        orch = wstatus.get("orchestration") or {}
        for mine, theirs in (
            ("detectedPlatform", orch.get("detectedPlatform")),
            ("detectedGPUArchitecture", orch.get("detectedGPUArchitecture")),
            ("succeededNodesRef", wstatus.get("succeededNodesRef")),
            ("failedNodesRef", wstatus.get("failedNodesRef")),
        ):
            if theirs:
                status[mine] = theirs
        conditions = wstatus.get("conditions")
        invalid = find(conditions, VALIDATION_FAILED)
        if invalid is not None:
            status["conditions"] = set_condition(
                status.get("conditions"),
                VALIDATION_FAILED,
                invalid.get("status") == "True",
                "ThresholdViolation" if invalid.get("status") == "True" else "ThresholdsPassed",
                str(invalid.get("message") or ""),
                self.now(),
            )
        if is_true(conditions, SUCCEEDED):
            self._write(
                body, status, SUCCEEDED, "WorkflowSucceeded", f"Workflow {ref['name']} succeeded"
            )
            return None
        if is_true(conditions, FAILED):
            failed = find(conditions, FAILED) or {}
            reason = (
                "WorkflowValidationFailed"
                if failed.get("reason") == "JobValidationFailed"
                else "WorkflowFailed"
            )
            self._write(body, status, FAILED, reason, str(failed.get("message") or "failed"))
            return None
        self._write(body, status, IN_PROGRESS, "WorkflowRunning", f"Workflow {ref['name']} running")
        return self.poll

    def _write(self, body: Obj, status: Obj, kind: str, reason: str, message: str) -> None:
        conditions, moved = set_exclusive(
            status.get("conditions"), kind, reason, message, self.now(), superseded=SUPERSEDED
        )
        new = {**status, "conditions": conditions}
        if new == (body.get("status") or {}):
            return
        self.cluster.write_status(WORKLOAD_RUNS, {**body, "status": new})
        if moved is not None and moved.old != moved.new:
            self.cluster.event(body, reason, message, warning=moved.warning, at=self.now())
