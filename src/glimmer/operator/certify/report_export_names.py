"""What the report-export controllers name once: the two kinds' resources, the deterministic
name of a policy's export of one Certification, the snapshot ConfigMap and the labels.

An export's name is a pure function of the policy's name and the Certification's UID, so a
policy controller that restarts between deciding and creating creates the same name again and
gets AlreadyExists, never a second export of the same report.
"""

from __future__ import annotations

import hashlib
from typing import Final

from lightkube.generic_resource import create_namespaced_resource

from glimmer.api.certify.labels import CERTIFY_GROUP
from glimmer.backends.kubernetes.certify.resources import VERSION
from glimmer.certify.catalog.naming import NAME_MAX, truncate

POLICIES = create_namespaced_resource(
    CERTIFY_GROUP, VERSION, "ReportExportPolicy", "reportexportpolicies"
)
EXPORTS = create_namespaced_resource(CERTIFY_GROUP, VERSION, "ReportExport", "reportexports")

POLICY_LABEL: Final = f"{CERTIFY_GROUP}/report-export-policy"
CERTIFICATION_LABEL: Final = f"{CERTIFY_GROUP}/certification"
SOURCE_NAMESPACE_LABEL: Final = f"{CERTIFY_GROUP}/certification-namespace"
SHA256_ANNOTATION: Final = f"{CERTIFY_GROUP}/sha256"
SNAPSHOT_KEY: Final = "report.json"
IDEMPOTENCY_HEADER: Final = "Idempotency-Key"

_HASH = 16  # hex characters of the (policy, certification) hash: 64 bits, no practical clash
_POLICY_PART = NAME_MAX - _HASH - 1


def export_name(policy: str, certification_uid: str) -> str:
    """The one ReportExport ``policy`` makes for the Certification of ``certification_uid``."""
    digest = hashlib.sha256(f"{policy}\n{certification_uid}".encode()).hexdigest()[:_HASH]
    head = policy[:_POLICY_PART].rstrip("-.")
    return f"{head}-{digest}"


def snapshot_name(export: str) -> str:
    """The ConfigMap holding the bytes ``export`` delivers."""
    return truncate(f"{export}-snapshot", NAME_MAX)
