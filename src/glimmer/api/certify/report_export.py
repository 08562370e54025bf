"""ReportExportPolicy (``rep``) and ReportExport (``rex``): durable delivery of a finished
Certification's report to a webhook (specs/certify.md §2.9).

A policy names which Certifications (an explicit namespace allow-list and a label selector)
and where their reports go (a webhook, its bearer token, its retry and retention rules). For
each Certification it matches that finished with its report written, the policy controller
makes one ReportExport in the policy's namespace: one delivery of one report to one policy,
with the policy's webhook, retry and retention copied in, so editing the policy never changes
a delivery already under way. The ReportExport's spec is frozen (a CEL rule) except
``cancel`` and ``retryNonce``.

Durations are Go duration strings. The API server checks their syntax; their bounds (and
``maxBackoff >= initialBackoff``) are checked here, by ``glimmer validate``, and again by the
export controller, which fails an export whose spec breaks them (``InvalidSpec``).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, ConfigDict, Field, model_validator

from glimmer.api.base import Bool, Int32, Int64, Wire, item_error
from glimmer.api.certify.meta import CertifyResource
from glimmer.api.certify.options import DURATION_PATTERN
from glimmer.api.certify.types import NodeSelectorRequirement
from glimmer.api.fleet_sched import parse_duration
from glimmer.api.k8s import Condition, SecretKeySelector

URL_PATTERN = r"^https?://[^\s]+$"
PEM_PATTERN = r"-----BEGIN CERTIFICATE-----"
NAMESPACE_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
HOUR = 3600.0


def _between(low: float, high: float, shown: str) -> AfterValidator:
    def check(text: str) -> str:
        seconds = parse_duration(text)
        if not low <= seconds <= high:
            raise ValueError(f"{text!r} is outside {shown}")
        return text

    return AfterValidator(check)


def _field(default: str, shown: str) -> Any:
    return Field(default, pattern=DURATION_PATTERN, description=f"A Go duration, {shown}.")


Timeout = Annotated[str, _between(1.0, 300.0, "1s..5m")]
InitialBackoff = Annotated[str, _between(1.0, HOUR, "1s..1h")]
MaxBackoff = Annotated[str, _between(1.0, 24 * HOUR, "1s..24h")]
MaxElapsed = Annotated[str, _between(1.0, 720 * HOUR, "at most 720h")]
Retained = Annotated[str, _between(HOUR, 8760 * HOUR, "1h..8760h")]


class LabelSelector(Wire):
    """A Kubernetes label selector: every ``matchLabels`` pair and every requirement must hold;
    an empty selector matches every object."""

    match_labels: dict[str, str] | None = None
    match_expressions: list[NodeSelectorRequirement] | None = None

    def matches(self, labels: dict[str, str]) -> bool:
        """Whether an object carrying ``labels`` is selected."""
        for key, wanted in (self.match_labels or {}).items():
            if labels.get(key) != wanted:
                return False
        for req in self.match_expressions or ():
            present = req.key in labels
            value = labels.get(req.key)
            values = req.values or []
            if req.operator == "In" and value not in values:
                return False
            if req.operator == "NotIn" and present and value in values:
                return False
            if req.operator == "Exists" and not present:
                return False
            if req.operator == "DoesNotExist" and present:
                return False
        return True


class ExportSource(Wire):
    """Which Certifications: those in one of ``namespaces`` whose labels ``selector`` picks."""

    kind: Literal["Certification"] = "Certification"
    namespaces: list[Annotated[str, Field(pattern=NAMESPACE_PATTERN, max_length=63)]] = Field(
        min_length=1, max_length=64
    )
    selector: LabelSelector | None = None


class ExportWebhook(Wire):
    """Where reports go: an https URL (http only where the operator allows it), the bearer
    token (a key of a Secret in the policy's namespace), the CAs its certificate is verified
    against (``caBundle``; the system store when unset) and one attempt's deadline."""

    url: str = Field(pattern=URL_PATTERN, max_length=2048)
    bearer_token_secret_ref: SecretKeySelector | None = None
    ca_bundle: str | None = Field(
        None,
        max_length=65536,
        pattern=PEM_PATTERN,
        description="PEM certificates the receiver's chain must end in (a private CA).",
    )
    timeout: Timeout = _field("10s", "1s..5m")


class ExportRetry(Wire):
    """Exponential backoff from ``initialBackoff`` doubling to ``maxBackoff``; a cycle ends
    after ``maxAttempts`` attempts (the first included) or ``maxElapsedTime`` from its start."""

    initial_backoff: InitialBackoff = _field("10s", "1s..1h")
    max_backoff: MaxBackoff = _field("15m", "1s..24h")
    max_attempts: Int32 = Field(100, ge=1, le=10000)
    max_elapsed_time: MaxElapsed = _field("24h", "at most 720h")

    @model_validator(mode="after")
    def _backoff_grows(self) -> ExportRetry:
        if parse_duration(self.max_backoff) < parse_duration(self.initial_backoff):
            raise item_error(
                ".maxBackoff",
                f"maxBackoff {self.max_backoff} is shorter than initialBackoff "
                f"{self.initial_backoff}",
            )
        return self


class ExportRetention(Wire):
    """How long a finished ReportExport is kept, by outcome, from its completion."""

    succeeded: Retained = _field("168h", "1h..8760h")
    failed: Retained = _field("720h", "1h..8760h")


class ReportExportPolicySpec(Wire):
    """Which finished Certifications to export, where, and how hard to try."""

    source: ExportSource
    webhook: ExportWebhook
    retry: ExportRetry = Field(default_factory=ExportRetry)
    retention: ExportRetention = Field(default_factory=ExportRetention)
    suspend: Bool = Field(False, description="Stops new registrations only.")


class ReportExportPolicy(CertifyResource):
    """Exports the report of every matching finished Certification to one webhook."""

    KIND: ClassVar[str] = "ReportExportPolicy"
    SHORT_NAME: ClassVar[str] = "rep"
    PLURAL: ClassVar[str] = "reportexportpolicies"

    spec: ReportExportPolicySpec


class SourceRef(Wire):
    """The Certification whose report is delivered."""

    kind: Literal["Certification"] = "Certification"
    namespace: str = Field(min_length=1)
    name: str = Field(min_length=1)
    uid: str = Field(min_length=1)


class PolicyRef(Wire):
    """The policy (same namespace) that registered the export, as it was then."""

    name: str = Field(min_length=1)
    uid: str = Field(min_length=1)
    generation: Int64 = Field(ge=0)


FROZEN: dict[str, Any] = {
    "rule": (
        "self.sourceRef == oldSelf.sourceRef && self.policyRef == oldSelf.policyRef"
        " && self.webhook == oldSelf.webhook && self.retry == oldSelf.retry"
        " && self.retention == oldSelf.retention && self.clusterID == oldSelf.clusterID"
        " && self.reportID == oldSelf.reportID"
    ),
    "message": "spec is frozen after creation: only cancel and retryNonce may change",
}


class ReportExportSpec(Wire):
    """One delivery, frozen at registration; ``cancel`` stops it, a new ``retryNonce`` gives a
    Failed one a new cycle of attempts (same payload, key and attempt count)."""

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-validations": [dict(FROZEN)]})

    source_ref: SourceRef
    policy_ref: PolicyRef
    webhook: ExportWebhook
    retry: ExportRetry
    retention: ExportRetention
    cluster_id: str = Field(alias="clusterID", description="The kube-system namespace's UID.")
    report_id: str = Field(
        alias="reportID", min_length=1, description="The idempotency key of every attempt."
    )
    cancel: Bool = False
    retry_nonce: str | None = None


class ExportPhase(StrEnum):
    """Where a delivery stands (docs/certify.md, "Report export")."""

    SNAPSHOTTING = "Snapshotting"  # copying the report into the snapshot ConfigMap
    PENDING = "Pending"  # snapshot persisted; waiting for nextAttemptTime
    DELIVERING = "Delivering"  # an attempt is counted and in flight
    SUCCEEDED = "Succeeded"  # the receiver answered 2xx
    FAILED = "Failed"  # refused, exhausted, cancelled or impossible


TERMINAL_PHASES = frozenset({ExportPhase.SUCCEEDED, ExportPhase.FAILED})


class SnapshotRef(Wire):
    """The ConfigMap (owned by the export) holding the exact bytes every attempt sends."""

    name: str
    key: str


class ReportExportStatus(Wire):
    """The delivery's checkpoint: every write is one step, so a restart resumes from it."""

    phase: ExportPhase | None = None
    reason: str | None = None
    message: str | None = None
    report_id: str | None = Field(None, alias="reportID")
    result: str | None = Field(None, description="The Certification's outcome the report holds.")
    snapshot_ref: SnapshotRef | None = None
    sha256: str | None = None
    payload_bytes: Int64 | None = None
    attempts: Int32 | None = None
    cycle_attempts: Int32 | None = None
    last_http_status: Int32 | None = Field(None, alias="lastHTTPStatus")
    snapshot_started_at: datetime | None = None
    cycle_started_at: datetime | None = None
    first_attempt_time: datetime | None = None
    last_attempt_time: datetime | None = None
    next_attempt_time: datetime | None = None
    completion_time: datetime | None = None
    observed_retry_nonce: str | None = None
    conditions: list[Condition] | None = None


class ReportExport(CertifyResource):
    """One durable delivery of one Certification report under one policy."""

    KIND: ClassVar[str] = "ReportExport"
    SHORT_NAME: ClassVar[str] = "rex"
    PLURAL: ClassVar[str] = "reportexports"

    spec: ReportExportSpec
    status: ReportExportStatus | None = None


PRINTER_COLUMNS: dict[str, list[dict[str, Any]]] = {
    "ReportExportPolicy": [
        {"name": "URL", "type": "string", "jsonPath": ".spec.webhook.url"},
        {"name": "Suspend", "type": "boolean", "jsonPath": ".spec.suspend"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ],
    "ReportExport": [
        {"name": "Certification", "type": "string", "jsonPath": ".spec.sourceRef.name"},
        {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
        {"name": "Attempts", "type": "integer", "jsonPath": ".status.attempts"},
        {"name": "HTTP", "type": "integer", "jsonPath": ".status.lastHTTPStatus"},
        {"name": "Next", "type": "date", "jsonPath": ".status.nextAttemptTime", "priority": 1},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ],
}
