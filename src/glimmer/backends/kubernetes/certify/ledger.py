"""The Job-CR ledger: where a Workflow's replayed certification core finds its jobs (issue 17,
decision 2; the protocol is :class:`glimmer.certify.replay.Ledger`).

One ledger serves ONE replay of one Workflow. Its first question lists the Workflow's Jobs once
(label ``certify.glimmer.ai/workflow=<workflow>``) and answers every later one from that list:
a replay asks for every job the core has run so far, and one LIST per reconcile instead of a
GET per finished job keeps a diagnose Workflow of a thousand DCGM jobs at one call. A Job
submitted during the replay joins the list, so a second request of its key sees it as running.

* :meth:`JobLedger.outcome` — the Job's frozen ``status.outcome``
  (:mod:`glimmer.certify.outcome`), None while it has none (running, or not created yet).
* :meth:`JobLedger.submit` — create the Job create-if-absent by name: the spec from the
  Workflow's ``spec_for`` (the Job spec builder the Workflow controller hands in), labels
  ``managed-by``/``workflow``/``group``, annotation ``group-nodes``, owned by the Workflow.
  A Job of that name already there is adopted when this Workflow controls it (a replay after a
  crash that created it but never read it back); a foreign one is a :class:`JobNameCollision`.
  A ``spec_for`` that raises :class:`NotReady` (a dependency of the job not ready yet, §3.2
  launchPendingGroups: "a dependency that is not ready -> requeue") leaves the Job uncreated:
  the replay waits for it as for a running one, and the next reconcile asks again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lightkube import Client

from glimmer.backends.kubernetes.certify.resources import CERTIFY_API_VERSION, JOBS
from glimmer.backends.kubernetes.errors import AlreadyExists, api_call
from glimmer.backends.kubernetes.resources import as_dict
from glimmer.certify.jobs import Job, JobLog
from glimmer.certify.outcome import outcome_log
from glimmer.certify.platform.vocab import (
    GROUP_LABEL,
    MANAGED_BY,
    MANAGED_BY_KEY,
    WORKFLOW_LABEL,
)
from glimmer.certify.replay import group_of
from glimmer.engine.backend import BackendError
from glimmer.errors import GlimmerError

GROUP_NODES_ANNOTATION = "certify.glimmer.ai/group-nodes"

# The Job spec of one core job: (Job name, the core's job, the nodes it is pinned to) -> spec.
SpecFor = Callable[[str, Job, tuple[str, ...]], Mapping[str, Any]]


class NotReady(BackendError):
    """A job's Job cannot be created yet: what it needs is not ready (the Workflow controller's
    :class:`~glimmer.operator.certify.dependencies.DependencyNotReady`)."""


class JobNameCollision(GlimmerError):
    """A Job of the name a replay needs exists and belongs to something else (§3.2
    ``JobNameCollision``, terminal for the Workflow)."""


def owner_reference(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The controller owner reference to ``obj`` (a Workflow, a Job)."""
    meta = obj.get("metadata") or {}
    return {
        "apiVersion": str(obj.get("apiVersion") or CERTIFY_API_VERSION),
        "kind": str(obj.get("kind") or ""),
        "name": str(meta.get("name") or ""),
        "uid": str(meta.get("uid") or ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controlled_by(obj: Mapping[str, Any], uid: str) -> bool:
    """Whether ``obj``'s controller owner reference names ``uid``."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return any(r.get("uid") == uid and r.get("controller") for r in refs)


def job_manifest(
    workflow: Mapping[str, Any],
    key: str,
    job: Job,
    nodes: tuple[str, ...],
    spec: Mapping[str, Any],
) -> dict[str, Any]:
    """The Job object for ``job`` under ``key``, owned by ``workflow`` (§3.2 createJobForGroup:
    template labels and annotations first, ours over them)."""
    meta = workflow.get("metadata") or {}
    template = ((workflow.get("spec") or {}).get("jobTemplate") or {}).get("metadata") or {}
    labels = {
        **dict(template.get("labels") or {}),
        MANAGED_BY_KEY: MANAGED_BY,
        WORKFLOW_LABEL: str(meta.get("name") or ""),
        GROUP_LABEL: group_label_value(group_of(job)),
    }
    annotations = {
        **dict(template.get("annotations") or {}),
        GROUP_NODES_ANNOTATION: ",".join(nodes),
    }
    return {
        "apiVersion": CERTIFY_API_VERSION,
        "kind": "Job",
        "metadata": {
            "name": key,
            "namespace": str(meta.get("namespace") or "default"),
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [owner_reference(workflow)],
        },
        "spec": dict(spec),
    }


def group_label_value(group: str) -> str:
    """A group name as a label value (63 characters at most; a DCGM job's group is a node name,
    which may be a longer DNS subdomain: cut, the group-nodes annotation keeps it whole)."""
    return group[:63].rstrip("-_.")


class JobLedger:
    """The Jobs of ``workflow`` (the Workflow object as read) for one replay."""

    def __init__(self, client: Client, workflow: Mapping[str, Any], spec_for: SpecFor) -> None:
        self.client = client
        self.workflow = workflow
        self.spec_for = spec_for
        meta = workflow.get("metadata") or {}
        self.name = str(meta.get("name") or "")
        self.namespace = str(meta.get("namespace") or "default")
        self.uid = str(meta.get("uid") or "")
        self._jobs: dict[str, dict[str, Any]] | None = None
        self.created: list[str] = []  # keys this ledger created (a replay's new Jobs)
        self.not_ready: dict[str, str] = {}  # keys left uncreated -> what they wait for

    def jobs(self) -> dict[str, dict[str, Any]]:
        """The Workflow's Jobs by name: one LIST, the first time it is asked."""
        if self._jobs is None:
            with api_call(f"list jobs of workflow {self.namespace}/{self.name}"):
                found = self.client.list(
                    JOBS, namespace=self.namespace, labels={WORKFLOW_LABEL: self.name}
                )
                listed = [as_dict(j) for j in found]
            self._jobs = {
                str(j["metadata"]["name"]): j
                for j in listed
                if not self.uid or controlled_by(j, self.uid)
            }
        return self._jobs

    def outcome(self, key: str) -> JobLog | None:
        job = self.jobs().get(key)
        doc = ((job or {}).get("status") or {}).get("outcome")
        if doc is None:
            return None
        return outcome_log(doc, f"Job {self.namespace}/{key}")

    def submit(self, key: str, job: Job, nodes: tuple[str, ...]) -> None:
        known = self.jobs()
        if key in known:
            return
        try:
            spec = self.spec_for(key, job, nodes)
        except NotReady as e:
            self.not_ready[key] = str(e)
            return
        manifest = job_manifest(self.workflow, key, job, nodes, spec)
        try:
            with api_call(f"create job {self.namespace}/{key}"):
                made = self.client.create(JOBS.from_dict(manifest), namespace=self.namespace)
            known[key] = as_dict(made)
            self.created.append(key)
        except AlreadyExists:
            known[key] = self._adopt(key)

    def _adopt(self, key: str) -> dict[str, Any]:
        with api_call(f"get job {self.namespace}/{key}"):
            found = as_dict(self.client.get(JOBS, key, namespace=self.namespace))
        if controlled_by(found, self.uid):
            return found
        if (found.get("metadata") or {}).get("deletionTimestamp"):
            raise BackendError(f"job {self.namespace}/{key} of another owner is being deleted")
        raise JobNameCollision(
            f"job {self.namespace}/{key} exists and is not controlled by workflow {self.name}"
        )
