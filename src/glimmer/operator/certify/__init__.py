"""The certification controllers of the operator (specs/certify.md §3; issue 17): the
Certification, Workflow and WorkloadRun controllers here, the Job and measurement controllers
beside them, all over the substrate-neutral certification core.

:func:`register` puts every one of them on the operator's registry.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import kopf

from glimmer.api.certify.labels import CERTIFY_GROUP
from glimmer.certify.platform.vocab import (
    CERTIFICATION_LABEL,
    WORKFLOW_LABEL,
    WORKLOAD_RUN_LABEL,
)
from glimmer.operator.certify import (
    certification,
    jobs_register,
    report_export_register,
    workflow,
    workflow_finalize,
    workloadrun,
)
from glimmer.operator.certify.certification_daemons import Kind, wake_by_label
from glimmer.operator.certify.workflow_cluster import Cluster
from glimmer.operator.context import OperatorContext

VERSION = "v1alpha1"
RECONCILE_THREADS = 4  # certification reconciles are API work; a few at once at most


def register(
    registry: kopf.OperatorRegistry,
    context: OperatorContext,
    *,
    allow_plain_http_exports: bool = False,
) -> None:
    """Every certification controller's handlers on ``registry``: the Job and measurement
    controllers' (:mod:`.jobs_register`) and the Certification, Workflow and WorkloadRun
    controllers' (one daemon per object, :mod:`.certification_daemons`), and the report-export
    ones (:mod:`.report_export_register`; plain http webhooks only where
    ``allow_plain_http_exports``)."""
    jobs_register.register(registry, context)
    cluster = Cluster(context.backend.client)
    now = context.clock.now
    pool = ThreadPoolExecutor(max_workers=RECONCILE_THREADS, thread_name_prefix="glimmer-cert")
    certs = Kind(
        CERTIFY_GROUP,
        VERSION,
        "certifications",
        certification.CertificationController(cluster, now).reconcile,
        certification.FINALIZER,
        pool,
    )
    flows = Kind(
        CERTIFY_GROUP,
        VERSION,
        "workflows",
        workflow.WorkflowController(cluster, now).reconcile,
        workflow_finalize.FINALIZER,
        pool,
    )
    runs = Kind(
        CERTIFY_GROUP,
        VERSION,
        "workloadruns",
        workloadrun.WorkloadRunController(cluster, now).reconcile,
        "",
        pool,
    )
    for kind in (certs, flows, runs):
        kind.register(registry)
    wake_by_label(registry, CERTIFY_GROUP, VERSION, "jobs", WORKFLOW_LABEL, flows)
    wake_by_label(registry, CERTIFY_GROUP, VERSION, "workflows", CERTIFICATION_LABEL, certs)
    wake_by_label(registry, CERTIFY_GROUP, VERSION, "workflows", WORKLOAD_RUN_LABEL, runs)
    report_export_register.register(
        registry, context, cluster, pool, allow_plain_http=allow_plain_http_exports
    )

    @kopf.on.cleanup(id="certify-reconciles-close", registry=registry)
    async def close(**_: Any) -> None:
        pool.shutdown(wait=False, cancel_futures=True)
