"""The API calls the Certification, Workflow and WorkloadRun controllers make, on plain JSON.

The controllers read and write whole objects — the certification kinds, a Workflow's
dependencies of any kind the catalog names (TrainingRuntime, ConfigMap, PVC, claims), the
node-result ConfigMaps — and keep every field they do not own as the cluster stored it, so
everything here is a dict with the API path attached (a lightkube generic resource), never a
typed model. Errors come back as the engine's (:mod:`glimmer.backends.kubernetes.errors`): a
404 is ``NotFound`` and is turned into None/False here, an AlreadyExists is raised for the
caller's collision rules, a 409 otherwise is a ``Conflict`` the next reconcile retries.

A delete can carry a UID precondition (§3.1, §3.2 deletion: "with a UID precondition"), which
lightkube's ``delete`` cannot send; :meth:`Cluster.delete` builds the request through
lightkube's own request builder and adds the DeleteOptions body.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from lightkube import ApiError, Client
from lightkube.core import resource as res
from lightkube.generic_resource import (
    GenericGlobalResource,
    GenericGlobalStatus,
    GenericNamespacedResource,
    GenericNamespacedStatus,
    create_api_info,
)
from lightkube.types import PatchType

from glimmer.backends.kubernetes.errors import api_call, code_of
from glimmer.backends.kubernetes.events import NORMAL, WARNING, Involved, post_event
from glimmer.backends.kubernetes.resources import NODES, as_dict
from glimmer.engine.backend import BackendError, NotFound

Obj = dict[str, Any]
Kind = Any  # a lightkube resource class (generic: its attributes are built at runtime)

# The plurals of the kinds a Workflow creates or reads (§3.4: "RBAC is enumerated, not
# wildcarded"); a kind outside it is pluralised the way the API server's RESTMapper guesses.
PLURALS: Mapping[str, str] = {
    "ConfigMap": "configmaps",
    "PersistentVolumeClaim": "persistentvolumeclaims",
    "PersistentVolume": "persistentvolumes",
    "Secret": "secrets",
    "Service": "services",
    "Namespace": "namespaces",
    "TrainingRuntime": "trainingruntimes",
    "ClusterTrainingRuntime": "clustertrainingruntimes",
    "TrainJob": "trainjobs",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "ComputeDomain": "computedomains",
    "Certification": "certifications",
    "Workflow": "workflows",
    "Job": "jobs",
    "WorkloadRun": "workloadruns",
}
CLUSTER_SCOPED = frozenset({"Namespace", "PersistentVolume", "Node"})


def plural_of(kind: str) -> str:
    if kind in PLURALS:
        return PLURALS[kind]
    low = kind.lower()
    return f"{low}es" if low.endswith("s") else f"{low}s"


def cluster_scoped(kind: str) -> bool:
    """Kinds without a namespace: the catalog's ``Cluster*`` kinds and the core ones."""
    return kind.startswith("Cluster") or kind in CLUSTER_SCOPED


@functools.cache
def resource_for(api_version: str, kind: str) -> Kind:
    """The generic resource of ``kind`` in ``api_version`` (``v1`` or ``group/version``), with
    its status subresource; one class per kind, not registered with lightkube (its typed
    models stay what they are everywhere else)."""
    group, _, version = api_version.rpartition("/")
    info = create_api_info(group, version, kind, plural_of(kind))
    status_info = res.ApiInfo(
        resource=info.resource,
        parent=info.resource,
        plural=info.plural,
        verbs=["get", "patch", "put"],
        action="status",
    )
    if cluster_scoped(kind):
        status = type(f"Certify{kind}Status", (GenericGlobalStatus,), {"_api_info": status_info})
        base: type = GenericGlobalResource
    else:
        status = type(
            f"Certify{kind}Status", (GenericNamespacedStatus,), {"_api_info": status_info}
        )
        base = GenericNamespacedResource
    made: type = type(f"Certify{kind}", (base,), {"_api_info": info, "Status": status})
    return made


def meta(obj: Mapping[str, Any]) -> Obj:
    found: Obj = obj.get("metadata") or {}
    return found


def kind_of(obj: Mapping[str, Any]) -> Kind:
    return resource_for(str(obj.get("apiVersion") or "v1"), str(obj.get("kind") or ""))


class Rejected(BackendError):
    """The API refused a write as invalid (400, 403 or 422): retrying the same body cannot
    help, so the caller fails what it was creating."""


REJECTING = frozenset({400, 403, 422})


class Cluster:
    """One client's calls, as the controllers need them."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def get(self, kind: Kind, name: str, namespace: str | None) -> Obj | None:
        """The object, read live (never a cache); None when the API says 404."""
        try:
            with api_call(f"get {kind.__name__} {namespace}/{name}"):
                found = self.client.get(kind, name, namespace=namespace)
        except NotFound:
            return None
        return as_dict(found)

    def items(
        self, kind: Kind, namespace: str | None, labels: Mapping[str, str] | None = None
    ) -> list[Obj]:
        with api_call(f"list {kind.__name__} in {namespace}"):
            found = self.client.list(kind, namespace=namespace, labels=dict(labels or {}))
            return [as_dict(o) for o in found]

    def create(self, kind: Kind, body: Mapping[str, Any], namespace: str | None) -> Obj:
        """The created object; ``AlreadyExists`` when the name is taken."""
        name = meta(body).get("name")
        try:
            with api_call(f"create {kind.__name__} {namespace}/{name}"):
                made = self.client.create(kind.from_dict(dict(body)), namespace=namespace)
        except BackendError as e:
            cause = e.__cause__
            if isinstance(cause, ApiError) and code_of(cause) in REJECTING:
                raise Rejected(str(e)) from cause
            raise
        return as_dict(made)

    def replace(self, kind: Kind, body: Mapping[str, Any]) -> Obj:
        """Replace the whole object; its resourceVersion is the precondition."""
        m = meta(body)
        with api_call(f"replace {kind.__name__} {m.get('namespace')}/{m.get('name')}"):
            made = self.client.replace(kind.from_dict(dict(body)))
        return as_dict(made)

    def patch(self, kind: Kind, name: str, namespace: str | None, patch: Mapping[str, Any]) -> Obj:
        """A JSON merge patch of ``name``; a ``metadata.resourceVersion`` in it is the
        precondition (a Conflict over a stale read)."""
        with api_call(f"patch {kind.__name__} {namespace}/{name}"):
            made = self.client.patch(
                kind, name, dict(patch), namespace=namespace, patch_type=PatchType.MERGE
            )
        return as_dict(made)

    def write_status(self, kind: Kind, body: Mapping[str, Any]) -> Obj:
        """Replace the status subresource; the body's resourceVersion is the precondition, so a
        write over a stale read is a Conflict and the next reconcile starts from a fresh one."""
        m = meta(body)
        what = f"write the status of {kind.__name__} {m.get('namespace')}/{m.get('name')}"
        with api_call(what):
            made = self.client.replace(
                kind.Status.from_dict(dict(body)), m["name"], namespace=m.get("namespace")
            )
        return as_dict(made)

    def delete(self, kind: Kind, name: str, namespace: str | None, uid: str = "") -> bool:
        """Delete ``name`` (only the object of ``uid`` when given); False when it is gone
        already. A UID that no longer matches is a Conflict: the name now holds another object,
        which is left alone."""
        generic = self.client._client  # lightkube's request builder; see the module docstring
        try:
            with api_call(f"delete {kind.__name__} {namespace}/{name}"):
                request = generic.prepare_request(
                    "delete", res=kind, name=name, namespace=namespace
                )
                if uid:
                    request.data = {
                        "kind": "DeleteOptions",
                        "apiVersion": "v1",
                        "preconditions": {"uid": uid},
                    }
                response = generic.send(generic.build_adapter_request(request))
                generic.handle_response("delete", response, request)
        except NotFound:
            return False
        return True

    def nodes(self) -> list[Obj]:
        """Every Node, sorted by name."""
        with api_call("list nodes"):
            found = [as_dict(n) for n in self.client.list(NODES)]
        return sorted(found, key=lambda n: str(meta(n).get("name") or ""))

    def event(
        self, obj: Mapping[str, Any], reason: str, message: str, *, warning: bool, at: datetime
    ) -> None:
        """A Normal or Warning Event about ``obj``; a failure to post decides nothing."""
        m = meta(obj)
        involved = Involved(
            str(obj.get("apiVersion") or ""),
            str(obj.get("kind") or ""),
            str(m.get("namespace") or "default"),
            str(m.get("name") or ""),
            str(m.get("uid") or ""),
        )
        with contextlib.suppress(BackendError):
            post_event(
                self.client, involved, reason, message, kind=WARNING if warning else NORMAL, at=at
            )
