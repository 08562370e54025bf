"""What the measurement controllers' tests start from: a certify Job on one node asking for
its measurements, its TrainJob created, and its workload's pods with their logs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from glimmer.operator.certify.job_reconcile import JobReconciler
from tests.operator.certify.conftest import NS, JobAPI, JobClock
from tests.operator.certify.job_harness import add_node, add_pod, job_body, reconciler

JOB = "wf-group-0-iter-1"
WORKLOAD = f"{JOB}-workload"
NODE = "gpu-01"


def measured_job(
    api: JobAPI,
    clock: JobClock,
    asked: Mapping[str, Any],
    pods: Sequence[tuple[str, str, bool]],
    **spec: Any,
) -> JobReconciler:
    """Job :data:`JOB` with ``asked`` (``bandwidthMeasurement``/``goodputMeasurement``) and
    ``spec``, reconciled until its workload exists, with ``pods`` (name, log, launcher?): a
    launcher, or a worker carrying the Job's label."""
    add_node(api, NODE)
    api.post(api.certify("jobs"), job_body(JOB, [NODE], **asked, **spec))
    jobs = reconciler(api, clock)
    jobs.reconcile(NS, JOB)
    for name, log, launcher in pods:
        add_pod(api, name, NODE, WORKLOAD, job="" if launcher else JOB, launcher=launcher, log=log)
    jobs.reconcile(NS, JOB)
    return jobs
