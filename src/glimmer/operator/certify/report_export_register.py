"""The report-export controllers on the operator's registry: a daemon per ReportExportPolicy
and per ReportExport (the certification daemons' pattern, :mod:`.certification_daemons`).

A policy's daemon is woken by the events of a terminal Certification (any namespace: the
policy filters), an export's by its own events (a ``cancel``, a ``retryNonce``) and by its
requeue, the time its next attempt or its retention is due (at most the safety net apart).
Attempts are HTTP calls of up to ``webhook.timeout`` each, so exports reconcile on a pool of
their own and never hold the certification controllers' threads.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import kopf

from glimmer.api.certify.labels import CERTIFY_GROUP
from glimmer.operator.certify.certification_conditions import terminal
from glimmer.operator.certify.certification_daemons import Kind
from glimmer.operator.certify.report_export import ExportController
from glimmer.operator.certify.report_export_policy import PolicyController
from glimmer.operator.certify.workflow_cluster import Cluster
from glimmer.operator.context import OperatorContext
from glimmer.operator.sinks import cluster_of
from glimmer.operator.wakes import Key, key_of

VERSION = "v1alpha1"
EXPORT_THREADS = 2


class ClusterID:
    """The kube-system namespace's UID, read at the first registration and kept (empty, and
    read again next time, while it cannot be read)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.known = ""

    def __call__(self) -> str:
        if not self.known:
            self.known = cluster_of(self.cluster.client).uid
        return self.known


def register(
    registry: kopf.OperatorRegistry,
    context: OperatorContext,
    cluster: Cluster,
    pool: ThreadPoolExecutor,
    *,
    allow_plain_http: bool = False,
) -> None:
    now = context.clock.now
    policies = Kind(
        CERTIFY_GROUP,
        VERSION,
        "reportexportpolicies",
        PolicyController(cluster, now, ClusterID(cluster)).reconcile,
        "",
        pool,
    )
    export_pool = ThreadPoolExecutor(
        max_workers=EXPORT_THREADS, thread_name_prefix="glimmer-export"
    )
    exports = Kind(
        CERTIFY_GROUP,
        VERSION,
        "reportexports",
        ExportController(cluster, now, allow_plain_http=allow_plain_http).reconcile,
        "",
        export_pool,
    )
    for kind in (policies, exports):
        kind.register(registry)
    followed: set[Key] = set()

    @kopf.on.event(
        CERTIFY_GROUP, VERSION, "reportexportpolicies", id="reportexportpolicies-follow",
        registry=registry,
    )  # fmt: skip
    async def follow(event: kopf.RawEvent, **_: Any) -> None:
        key = key_of((event.get("object") or {}).get("metadata") or {})
        if event.get("type") == "DELETED":
            followed.discard(key)
        else:
            followed.add(key)

    @kopf.on.event(
        CERTIFY_GROUP, VERSION, "certifications", id="certifications-wake-reportexportpolicies",
        registry=registry,
    )  # fmt: skip
    async def finished(event: kopf.RawEvent, **_: Any) -> None:
        status = (event.get("object") or {}).get("status") or {}
        if terminal(status.get("conditions")):
            for key in list(followed):
                policies.wakes.wake(key)

    @kopf.on.cleanup(id="report-exports-close", registry=registry)
    async def close(**_: Any) -> None:
        export_pool.shutdown(wait=False, cancel_futures=True)
