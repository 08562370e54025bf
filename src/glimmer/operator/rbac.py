"""The operator's least-privilege ClusterRole, as data: every (API group, resource) the operator
touches, exactly the verbs it uses there, and why (issue 16, Deployment).

The table is the rule, the manifest is generated from it (:func:`cluster_role`), and a test
(tests/operator/test_rbac_journal.py) drives the operator against the API stand-in, reads the
stand-in's request journal and checks both directions: every (verb, resource) the operator sent
is granted here, and nothing here went unused. A new API call therefore fails that test until
this table names it — and says why.

No wildcard, no ``deletecollection``, no write to a Node beyond ``patch`` (cordon and stamp in
one merge patch), and Secrets only ``get`` (a webhook sink's token, by name).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

GROUP = "burnin.glimmer.ai"
CERTIFY = "certify.glimmer.ai"
TRAINER = "trainer.kubeflow.org"
KOPF_GROUP = "kopf.dev"
CLUSTER_ROLE = "glimmer-operator"


@dataclass(frozen=True)
class Grant:
    """Verbs on one resource (``plural`` or ``plural/subresource``) of one API group."""

    group: str
    resource: str
    verbs: tuple[str, ...]
    why: str
    # Verbs of ``verbs`` a drive against the API stand-in cannot see used (a path another
    # component normally takes first); the journal test holds these to exactly this list.
    unobserved: tuple[str, ...] = ()


GRANTS: tuple[Grant, ...] = (
    # -- the cluster's own kinds --------------------------------------------------------------
    Grant("", "nodes", ("get", "list", "patch", "watch"),
          "fresh reads for cordons, admission and the reaper; cordon+stamp as one merge patch; "
          "the fingerprint reconciler's Node watch"),
    Grant("", "pods", ("create", "delete", "list", "watch"),
          "runner pods: created once by name, listed by the run label, deleted after the "
          "status that justifies it; their events wake the run; a certify workload's pods "
          "(JobSet and job labels) listed for state, nodes and logs"),
    Grant("", "pods/log", ("get",),
          "runner output: the verdict's evidence; a certify launcher's log (outcome, failure "
          "log, measurements)"),
    Grant("", "services", ("create", "delete", "list"),
          "headless rendezvous Services of Pair and Group units; those of a run the operator "
          "deleted (TTL) are deleted too where no garbage collector got to them first",
          unobserved=("delete",)),
    Grant("", "events", ("create",), "HardwareDrift and run notices (kubectl describe)"),
    Grant("", "configmaps", ("create", "delete", "get", "update"),
          "the ConfigMap sink and its rollovers; certification's node results, category results "
          "and reports; a Workflow's ConfigMap dependencies, deleted with it",
          unobserved=("delete",)),
    Grant("", "persistentvolumeclaims", ("create", "delete", "get"),
          "a Workflow's checkpoint PVC dependency (§3.4), deleted in reverse creation order",
          unobserved=("create", "delete", "get")),
    Grant("", "persistentvolumes", ("get", "patch"),
          "the volume behind a Workflow's bound checkpoint PVC: stamped with its UID, reclaim "
          "policy Retain -> Delete once Released after the Workflow is deleted (§3.2)",
          unobserved=("get", "patch")),
    Grant("", "secrets", ("get",), "a webhook sink's bearer token, by name, at each send"),
    Grant("", "namespaces", ("get",), "kube-system's UID names the cluster in every envelope"),
    # -- burn-in kinds ------------------------------------------------------------------------
    Grant(GROUP, "burninruns", ("create", "delete", "get", "list", "patch", "watch"),
          "runs: created by schedules, read fresh (admission lists all), plan and finalizer "
          "patched, deleted by TTL and schedule history"),
    Grant(GROUP, "burninruns/status", ("update",), "the run's status: its checkpoint"),
    Grant(GROUP, "burninprofiles", ("get",), "a run's profile, by name"),
    Grant(GROUP, "burnintests", ("list",), "the namespace's tests a profile refers to"),
    Grant(GROUP, "burninsinks", ("get",), "the sinks a pinned plan names, read per delivery"),
    Grant(GROUP, "burninsinks/status", ("patch",), "lastDelivery / lastError"),
    Grant(GROUP, "burninschedules", ("get", "list", "watch"),
          "schedules: watched, read fresh per tick (no finalizer, nothing stored on them)"),
    Grant(GROUP, "burninschedules/status", ("update",), "the schedule's cursor and history"),
    Grant(GROUP, "nodefingerprints", ("create", "get", "list", "watch"),
          "one per Node, created when missing; a deleted one is recaptured"),
    Grant(GROUP, "nodefingerprints/status", ("update",), "the observed identity and drift"),
    # -- certification kinds (issue 17; a burn-in drive serves none of them) -----------------
    Grant(CERTIFY, "certifications", ("get", "list", "update", "watch"),
          "certifications: watched, read live, their finalizer added and dropped",
          unobserved=("get", "list", "update", "watch")),
    Grant(CERTIFY, "certifications/status", ("update",),
          "category statuses and the condition trio, at the resourceVersion read",
          unobserved=("update",)),
    Grant(CERTIFY, "workflows", ("create", "delete", "get", "list", "update", "watch"),
          "one per category or WorkloadRun, created by name, read live, deleted with a UID "
          "precondition by the Certification that controls it; the finalizer",
          unobserved=("create", "delete", "get", "list", "update", "watch")),
    Grant(CERTIFY, "workflows/status", ("update",),
          "discovery, groups, dependency refs, node-result refs, the condition trio",
          unobserved=("update",)),
    Grant(CERTIFY, "workloadruns", ("get", "list", "watch"), "WorkloadRuns: watched, read live",
          unobserved=("get", "list", "watch")),
    Grant(CERTIFY, "workloadruns/status", ("update",), "the Workflow's state mirrored",
          unobserved=("update",)),
    Grant(CERTIFY, "jobs", ("create", "delete", "get", "list", "patch", "watch"),
          "the replayed core's jobs: created if absent by name, listed by workflow label once "
          "per replay, deleted (UID precondition) before a Workflow's dependencies; the Job "
          "controller's watch, live reads and finalizer (merge patch at the resourceVersion)",
          unobserved=("create", "delete", "get", "list", "patch", "watch")),
    Grant(CERTIFY, "jobs/status", ("update",),
          "conditions, workloadRef and its clock, failure log, failed nodes, the frozen outcome",
          unobserved=("update",)),
    Grant(CERTIFY, "goodputmeasurements", ("create", "get", "list", "watch"),
          "created by the Job that asks for one; watched and read live by its controller",
          unobserved=("create", "get", "list", "watch")),
    Grant(CERTIFY, "goodputmeasurements/status", ("update",),
          "goodput figures, Measuring/Complete", unobserved=("update",)),
    Grant(CERTIFY, "bandwidthmeasurements", ("create", "get", "list", "watch"),
          "created by the Job that asks for one; watched and read live by its controller",
          unobserved=("create", "get", "list", "watch")),
    Grant(CERTIFY, "bandwidthmeasurements/status", ("update",),
          "results by size, Measuring/Complete", unobserved=("update",)),
    Grant(CERTIFY, "logprofiles", ("get",), "a measurement's LogProfile, by name",
          unobserved=("get",)),
    Grant(CERTIFY, "reportexportpolicies", ("get", "list", "watch"),
          "report-export policies: watched, read live, never written",
          unobserved=("get", "list", "watch")),
    Grant(CERTIFY, "reportexports", ("create", "delete", "get", "list", "watch"),
          "one per finished Certification a policy matches, created if absent by name, listed "
          "by policy label; watched and read live by its controller; deleted (UID "
          "precondition) after its retention",
          unobserved=("create", "delete", "get", "list", "watch")),
    Grant(CERTIFY, "reportexports/status", ("update",),
          "the delivery's checkpoint: snapshot digest, attempts, next attempt, outcome",
          unobserved=("update",)),
    Grant(TRAINER, "trainjobs", ("create", "delete", "get", "list", "watch"),
          "a Job's workload <job>-workload: created, read, watched by the job label, deleted on "
          "failure, restart and Job deletion",
          unobserved=("create", "delete", "get", "list", "watch")),
    Grant(TRAINER, "trainingruntimes", ("create", "delete", "get"),
          "a Workflow's runtime dependency and its job-scoped copies (§3.4)",
          unobserved=("create", "delete", "get")),
    Grant(TRAINER, "clustertrainingruntimes", ("create", "delete", "get"),
          "a cluster-scoped runtime dependency (never job-scoped)",
          unobserved=("create", "delete", "get")),
    Grant("resource.k8s.io", "resourceclaimtemplates", ("create", "delete", "get"),
          "the DRA claim templates an NVLink entry's dependencies declare",
          unobserved=("create", "delete", "get")),
    Grant("resource.nvidia.com", "computedomains", ("create", "delete", "get"),
          "the ComputeDomain an MNNVL entry's dependencies declare",
          unobserved=("create", "delete", "get")),
    # -- kopf itself ----------------------------------------------------------------------------
    Grant("apiextensions.k8s.io", "customresourcedefinitions", ("list", "watch"),
          "kopf's resource observer: the kinds served change when a CRD is applied"),
    # -- leader election (kopf peering) -------------------------------------------------------
    Grant(KOPF_GROUP, "clusterkopfpeerings", ("create", "list", "patch", "watch"),
          "leader election between replicas: the peering object created if missing, "
          "keep-alives patched, peers watched"),
)  # fmt: skip


def used_pairs() -> set[tuple[str, str, str]]:
    """Every (verb, group, resource) the table grants."""
    return {(verb, g.group, g.resource) for g in GRANTS for verb in g.verbs}


def unobserved_pairs() -> set[tuple[str, str, str]]:
    """The grants a drive against the stand-in cannot see used (the stand-in, like an API
    server, garbage-collects a deleted run's Services by their owner references before the
    operator's own clean-up lists them)."""
    return {(verb, g.group, g.resource) for g in GRANTS for verb in g.unobserved}


def cluster_role(name: str = CLUSTER_ROLE) -> dict[str, Any]:
    """The ClusterRole manifest: one rule per resource, verbs sorted."""
    rules = [
        {"apiGroups": [g.group], "resources": [g.resource], "verbs": sorted(g.verbs)}
        for g in GRANTS
    ]
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": "glimmer-operator"}},
        "rules": rules,
    }
