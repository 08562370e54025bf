"""The API access the certify Job and measurement controllers use, as data for the operator's
ClusterRole (:mod:`glimmer.operator.rbac` owns the table; these rows are to be merged into it).

Each row: (API group, resource or resource/subresource, verbs, why). Plain tuples, so the RBAC
table can import them without importing the controllers.
"""

from __future__ import annotations

from typing import Final

CERTIFY: Final = "certify.glimmer.ai"
TRAINER: Final = "trainer.kubeflow.org"

JOB_GRANTS: Final[tuple[tuple[str, str, tuple[str, ...], str], ...]] = (
    (CERTIFY, "jobs", ("get", "list", "patch", "watch"),
     "the Job controller: watched, read live, its finalizer added and dropped (merge patch "
     "with the resourceVersion read)"),
    (CERTIFY, "jobs/status", ("update",),
     "conditions, workloadRef and its clock, failure log, failed nodes, the frozen outcome"),
    (CERTIFY, "workflows", ("get",), "a Job's timeoutPerJob, from the Workflow that owns it"),
    (CERTIFY, "goodputmeasurements", ("create", "get", "watch", "list"),
     "created by the Job that asks for one; watched and read live by its controller"),
    (CERTIFY, "goodputmeasurements/status", ("update",), "goodput figures, Measuring/Complete"),
    (CERTIFY, "bandwidthmeasurements", ("create", "get", "watch", "list"),
     "created by the Job that asks for one; watched and read live by its controller"),
    (CERTIFY, "bandwidthmeasurements/status", ("update",), "results by size, Measuring/Complete"),
    (CERTIFY, "logprofiles", ("get",), "a measurement's LogProfile, by name"),
    (TRAINER, "trainjobs", ("create", "delete", "get", "list", "watch"),
     "a Job's workload <job>-workload: created, read, watched by the job label, deleted on "
     "failure, restart and Job deletion"),
    ("", "pods", ("list",), "a workload's pods (JobSet and job labels): state, nodes, logs"),
    ("", "pods/log", ("get",), "the launcher's log: outcome, failure log, measurements"),
    ("", "nodes", ("get", "list", "watch"), "the health check's fresh Node reads; Node events"),
    ("", "events", ("create",), "the Job's condition transitions and warnings"),
    ("", "configmaps", ("create", "get", "update"),
     "<goodputmeasurement>-logs: each attempt's training log across checkpoint restarts"),
)  # fmt: skip
