"""Object metadata and the envelope every resource shares (apiVersion, kind, metadata).

Metadata is a light model: the fields glimmer reads are typed; any other key the cluster adds
(managedFields, a field from a newer Kubernetes) is kept as it came rather than dropped.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, Field, model_validator

from glimmer.api.base import Bool, Carried, Int64, Wire

API_GROUP = "burnin.glimmer.ai"
API_VERSION = f"{API_GROUP}/v1alpha1"

# A DNS-1123 subdomain: what Kubernetes accepts as the name of most objects.
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_SUBDOMAIN = re.compile(DNS_SUBDOMAIN)


OBJECT_NAME_CHARS = 253


def object_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a Kubernetes object (a DNS subdomain), or None."""
    if len(name) > OBJECT_NAME_CHARS or not _SUBDOMAIN.match(name):
        return (
            f"{name!r} is not a valid object name (lower-case letters, digits, '-' and '.', "
            f"starting and ending with a letter or digit, at most {OBJECT_NAME_CHARS})"
        )
    return None


def _object_name(name: str) -> str:
    problem = object_name_problem(name)
    if problem is not None:
        raise ValueError(problem)
    return name


ObjectName = Annotated[
    str,
    AfterValidator(_object_name),
    Field(max_length=OBJECT_NAME_CHARS, json_schema_extra={"pattern": DNS_SUBDOMAIN}),
]


# A namespace is an RFC 1123 label. Beyond Kubernetes' own rule this matters here because a
# namespace becomes a folder on this host (a ConfigMap sink's configmaps/<namespace>/<name>):
# only a real namespace name keeps ``../..`` from leading outside the state folder.
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_LABEL = re.compile(DNS_LABEL)
NAMESPACE_CHARS = 63


def _namespace(name: str) -> str:
    if len(name) > NAMESPACE_CHARS or not _LABEL.match(name):
        raise ValueError(
            f"{name!r} is not a valid namespace (lower-case letters, digits and '-', "
            f"starting and ending with a letter or digit, at most {NAMESPACE_CHARS})"
        )
    return name


NamespaceName = Annotated[
    str,
    AfterValidator(_namespace),
    Field(max_length=NAMESPACE_CHARS, json_schema_extra={"pattern": DNS_LABEL}),
]


class OwnerReference(Carried):
    """The object that owns this one (a schedule owns the runs it created)."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: Bool | None = None
    block_owner_deletion: Bool | None = None


class ObjectMeta(Carried):
    """``metadata`` of an object. A name (or generateName) is required."""

    name: ObjectName | None = None
    generate_name: str | None = None
    namespace: NamespaceName | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: Int64 | None = None
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    deletion_grace_period_seconds: Int64 | None = None
    finalizers: list[str] | None = None
    owner_references: list[OwnerReference] | None = None
    managed_fields: list[dict[str, Any]] | None = None

    @model_validator(mode="after")
    def _named(self) -> ObjectMeta:
        if not self.name and not self.generate_name:
            raise ValueError("an object needs metadata.name (or metadata.generateName)")
        return self


class Resource(Wire):
    """The envelope of every burn-in resource. Subclasses pin ``kind`` and add spec/status."""

    API_VERSION: ClassVar[str] = API_VERSION  # the group/version a subclass family belongs to
    KIND: ClassVar[str] = ""
    SHORT_NAME: ClassVar[str] = ""
    PLURAL: ClassVar[str] = ""
    NAMESPACED: ClassVar[bool] = True

    api_version: str
    kind: str
    metadata: ObjectMeta

    @model_validator(mode="after")
    def _envelope(self) -> Resource:
        if self.api_version != self.API_VERSION:
            raise ValueError(f"apiVersion must be {self.API_VERSION}")
        if self.kind != self.KIND:
            raise ValueError(f"kind must be {self.KIND}")
        return self

    @property
    def name(self) -> str:
        """The object's name ("" when only generateName is set)."""
        return self.metadata.name or ""

    @property
    def ref(self) -> str:
        """``Kind/name``, the way errors and listings name an object."""
        return f"{self.kind}/{self.name}"
