"""The Certification controller (specs/certify.md §3.1): its categories one after another,
each as a Workflow it owns, every one run even after another failed, and the report.

One reconcile reads the Certification live and takes the first step that applies:

1. deleting → delete the Workflows it controls (each read live, deleted with a UID
   precondition: a same-named Workflow of someone else survives), drop the finalizer;
2. terminal → reopen a Failed category whose Workflow is running again ("stale terminal",
   a Workflow restarted under it), else make sure the report exists;
3. no category statuses yet → every category must be in the catalog (``CategoryNotFound``),
   then category 0's Workflow is created and every status seeded in the same write;
4. the first category not terminal: InProgress → poll its Workflow (its node-result refs
   copied; a Workflow gone, confirmed by a live read, fails the category); Pending → create
   its Workflow. A category whose Workflow cannot be built fails, and the next one runs;
5. all terminal → ``Failed/WorkflowFailed`` if any failed, else
   ``Succeeded/AllWorkflowsSucceeded``, and ConfigMap ``<cert>-report`` with the result
   document assembled by the core (:func:`glimmer.certify.run.cert_result`) from each
   Workflow's ``<workflow>-result``.

No node matching the target is waited for (``InProgress/WaitingForNodes``) for up to five
minutes from the Certification's creation. A Workflow name held by an object this
Certification does not control is terminal (``WorkflowNameCollision``), never adopted; one
being deleted is waited for. Every status write carries the resourceVersion it was read at,
so a lost race is a Conflict and the next reconcile starts over from a fresh read. Events go
out on every change of the condition trio's True member and on progress between categories.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from glimmer.api.certify.certification import Certification
from glimmer.backends.kubernetes.certify.resources import CERTIFICATIONS, WORKFLOWS
from glimmer.backends.kubernetes.errors import AlreadyExists
from glimmer.certify.catalog.naming import workflow_name
from glimmer.certify.discovery import WAITING_FOR_NODES, still_waiting, waiting_message
from glimmer.certify.platform.vocab import GROUP, MANAGED_BY, MANAGED_BY_KEY
from glimmer.certify.result import CategoryResult, category_from_doc, category_to_doc, to_doc
from glimmer.certify.run import Targeted, cert_result
from glimmer.engine.backend import Conflict
from glimmer.operator.certify.certification_build import (
    BuildRefused,
    NoNodes,
    build_workflow,
    cert_spec,
    controlled_by,
    controller_ref,
    parse_certification,
)
from glimmer.operator.certify.certification_conditions import (
    FAILED,
    IN_PROGRESS,
    SUCCEEDED,
    Transition,
    is_true,
    set_exclusive,
    terminal,
)
from glimmer.operator.certify.workflow_cluster import Cluster, Obj, Rejected, meta, resource_for
from glimmer.operator.certify.workflow_result import (
    CATEGORY_KEY,
    PLATFORM_KEY,
    REPORT_KEY,
    TARGET_KEY,
    configmap,
    report_name,
    result_name,
    target_from_text,
)

FINALIZER = f"{GROUP}/certification-finalizer"
NODE_RETRY_S = 10.0
CONFIGMAPS = resource_for("v1", "ConfigMap")
PENDING, DONE = "Pending", (SUCCEEDED, FAILED)


@dataclass(frozen=True)
class Stop:
    """This reconcile ends here; the next one in ``seconds`` (None: on an event)."""

    seconds: float | None


def _when(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class CertificationController:
    """Reconciles Certifications through ``cluster``; ``now`` is the operator's clock and
    ``poll`` the safety-net requeue while a Workflow runs (15 s; tests use less)."""

    def __init__(self, cluster: Cluster, now: Callable[[], datetime], poll: float = 15.0) -> None:
        self.cluster = cluster
        self.now = now
        self.poll = poll

    # -- the reconcile ------------------------------------------------------------------------

    def reconcile(self, namespace: str, name: str) -> float | None:
        """One reconcile; the seconds until the next one (None: only an event brings one)."""
        body = self.cluster.get(CERTIFICATIONS, name, namespace)
        if body is None:
            return None
        if meta(body).get("deletionTimestamp"):
            self._finalize(body)
            return None
        if FINALIZER not in (meta(body).get("finalizers") or ()):
            body = self._add_finalizer(body)
        status: Obj = dict(body.get("status") or {})
        if terminal(status.get("conditions")):
            return self._terminal(body, status)
        try:
            cert = parse_certification(body)
            cert_spec(cert)
        except BuildRefused as refused:
            self._write(body, {**status}, FAILED, refused.reason, refused.message)
            return None
        cats: list[Obj] = [dict(c) for c in status.get("categoryStatuses") or ()]
        if not cats:
            cats = [
                {"domain": c.domain, "variant": c.variant, "status": PENDING}
                for c in cert.spec.categories
            ]
        return self._advance(body, cert, status, cats)

    def _advance(
        self, body: Obj, cert: Certification, status: Obj, cats: list[Obj]
    ) -> float | None:
        """Step 4 and 5: poll or start the first category not done, or finish."""
        total = len(cats)
        for i, cat in enumerate(cats):
            if cat.get("status") in DONE:
                continue
            if cat.get("status") == IN_PROGRESS:
                moved = self._poll(body, cat)
                if moved is None:
                    return self.poll
                cats[i] = moved
                continue  # a category done: on to the next in the same reconcile
            stop = self._start(body, cert, i, cats)
            if stop is not None:
                return stop.seconds
            if cats[i].get("status") == IN_PROGRESS:
                ref = cats[i]["workflowRef"]["name"]
                self._write(
                    body,
                    {**status, "categoryStatuses": cats},
                    IN_PROGRESS,
                    "WorkflowCreated",
                    f"Created Workflow {ref} for category {cat['domain']}/{cat['variant']} "
                    f"({i + 1} of {total})",
                )
                return self.poll
            # The category failed to build: the next one runs (continue on failure).
        failed = [c for c in cats if c.get("status") == FAILED]
        if failed:
            reason, message = "WorkflowFailed", "One or more certification categories failed"
            done = FAILED
        else:
            reason, message = "AllWorkflowsSucceeded", f"All {total} categories succeeded"
            done = SUCCEEDED
        # The report first: whoever sees the terminal condition finds the report beside it.
        self._report(body, cert, cats)
        self._write(body, {**status, "categoryStatuses": cats}, done, reason, message)
        return None

    # -- one category -------------------------------------------------------------------------

    def _start(self, body: Obj, cert: Certification, index: int, cats: list[Obj]) -> Stop | None:
        """Create category ``index``'s Workflow: the category InProgress with its ref, or
        Failed when it cannot be built; a :class:`Stop` when this reconcile ends here (no
        nodes yet, a same-named Workflow being deleted, a name collision)."""
        namespace = meta(body).get("namespace") or "default"
        cat = cats[index]
        try:
            workflow = build_workflow(body, cert, index, self.cluster.nodes())
        except NoNodes as e:
            created = _when(meta(body).get("creationTimestamp")) or self.now()
            target = (body.get("spec") or {}).get("target") or {}
            if still_waiting(created, self.now()):
                status = {**(body.get("status") or {}), "categoryStatuses": cats}
                message = waiting_message(target, created, self.now())
                self._write(body, status, IN_PROGRESS, WAITING_FOR_NODES, message)
                return Stop(NODE_RETRY_S)
            self._fail_category(
                body, cert, index, cat, "NoTargetNodes", f"{e.message} after 5 minutes"
            )
            return None
        except BuildRefused as e:
            self._fail_category(body, cert, index, cat, e.reason, e.message)
            return None
        name = workflow["metadata"]["name"]
        ref = {"name": name, "namespace": namespace}
        try:
            self.cluster.create(WORKFLOWS, workflow, namespace)
        except AlreadyExists:
            found = self.cluster.get(WORKFLOWS, name, namespace)
            if found is None or meta(found).get("deletionTimestamp"):
                return Stop(self.poll)  # the name is being freed: try again
            if not controlled_by(found, str(meta(body).get("uid") or "")):
                message = (
                    f"Workflow {namespace}/{name} exists and is not controlled by this "
                    "Certification; it is left alone (rename or delete it)"
                )
                cat["status"] = FAILED
                status = {**(body.get("status") or {}), "categoryStatuses": cats}
                self._write(body, status, FAILED, "WorkflowNameCollision", message)
                return Stop(None)  # terminal, and no report: nothing ran under this name
        except Rejected as e:
            message = f"Workflow {name} rejected: {e}"
            self._fail_category(body, cert, index, cat, "WorkflowFailed", message)
            return None
        cat.update(status=IN_PROGRESS, workflowRef=ref)
        return None

    def _fail_category(
        self, body: Obj, cert: Certification, index: int, cat: Obj, reason: str, message: str
    ) -> None:
        """Category ``index`` failed before its Workflow ran: a Warning, and the result its
        Workflow would have left (``<workflow>-result``, owned by the Certification, the
        category's ref naming it), so the report says why however many reconciles later it is
        written (a category status has no field for a message)."""
        self.cluster.event(body, reason, message, warning=True, at=self.now())
        namespace = str(meta(body).get("namespace") or "default")
        c = cert.spec.categories[index]
        name = workflow_name(cert.name, c.domain, c.variant, c.options)
        unrun = _unrun(cert, index, {"domain": c.domain, "variant": c.variant}, message)
        doc = category_to_doc(unrun)
        record = configmap(
            result_name(name),
            namespace,
            {CATEGORY_KEY: json.dumps(doc, sort_keys=True)},
            controller_ref(body),
            {MANAGED_BY_KEY: MANAGED_BY, f"{GROUP}/certification": cert.name},
        )
        with contextlib.suppress(AlreadyExists):
            self.cluster.create(CONFIGMAPS, record, namespace)
        cat.update(status=FAILED, workflowRef={"name": name, "namespace": namespace})

    def _poll(self, body: Obj, cat: Obj) -> Obj | None:
        """The category once its Workflow is terminal (None while it runs)."""
        ref = cat.get("workflowRef") or {}
        wf = self.cluster.get(WORKFLOWS, str(ref.get("name")), ref.get("namespace"))
        out = dict(cat)
        if wf is None:
            out["status"] = FAILED
            message = f"Workflow {ref.get('name')} was deleted before it finished"
            self.cluster.event(body, "WorkflowDeleted", message, warning=True, at=self.now())
            return out
        wstatus = wf.get("status") or {}
        for key in ("succeededNodesRef", "failedNodesRef"):
            if wstatus.get(key):
                out[key] = wstatus[key]
        conditions = wstatus.get("conditions")
        if not terminal(conditions):
            return None
        ok = is_true(conditions, SUCCEEDED)
        out["status"] = SUCCEEDED if ok else FAILED
        what = f"{cat['domain']}/{cat['variant']}"
        message = (
            f"Category {what} succeeded"
            if ok
            else f"Category {what} failed, advancing to next category"
        )
        self.cluster.event(
            body, "CategorySucceeded" if ok else "CategoryFailed", message, warning=not ok,
            at=self.now(),
        )  # fmt: skip
        return out

    # -- terminal -----------------------------------------------------------------------------

    def _terminal(self, body: Obj, status: Obj) -> float | None:
        cats = [dict(c) for c in status.get("categoryStatuses") or ()]
        for cat in cats:
            ref = cat.get("workflowRef") or {}
            if cat.get("status") != FAILED or not ref.get("name"):
                continue
            wf = self.cluster.get(WORKFLOWS, str(ref["name"]), ref.get("namespace"))
            if wf is not None and not terminal((wf.get("status") or {}).get("conditions")):
                cat["status"] = IN_PROGRESS
                self._write(
                    body,
                    {**status, "categoryStatuses": cats},
                    IN_PROGRESS,
                    "Recovered",
                    f"Recovered: Workflow {ref['name']} still running",
                )
                return self.poll
        if cats:
            try:
                cert = parse_certification(body)
            except BuildRefused:
                return None
            self._report(body, cert, cats)
        return None

    def _report(self, body: Obj, cert: Certification, cats: list[Obj]) -> None:
        """ConfigMap ``<cert>-report`` with the whole result document (once)."""
        namespace = str(meta(body).get("namespace") or "default")
        name = report_name(cert.name)
        if self.cluster.get(CONFIGMAPS, name, namespace) is not None:
            return
        categories: list[CategoryResult] = []
        target: Targeted | None = None
        platform = ""
        for i, cat in enumerate(cats):
            ref = cat.get("workflowRef") or {}
            found = None
            if ref.get("name"):
                found = self.cluster.get(CONFIGMAPS, result_name(str(ref["name"])), namespace)
            data = (found or {}).get("data") or {}
            if CATEGORY_KEY in data:
                categories.append(category_from_doc(json.loads(data[CATEGORY_KEY]), name))
                if target is None and TARGET_KEY in data:
                    target = target_from_text(data[TARGET_KEY])
                platform = platform or str(data.get(PLATFORM_KEY, ""))
            else:
                categories.append(_unrun(cert, i, cat))
        spec = cert_spec(cert)
        doc = to_doc(
            cert_result(
                spec,
                f"kubernetes/{namespace}",  # the report card: "fleet kubernetes/<ns>"
                target or Targeted("unknown", ()),
                categories,
                seed=0,
                platform=platform or "kubernetes",
            )
        )
        report = configmap(
            name,
            namespace,
            {REPORT_KEY: json.dumps(doc, indent=2, sort_keys=True)},
            controller_ref(body),
            {MANAGED_BY_KEY: MANAGED_BY, f"{GROUP}/certification": cert.name},
        )
        with contextlib.suppress(AlreadyExists):
            self.cluster.create(CONFIGMAPS, report, namespace)

    # -- deletion -----------------------------------------------------------------------------

    def _finalize(self, body: Obj) -> None:
        uid = str(meta(body).get("uid") or "")
        cats = (body.get("status") or {}).get("categoryStatuses") or []
        for cat in cats:
            ref = cat.get("workflowRef") or {}
            if not ref.get("name"):
                continue
            wf = self.cluster.get(WORKFLOWS, str(ref["name"]), ref.get("namespace"))
            if wf is None or not controlled_by(wf, uid):
                continue  # someone else's Workflow of that name is never ours to delete
            # A UID that changed since the read: the name holds another object, left alone.
            with contextlib.suppress(Conflict):
                self.cluster.delete(
                    WORKFLOWS, str(ref["name"]), ref.get("namespace"), uid=meta(wf)["uid"]
                )
        finalizers = [f for f in meta(body).get("finalizers") or () if f != FINALIZER]
        if len(finalizers) != len(meta(body).get("finalizers") or ()):
            self.cluster.replace(
                CERTIFICATIONS, {**body, "metadata": {**meta(body), "finalizers": finalizers}}
            )

    def _add_finalizer(self, body: Obj) -> Obj:
        finalizers = [*(meta(body).get("finalizers") or ()), FINALIZER]
        return self.cluster.replace(
            CERTIFICATIONS, {**body, "metadata": {**meta(body), "finalizers": finalizers}}
        )

    # -- status -------------------------------------------------------------------------------

    def _write(self, body: Obj, status: Obj, kind: str, reason: str, message: str) -> Obj | None:
        conditions, moved = set_exclusive(
            status.get("conditions"), kind, reason, message, self.now()
        )
        new = {**status, "conditions": conditions}
        if new == (body.get("status") or {}):
            return None
        written = self.cluster.write_status(CERTIFICATIONS, {**body, "status": new})
        if moved is not None and not _still_waiting(body, reason):
            self._announce(body, moved)
        return written

    def _announce(self, body: Obj, t: Transition) -> None:
        self.cluster.event(body, t.reason, t.message, warning=t.warning, at=self.now())


def _still_waiting(body: Obj, reason: str) -> bool:
    """Whether this write only counts down the wait for nodes (one Event for the wait, not one
    per retry: the message names the time left)."""
    if reason != WAITING_FOR_NODES:
        return False
    conditions = (body.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == IN_PROGRESS and c.get("reason") == reason for c in conditions)


def _unrun(
    cert: Certification, index: int, cat: Mapping[str, Any], why: str = ""
) -> CategoryResult:
    """A category that never produced a result (its Workflow could not be built or vanished)."""
    options = cert.spec.options_for(index)
    return CategoryResult(
        domain=str(cat["domain"]),
        variant=str(cat["variant"]),
        status=FAILED,
        test_scale=str(options.test_scale or "full-scale"),
        nodes_per_job=0,
        runtime_s=0.0,
        mnnvl=None,
        groups=(),
        failure_reason=why or "the category's Workflow left no result",
    )
