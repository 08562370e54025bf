"""The Workflow controller (specs/certify.md §3.2, §3.4): discovery, overrides, dependencies,
then the category's certification core in replay, one Job per core job.

One reconcile reads the Workflow live and:

1. deleting (ADR-053) → its Jobs, then its dependencies in reverse creation order, then its
   volumes, then the finalizer (:mod:`.workflow_finalize`);
2. terminal → nothing (Jobs, dependencies and results stay until the Workflow is deleted: the
   report reads them);
3. first reconcile → discovery (:mod:`.workflow_discovery`), the overrides matched against the
   detected platform and architecture (``OverrideError``), the checkpoint PVC check, the
   gang-scheduling contract re-checked after them (``GangSchedulingConflict``); the nodes kept in
   ConfigMap ``group-nodes-<uid8>`` and the detection in status (``GroupsPartitioned``);
4. the workflow-scoped dependencies ensured in topological order (idempotent);
5. a Job the health check failed (HardwareFailed, still running) → its workload deleted, the
   group held until its pods are gone (:mod:`.workflow_drain`);
6. the core replayed (:mod:`.workflow_run`): Jobs pending → the groups' progress written (a
   diagnosis: its stage, round and the stage's groups, :mod:`.workflow_diagnose`), the next
   reconcile on a Job event or the safety-net poll; a later iteration's first Job waits until
   the earlier iterations' own dependency copies are gone (:mod:`.workflow_iteration_deps`);
   the core done → the node-result ConfigMaps, ``<workflow>-result``, and
   ``Succeeded/JobCompleted`` or ``Failed`` with ``JobHardwareFailed`` /
   ``JobValidationFailed`` / ``IterationsFailed`` (and ``ValidationFailed=True`` when a failed
   Job failed its thresholds).

Terminal failures are written as conditions, never raised; anything else raised (an API error,
a lost race) is retried by the caller from a fresh read.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from glimmer.backends.kubernetes.certify.ledger import JobLedger, JobNameCollision
from glimmer.backends.kubernetes.certify.resources import WORKFLOWS
from glimmer.backends.kubernetes.errors import AlreadyExists
from glimmer.certify.attribution import (
    FAILED_KEY,
    SUCCEEDED_KEY,
    failed_nodes_payload,
    result_configmap_names,
    succeeded_nodes_payload,
    union_failed_nodes,
)
from glimmer.certify.catalog.scope import job_scoped
from glimmer.certify.fabric import fabric_over
from glimmer.certify.job_spec import job_parts
from glimmer.certify.jobs import Job
from glimmer.certify.platform.errors import PlatformError
from glimmer.certify.platform.overrides import apply_overrides
from glimmer.certify.platform.validate_gang import validate_resolved_job_template
from glimmer.certify.platform.vocab import MANAGED_BY, MANAGED_BY_KEY, WORKFLOW_LABEL
from glimmer.certify.platform.walk import get_path
from glimmer.certify.platform.when import MatchContext
from glimmer.certify.replay import JobsPending, ReplaySubstrate
from glimmer.certify.result import (
    HARDWARE,
    WORKLOAD,
    CategoryResult,
    FailedNode,
    category_to_doc,
)
from glimmer.certify.run import Targeted, run_category
from glimmer.errors import InputError
from glimmer.operator.certify import workflow_diagnose
from glimmer.operator.certify.certification_build import controller_ref
from glimmer.operator.certify.certification_conditions import (
    FAILED,
    IN_PROGRESS,
    SUCCEEDED,
    VALIDATION_FAILED,
    is_true,
    set_condition,
    set_exclusive,
    terminal,
)
from glimmer.operator.certify.dependencies import (
    DependencyNameCollision,
    DependencyPending,
    DependencyUnserved,
    ensure,
    planned_refs,
)
from glimmer.operator.certify.workflow_cluster import Cluster, Obj, meta, resource_for
from glimmer.operator.certify.workflow_discovery import Refused, category_of, discover
from glimmer.operator.certify.workflow_drain import HOLD_POLL, HeldLedger, drain_hardware_failed
from glimmer.operator.certify.workflow_finalize import FINALIZER, finalize, finalizers
from glimmer.operator.certify.workflow_iteration_deps import (
    IterationNotDrained,
    clean_earlier,
    for_iteration,
)
from glimmer.operator.certify.workflow_iterations import (
    Progress,
    current_iteration,
    total_iterations,
)
from glimmer.operator.certify.workflow_result import (
    CATEGORY_KEY,
    PLATFORM_KEY,
    TARGET_KEY,
    configmap,
    result_name,
    target_from_text,
    target_text,
)
from glimmer.operator.certify.workflow_run import run_workload
from glimmer.operator.certify.workflow_volumes import stamp_volumes

CONFIGMAPS = resource_for("v1", "ConfigMap")
NODES_KEY = "target.json"
# Seconds between looks while a dependency's own controller readies it (a ComputeDomain's
# channel: the DRA driver makes it in seconds, and no event of ours says when).
READY_POLL = 1.0


def group_nodes_name(uid: str) -> str:
    return f"group-nodes-{uid[:8]}"


class WorkflowController:
    """Reconciles Workflows through ``cluster``; ``now`` is the operator's clock and ``poll``
    the safety-net requeue while Jobs run (a Job event comes sooner)."""

    def __init__(self, cluster: Cluster, now: Callable[[], datetime], poll: float = 15.0) -> None:
        self.cluster = cluster
        self.now = now
        self.poll = poll

    def reconcile(self, namespace: str, name: str) -> float | None:
        wf = self.cluster.get(WORKFLOWS, name, namespace)
        if wf is None:
            return None
        if meta(wf).get("deletionTimestamp"):
            return finalize(self.cluster, wf)
        if FINALIZER not in (meta(wf).get("finalizers") or ()):
            wf = self.cluster.replace(
                WORKFLOWS,
                {**wf, "metadata": {**meta(wf), "finalizers": [*finalizers(wf), FINALIZER]}},
            )
        status: Obj = dict(wf.get("status") or {})
        if terminal(status.get("conditions")):
            return None
        try:
            return self._run(wf, status)
        except Refused as e:
            self._write(dict(e.workflow or wf), status, FAILED, e.reason, e.message)
            return None

    # -- a pass -------------------------------------------------------------------------------

    def _run(self, wf: Obj, status: Obj) -> float | None:
        target, platform = self._discovered(wf, status)
        if target is None:
            return 0.0  # discovery written; the next reconcile runs from the kept nodes
        spec = self._effective(wf, platform, target.gpu)
        try:
            refs = ensure(self.cluster, _workflow_scoped(spec), wf)
        except DependencyNameCollision as e:
            raise Refused("DependencyNameCollision", str(e)) from None
        except DependencyUnserved as e:
            raise Refused("DependencyError", str(e)) from None
        except DependencyPending:
            return min(self.poll, READY_POLL)
        status["dependencyRefs"] = _merge_refs(status.get("dependencyRefs"), refs)
        # §3.2: the volume behind each checkpoint claim stamped as soon as it binds.
        stamped = stamp_volumes(self.cluster, wf, status["dependencyRefs"])
        if stamped is not None:
            status["dependencyRefs"] = stamped
        # The Workflow as last written: recording a job's copies moves its resourceVersion.
        live = [wf]
        runnable = {**wf, "spec": spec}
        # A Job's iteration is the one the core is in when it asks (late-bound: the substrate
        # is built over the ledger, the ledger over this builder).
        spec_for = self._spec_for(
            runnable, status, live, lambda: substrate.iteration, lambda: ledger.jobs()
        )
        ledger = JobLedger(self.cluster.client, runnable, spec_for)
        held = drain_hardware_failed(self.cluster, ledger.jobs(), self.now())
        substrate = ReplaySubstrate(
            list(target.nodes),
            fabric_over(target.nodes),  # the fabric the discovered nodes' labels declare
            HeldLedger(ledger, held),
            f"{meta(wf).get('namespace')}/{meta(wf).get('name')}",
            platform,
            workflow=str(meta(wf).get("name")),
        )
        category = category_of(wf)
        if category is not None:
            # The Workflow's iterations as it runs (an override may have replaced them).
            wanted = int(get_path(spec, "orchestration", "iterations") or 1)
            category = dataclasses.replace(
                category, options=dataclasses.replace(category.options, iterations=wanted)
            )
        progress = Progress(substrate, total_iterations(spec, category))
        # §7.4: a diagnosis's status follows its stages (each one an iteration of the status).
        diagnosing = category is not None and category.options.test_scale == "diagnose"
        try:
            if category is not None:
                result = run_category(substrate, category, list(target.nodes), 0, progress.begin)
            else:
                result = run_workload(
                    substrate, str(meta(wf).get("name")), spec, target.nodes, progress.begin
                )
        except JobsPending as pending:
            wf = live[0]
            started = progress.current > current_iteration(status)
            jobs = ledger.jobs()
            status["orchestration"] = progress.status(status, jobs)
            if diagnosing:
                live_diagnose = workflow_diagnose.running(substrate.asked, jobs)
                status["orchestration"].update(live_diagnose)
            if started:
                # §3.2 handleIterationComplete: the last iteration is done, this one starts.
                message = (
                    f"Iteration {progress.current - 1}/{progress.total} completed, starting next"
                )
                self._write(wf, status, IN_PROGRESS, "IterationCompleted", message)
                self._note(
                    wf, "IterationCompleted", message
                )  # InProgress stays: no event of its own
                return 0.0  # the next pass says what runs
            running = len(pending.submitted)
            message = f"{running} job(s) running, {substrate.finished} finished"
            if progress.total > 1:
                message = f"Iteration {progress.current}/{progress.total}: {message}"
            if diagnosing:
                at = live_diagnose["diagnose"]
                message = (
                    f"Diagnose {at.get('stage', 'starting')}, round {at['round'] + 1}: {message}"
                )
            self._write(wf, status, IN_PROGRESS, "JobsRunning", message)
            if ledger.not_ready:  # a Job waits for its copies' controllers
                return min(self.poll, READY_POLL)
            return min(self.poll, HOLD_POLL) if held else self.poll
        except JobNameCollision as e:
            raise Refused("JobNameCollision", str(e)) from None
        except InputError as e:  # what the nodes declare (a fabric label) the core refuses
            raise Refused("InvalidInput", str(e)) from None
        self._complete(
            live[0], status, spec, target, platform, result, progress, ledger.jobs(), diagnosing
        )
        return None

    def _discovered(self, wf: Obj, status: Obj) -> tuple[Targeted | None, str]:
        """The kept nodes and platform; on the first reconcile, discovery written first."""
        orch = status.get("orchestration") or {}
        uid = str(meta(wf).get("uid") or "")
        namespace = str(meta(wf).get("namespace") or "default")
        kept = self.cluster.get(CONFIGMAPS, group_nodes_name(uid), namespace)
        data = (kept or {}).get("data") or {}
        if NODES_KEY in data:
            # The platform is kept beside the nodes: a crash between this ConfigMap and the
            # status write must not leave a replay without it.
            platform = data.get(PLATFORM_KEY) or orch.get("detectedPlatform") or ""
            return target_from_text(data[NODES_KEY]), str(platform)
        found = discover(wf.get("spec") or {}, self.cluster.nodes())
        spec, applied = self._overridden(wf, found.platform, found.target.gpu)
        self._check(spec)
        record = configmap(
            group_nodes_name(uid),
            namespace,
            {NODES_KEY: target_text(found.target), PLATFORM_KEY: found.platform},
            controller_ref(wf),
            {MANAGED_BY_KEY: MANAGED_BY, WORKFLOW_LABEL: str(meta(wf).get("name"))},
        )
        with contextlib.suppress(AlreadyExists):
            self.cluster.create(CONFIGMAPS, record, namespace)
        status["groupNodesRef"] = {"kind": "ConfigMap", "name": group_nodes_name(uid)}
        status["orchestration"] = {
            **orch,
            "totalNodes": len(found.target.nodes),
            "currentIteration": 1,
            "detectedPlatform": found.platform,
            "detectedGPUArchitecture": found.target.gpu,
            "appliedOverrides": applied,
        }
        if found.target.excluded:
            status["orchestration"]["excludedNodes"] = list(found.target.excluded)
            status["orchestration"]["exclusionReason"] = found.target.exclusion_reason
        for kind, reason, message in found.events:
            self._note(wf, reason, message, warning=kind == "Warning")
        for a in applied:
            if a.get("noOp"):
                self._note(wf, "OverrideNoOp", f"override {a['index']} ({a['when']}) matched "
                           "but produced no changes — check field paths", warning=True)  # fmt: skip
            else:
                self._note(wf, "OverrideApplied", f"override {a['index']}: {a['patches']}")
        self._write(
            wf,
            status,
            IN_PROGRESS,
            "GroupsPartitioned",
            f"Discovered {len(found.target.nodes)} nodes on {found.platform} ({found.target.gpu})",
        )
        return None, found.platform

    # -- the spec as it runs ------------------------------------------------------------------

    def _overridden(self, wf: Obj, platform: str, arch: str) -> tuple[Obj, list[Obj]]:
        spec = dict(wf.get("spec") or {})
        overrides = spec.pop("overrides", None) or []
        ctx = MatchContext(platform, arch)
        try:
            out, applied = apply_overrides(spec, overrides, ctx)
        except PlatformError as e:
            raise Refused("OverrideError", e.message) from None
        return out, [
            {"index": a.index, "when": a.when, "patches": a.patches, "noOp": a.no_op}
            for a in applied
        ]

    def _effective(self, wf: Obj, platform: str, arch: str) -> Obj:
        spec, _ = self._overridden(wf, platform, arch)
        return self._check(spec)

    def _check(self, spec: Obj) -> Obj:
        """The checkpoint PVC among the dependencies, and the gang contract after overrides."""
        template = get_path(spec, "jobTemplate", "spec") or {}
        deps = spec.get("dependencies") or []
        pvc = get_path(template, "checkpoint", "pvcName")
        if pvc and pvc not in {(d.get("metadata") or {}).get("name") for d in deps}:
            raise Refused(
                "CheckpointPVCMissing", f"Checkpoint requires PVC {pvc!r} in dependencies"
            )
        try:
            checked = validate_resolved_job_template(template, deps, spec.get("gangScheduler"))
        except PlatformError as e:
            raise Refused("GangSchedulingConflict", e.message) from None
        return {**spec, "jobTemplate": {**(spec.get("jobTemplate") or {}), "spec": checked}}

    def _spec_for(
        self,
        wf: Obj,
        status: Obj,
        live: list[Obj],
        iteration: Callable[[], int],
        jobs: Callable[[], Mapping[str, Obj]],
    ) -> Callable[[str, Job, tuple[str, ...]], Mapping[str, Any]]:
        """The ledger's Job spec builder: the job's own dependency copies created first, each
        recorded in ``status.dependencyRefs`` (written, ``live[0]`` the Workflow after it)
        BEFORE it is created. Recorded after the pass instead, a kill between the Job's create
        and that write left the copy unrecorded for good: the next replay finds the Job and
        never asks for its spec again, and deletion goes by the refs. (Deletion could instead
        list every dependency kind by this Workflow's identity, but that needs a list grant on
        each kind a catalog may name; a ref to a copy never created is skipped on deletion.)
        A Job of a later iteration is built only once the copies of the earlier ones are gone
        (:mod:`.workflow_iteration_deps`)."""
        name = str(meta(wf).get("name"))
        # Per iteration, this pass: None once its predecessors' copies are gone, else why not.
        cleaned: dict[int, IterationNotDrained | None] = {}

        def spec_for(key: str, job: Job, nodes: tuple[str, ...]) -> Mapping[str, Any]:
            n = iteration()
            if n > 1 and n not in cleaned:
                refs = status.get("dependencyRefs") or []
                try:
                    clean_earlier(self.cluster, live[0], refs, jobs(), n, self.now)
                    cleaned[n] = None
                except IterationNotDrained as e:
                    cleaned[n] = e
            waiting = cleaned.get(n)
            if waiting is not None:
                raise waiting
            parts = job_parts(name, wf["spec"], key, job, nodes)
            old = status.get("dependencyRefs") or []
            planned = planned_refs(parts.dependencies, wf, "job", key)
            merged = _merge_refs(old, for_iteration(planned, n))
            if merged != old:
                status["dependencyRefs"] = merged
                live[0] = self.cluster.write_status(WORKFLOWS, {**live[0], "status": dict(status)})
            try:
                ensure(self.cluster, parts.dependencies, wf, "job", key)
            except DependencyNameCollision as e:
                raise Refused("DependencyNameCollision", str(e), live[0]) from None
            except DependencyUnserved as e:
                raise Refused("DependencyError", str(e), live[0]) from None
            return parts.spec

        return spec_for

    # -- the end ------------------------------------------------------------------------------

    def _complete(
        self,
        wf: Obj,
        status: Obj,
        spec: Obj,
        target: Targeted,
        platform: str,
        result: CategoryResult,
        progress: Progress,
        jobs: Mapping[str, Obj],
        diagnosing: bool,
    ) -> None:
        namespace = str(meta(wf).get("namespace") or "default")
        uid = str(meta(wf).get("uid") or "")
        hardware = [
            FailedNode(str(f["name"]), HARDWARE, str(f.get("message") or ""))
            for j in jobs.values()
            for f in (j.get("status") or {}).get("failedNodes") or ()
            if f.get("reason") == HARDWARE
        ]
        # §7.2: WorkloadFailed names a Job's nodes only when the Job named none itself; a Job
        # the health check failed ends with its workload deleted, which the core reads as a
        # failed run of those very nodes.
        named = {f.name for f in hardware}
        core = [f for f in result.failed_nodes if f.reason != WORKLOAD or f.name not in named]
        failed = union_failed_nodes(core, hardware)
        if hardware:
            # A failed group on a node the health check named failed for that reason (§2.1):
            # its run read the Job's outcome, which says so (the Job controller's verdict line).
            runs = tuple(
                dataclasses.replace(g, failure=HARDWARE)
                if not g.passed and named & set(g.nodes)
                else g
                for g in result.groups
            )
            result = dataclasses.replace(
                result, status=FAILED, failed_nodes=tuple(failed), groups=runs
            )
        bad = {f.name for f in failed}
        healthy = [n.name for n in target.nodes if n.name not in bad]
        failed_cm, succeeded_cm = result_configmap_names(uid)
        owner = controller_ref(wf)
        labels = {MANAGED_BY_KEY: MANAGED_BY, WORKFLOW_LABEL: str(meta(wf).get("name"))}
        for name, key, payload in (
            (failed_cm, FAILED_KEY, failed_nodes_payload(failed)),
            (succeeded_cm, SUCCEEDED_KEY, succeeded_nodes_payload(healthy)),
        ):
            body = configmap(name, namespace, {}, owner, labels)
            body["binaryData"] = {key: base64.b64encode(payload).decode()}
            with contextlib.suppress(AlreadyExists):
                self.cluster.create(CONFIGMAPS, body, namespace)
        doc = {
            CATEGORY_KEY: json.dumps(category_to_doc(result), sort_keys=True),
            TARGET_KEY: target_text(target),
            PLATFORM_KEY: platform,
        }
        with contextlib.suppress(AlreadyExists):
            self.cluster.create(
                CONFIGMAPS,
                configmap(result_name(str(meta(wf).get("name"))), namespace, doc, owner, labels),
                namespace,
            )
        status["failedNodesRef"] = {"kind": "ConfigMap", "name": failed_cm}
        status["succeededNodesRef"] = {"kind": "ConfigMap", "name": succeeded_cm}
        status["orchestration"] = {
            **progress.status(status, jobs, done=True),
            "nodesPerJob": result.nodes_per_job,
            "totalGroups": len(result.groups),
        }
        if diagnosing:
            status["orchestration"].update(
                workflow_diagnose.finished(progress.substrate.asked, jobs)
            )
        if result.isolation is not None:
            status["orchestration"]["diagnose"] = {
                "stage": workflow_diagnose.COMPLETE,
                "round": result.isolation.rounds,
                "healthyNodes": healthy,
                "confirmedFaultyNodes": sorted(bad),
            }
        failed_jobs = [j for j in jobs.values() if is_true(_conds(j), FAILED)]
        thresholds = get_path(spec, "validation", "performance", "thresholds", "thresholds")
        invalid = [j for j in jobs.values() if is_true(_conds(j), VALIDATION_FAILED)]
        conditions = status.get("conditions")
        if invalid:
            conditions = set_condition(
                conditions, VALIDATION_FAILED, True, "JobValidationFailed",
                "One or more Jobs failed performance threshold validation", self.now(),
            )  # fmt: skip
        elif thresholds:
            conditions = set_condition(
                conditions, VALIDATION_FAILED, False, "ThresholdsPassed",
                "Thresholds evaluated and passed", self.now(),
            )  # fmt: skip
        status["conditions"] = conditions
        n = progress.total
        if result.passed:
            message = f"All {n} iterations completed successfully"
            self._write(wf, status, SUCCEEDED, "JobCompleted", message)
            return
        if any(is_true(_conds(j), "HardwareFailed") for j in jobs.values()) or hardware:
            reason = "JobHardwareFailed"
        elif invalid:
            reason = "JobValidationFailed"
        else:
            reason = "IterationsFailed"
        groups = progress.failed_groups(result) or len(failed_jobs)
        message = failed_message(
            result, groups, hardware=reason == "JobHardwareFailed", iterations=n
        )
        self._write(wf, status, FAILED, reason, message)

    # -- status -------------------------------------------------------------------------------

    def _write(self, wf: Obj, status: Obj, kind: str, reason: str, message: str) -> None:
        conditions, moved = set_exclusive(
            status.get("conditions"), kind, reason, message, self.now()
        )
        new = {**status, "conditions": conditions}
        if new == (wf.get("status") or {}):
            return
        self.cluster.write_status(WORKFLOWS, {**wf, "status": new})
        if moved is not None and moved.old != moved.new:
            self.cluster.event(wf, reason, message, warning=moved.warning, at=self.now())

    def _note(self, wf: Obj, reason: str, message: str, *, warning: bool = False) -> None:
        self.cluster.event(wf, reason, message, warning=warning, at=self.now())


def failed_message(
    result: CategoryResult, groups: int, *, hardware: bool, iterations: int = 1
) -> str:
    """The Failed condition's message: what failed — groups (§3.2 setFinalStatus "F groups
    failed across N iterations"), the nodes a diagnosis confirmed faulty (§7.4 step 7's
    "Diagnosis complete: ..."), or the failed nodes when neither says it — then why. A
    diagnosis ends with its screen's groups re-judged, so "0 groups failed" would name nothing
    while it named a node."""
    parts = [f"{groups} groups failed across {iterations} iterations"] if groups else []
    why = result.failure_reason
    if result.isolation is not None and result.isolation.message not in why:
        parts.append(result.isolation.message)
    if not parts and not why and result.failed_nodes:
        parts.append(f"{len({f.name for f in result.failed_nodes})} nodes failed")
    if hardware:
        parts.append("hardware failures occurred on one or more nodes")
    return ": ".join(p for p in ("; ".join(parts), why) if p) or "the category failed"


def _workflow_scoped(spec: Obj) -> list[Obj]:
    """The dependencies created once for the Workflow: those no Job spec names (§3.4)."""
    template = get_path(spec, "jobTemplate", "spec") or {}
    deps = spec.get("dependencies") or []
    copied = set(job_scoped(deps, template))
    return [d for d in deps if (d.get("metadata") or {}).get("name") not in copied]


def _conds(obj: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    found: Sequence[Mapping[str, Any]] = (obj.get("status") or {}).get("conditions") or ()
    return found


def _merge_refs(
    old: Sequence[Mapping[str, Any]] | None, new: Sequence[Mapping[str, Any]]
) -> list[Obj]:
    """Refs in creation order, each once."""
    out = [dict(r) for r in old or ()]
    seen = {(r.get("kind"), r.get("namespace"), r.get("name")) for r in out}
    for r in new:
        key = (r.get("kind"), r.get("namespace"), r.get("name"))
        if key not in seen:
            seen.add(key)
            out.append(dict(r))
    return out
