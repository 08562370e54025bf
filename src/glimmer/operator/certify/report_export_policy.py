"""The ReportExportPolicy controller (specs/certify.md §2.9): one ReportExport per finished
Certification a policy matches.

A reconcile lists the Certifications of each namespace in ``source.namespaces``, keeps those
the selector picks that are terminal (``Succeeded`` or ``Failed`` True) with their
``<cert>-report`` written, and creates, in the policy's namespace, the ReportExport named
:func:`~.report_export_names.export_name` (policy, Certification UID) for each one that has
none. Creation is the only write, and a name already taken is success: a restart at any point
never makes two. ``suspend`` stops new registrations; exports made before go on.

Only Certifications that finished within the policy's shorter retention are registered: an
export deleted by retention (completed, then kept ``retention`` long) is then past that
window, so it is never registered a second time, and a policy created or resumed later still
picks up what finished recently. Editing the policy never changes an export made: it copies
the webhook, retry and retention, and records the policy's generation.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from pydantic import ValidationError

from glimmer.api.certify.report_export import ReportExportPolicy
from glimmer.api.explain import explain
from glimmer.api.fleet_sched import parse_duration
from glimmer.backends.kubernetes.certify.resources import CERTIFICATIONS, CERTIFY_API_VERSION
from glimmer.backends.kubernetes.errors import AlreadyExists
from glimmer.certify.platform.vocab import MANAGED_BY, MANAGED_BY_KEY
from glimmer.operator.certify.certification_conditions import FAILED, SUCCEEDED, find
from glimmer.operator.certify.job_status import parse_time
from glimmer.operator.certify.report_export_names import (
    CERTIFICATION_LABEL,
    EXPORTS,
    POLICIES,
    POLICY_LABEL,
    SOURCE_NAMESPACE_LABEL,
    export_name,
)
from glimmer.operator.certify.report_export_snapshot import CONFIGMAPS
from glimmer.operator.certify.workflow_cluster import Cluster, Obj, meta
from glimmer.operator.certify.workflow_result import report_name

log = logging.getLogger("glimmer.operator.certify.report_export")


class PolicyController:
    """Registers exports for policies through ``cluster``; ``cluster_id`` names the cluster
    (the kube-system UID, read when first needed), ``poll`` the safety-net requeue."""

    def __init__(
        self,
        cluster: Cluster,
        now: Callable[[], datetime],
        cluster_id: Callable[[], str],
        poll: float = 15.0,
    ) -> None:
        self.cluster = cluster
        self.now = now
        self.cluster_id = cluster_id
        self.poll = poll

    def reconcile(self, namespace: str, name: str) -> float | None:
        body = self.cluster.get(POLICIES, name, namespace)
        if body is None or meta(body).get("deletionTimestamp"):
            return None
        try:
            policy = ReportExportPolicy.model_validate(body)
        except ValidationError as e:
            problems = "; ".join(f"{where}: {why}" for where, why in explain(e))
            message = f"ReportExportPolicy {namespace}/{name}: {problems}"
            log.warning("%s; it registers nothing", message)
            self.cluster.event(body, "InvalidPolicy", message, warning=True, at=self.now())
            return None
        if policy.spec.suspend:
            return None
        have = {
            str(meta(e).get("name"))
            for e in self.cluster.items(EXPORTS, namespace, {POLICY_LABEL: name})
        }
        retention = policy.spec.retention
        window = timedelta(
            seconds=min(parse_duration(retention.succeeded), parse_duration(retention.failed))
        )
        since = self.now() - window
        for source_ns in policy.spec.source.namespaces:
            for cert in self.cluster.items(CERTIFICATIONS, source_ns):
                uid = str(meta(cert).get("uid") or "")
                if not uid or export_name(name, uid) in have:
                    continue
                if self._due(policy, cert, since):
                    self._register(body, policy, cert)
        return self.poll

    def _due(self, policy: ReportExportPolicy, cert: Obj, since: datetime) -> bool:
        """Whether ``cert`` is one to export now: selected, finished recently, report written."""
        selector = policy.spec.source.selector
        labels = {str(k): str(v) for k, v in (meta(cert).get("labels") or {}).items()}
        if selector is not None and not selector.matches(labels):
            return False
        if meta(cert).get("deletionTimestamp"):
            return False
        conditions = (cert.get("status") or {}).get("conditions")
        done = next(
            (c for c in (find(conditions, SUCCEEDED), find(conditions, FAILED))
             if c and c.get("status") == "True"),
            None,
        )  # fmt: skip
        if done is None:
            return False
        at = parse_time(done.get("lastTransitionTime"))
        if at is not None and at < since:
            return False
        namespace = str(meta(cert).get("namespace") or "default")
        return (
            self.cluster.get(CONFIGMAPS, report_name(str(meta(cert)["name"])), namespace)
            is not None
        )

    def _register(self, body: Obj, policy: ReportExportPolicy, cert: Obj) -> None:
        namespace = str(meta(body).get("namespace") or "default")
        policy_name = str(meta(body)["name"])
        cm = meta(cert)
        uid = str(cm["uid"])
        spec = policy.spec
        export: Obj = {
            "apiVersion": CERTIFY_API_VERSION,
            "kind": "ReportExport",
            "metadata": {
                "name": export_name(policy_name, uid),
                "namespace": namespace,
                "labels": {
                    MANAGED_BY_KEY: MANAGED_BY,
                    POLICY_LABEL: policy_name,
                    CERTIFICATION_LABEL: str(cm["name"]),
                    SOURCE_NAMESPACE_LABEL: str(cm.get("namespace") or "default"),
                },
            },
            "spec": {
                "sourceRef": {
                    "kind": "Certification",
                    "namespace": str(cm.get("namespace") or "default"),
                    "name": str(cm["name"]),
                    "uid": uid,
                },
                "policyRef": {
                    "name": policy_name,
                    "uid": str(meta(body).get("uid") or ""),
                    "generation": int(meta(body).get("generation") or 0),
                },
                "webhook": spec.webhook.model_dump(mode="json", exclude_none=True),
                "retry": spec.retry.model_dump(mode="json"),
                "retention": spec.retention.model_dump(mode="json"),
                "clusterID": self.cluster_id(),
                # One report, one key: every attempt and every receiver dedupes on it.
                "reportID": uid,
            },
        }
        with contextlib.suppress(AlreadyExists):
            self.cluster.create(EXPORTS, export, namespace)
            log.info(
                "ReportExportPolicy %s/%s: registered %s for Certification %s/%s",
                namespace, policy_name, export["metadata"]["name"], cm.get("namespace"), cm["name"],
            )  # fmt: skip
