"""What ``glimmer certify`` reads and writes on a cluster (specs/certify.md §8): the Nodes, a
Certification (create, read, delete), the Workflows it made, and ConfigMaps (its report).

Plain JSON in and out, every call's failure as the engine's errors (NotFound for a 404 only), so
the CLI formats and decides while lightkube stays in the substrate. The controllers in the
cluster do the work; this is the client side of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lightkube import Client
from lightkube.resources.core_v1 import ConfigMap

from glimmer.backends.kubernetes.certify.nodes import list_node_objects
from glimmer.backends.kubernetes.certify.resources import CERTIFICATIONS, WORKFLOWS
from glimmer.backends.kubernetes.client import connect
from glimmer.backends.kubernetes.errors import api_call
from glimmer.backends.kubernetes.resources import as_dict
from glimmer.certify.platform.vocab import CERTIFICATION_LABEL
from glimmer.engine.backend import NotFound

Obj = dict[str, Any]


class CertifyCluster:
    """One cluster, through one client."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def nodes(self) -> list[Obj]:
        """Every Node, sorted by name."""
        return list_node_objects(self.client)

    def certification(self, namespace: str, name: str) -> Obj | None:
        """The Certification, or None when there is none of that name (a 404, nothing else)."""
        try:
            with api_call(f"get Certification {namespace}/{name}"):
                return as_dict(self.client.get(CERTIFICATIONS, name, namespace=namespace))
        except NotFound:
            return None

    def certifications(self, namespace: str) -> list[Obj]:
        """Every Certification of the namespace, sorted by name."""
        with api_call(f"list Certifications in {namespace}"):
            listed = [as_dict(c) for c in self.client.list(CERTIFICATIONS, namespace=namespace)]
        return sorted(listed, key=lambda c: str((c.get("metadata") or {}).get("name") or ""))

    def create_certification(self, body: Obj) -> Obj:
        """Create the Certification ``body`` describes (its namespace in its metadata)."""
        meta = body.get("metadata") or {}
        namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name"))
        with api_call(f"create Certification {namespace}/{name}"):
            made = self.client.create(CERTIFICATIONS.from_dict(body), namespace=namespace)
        return as_dict(made)

    def delete_certification(self, namespace: str, name: str) -> None:
        """Delete the Certification (NotFound when there is none); its controller deletes
        what it made."""
        with api_call(f"delete Certification {namespace}/{name}"):
            self.client.delete(CERTIFICATIONS, name, namespace=namespace)

    def workflows_of(self, namespace: str, certification: str) -> list[Obj]:
        """The Workflows labelled as the Certification's, sorted by name."""
        with api_call(f"list Workflows of Certification {namespace}/{certification}"):
            found = self.client.list(
                WORKFLOWS, namespace=namespace, labels={CERTIFICATION_LABEL: certification}
            )
            listed = [as_dict(w) for w in found]
        return sorted(listed, key=lambda w: str((w.get("metadata") or {}).get("name") or ""))

    def config_map(self, namespace: str, name: str) -> Obj | None:
        """A ConfigMap, or None when there is none of that name."""
        try:
            with api_call(f"get ConfigMap {namespace}/{name}"):
                return as_dict(self.client.get(ConfigMap, name, namespace=namespace))
        except NotFound:
            return None


def open_cluster(kubeconfig: Path | None = None, context: str | None = None) -> CertifyCluster:
    """The cluster ``kubeconfig`` names (None: $KUBECONFIG, the in-cluster service account, or
    ~/.kube/config). A kubeconfig lightkube cannot read raises its own error, for the caller
    to name the file."""
    return CertifyCluster(connect(kubeconfig, context=context))
