"""The resource types the stand-in serves: the built-in ones a burn-in touches, and every CRD.

A resource type is keyed by ``(group, plural)``; each CRD serves one version here (the glimmer
CRDs have one), so the version is carried, not part of the key. A CRD applied through the API
registers its type at once — discovery, LIST and WATCH follow it, as on a real API server.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

ResourceKey = tuple[str, str]  # (group, plural); the core group is ""

_CRUD = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
_SUB = ("get", "patch", "update")


@dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: frozenset[str] = frozenset()
    # The CRD version entry (schema, printer columns) when the type comes from a CRD.
    crd_version: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)

    @property
    def key(self) -> ResourceKey:
        return (self.group, self.plural)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_version(self) -> str:
        return self.api_version

    @property
    def qualified(self) -> str:
        """``burninruns.burnin.glimmer.ai`` or ``pods``: how the API server names it in errors."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    def discovery(self) -> list[dict[str, Any]]:
        """The APIResource entries of this type and its subresources."""
        main = {
            "name": self.plural,
            "singularName": self.singular or self.kind.lower(),
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": list(_CRUD),
        }
        if self.short_names:
            main["shortNames"] = list(self.short_names)
        if self.categories:
            main["categories"] = list(self.categories)
        entries = [main]
        for sub in sorted(self.subresources):
            verbs = {"log": ["get"], "binding": ["create"]}.get(sub, list(_SUB))
            kind = {"log": "Pod", "binding": "Binding"}.get(sub, self.kind)
            entries.append(
                {
                    "name": f"{self.plural}/{sub}",
                    "singularName": "",
                    "namespaced": self.namespaced,
                    "kind": kind,
                    "verbs": verbs,
                }
            )
        return entries


def _core(
    plural: str,
    kind: str,
    namespaced: bool,
    *subs: str,
    short: Iterable[str] = (),
    categories: Iterable[str] = (),
) -> ResourceType:
    return ResourceType(
        group="",
        version="v1",
        plural=plural,
        kind=kind,
        namespaced=namespaced,
        singular=kind.lower(),
        short_names=tuple(short),
        categories=tuple(categories),
        subresources=frozenset(subs),
    )


def _grouped(
    group: str, version: str, plural: str, kind: str, namespaced: bool, *subs: str
) -> ResourceType:
    return ResourceType(
        group=group,
        version=version,
        plural=plural,
        kind=kind,
        namespaced=namespaced,
        singular=kind.lower(),
        subresources=frozenset(subs),
    )


# What an operator, a kubelet and kubectl touch on a cluster running burn-ins.
BUILTIN: tuple[ResourceType, ...] = (
    _core("namespaces", "Namespace", False, "status", short=("ns",)),
    _core("nodes", "Node", False, "status", short=("no",)),
    # "all" is the category `kubectl get all` expands to.
    _core("pods", "Pod", True, "status", "log", "binding", short=("po",), categories=("all",)),
    _core("services", "Service", True, "status", short=("svc",), categories=("all",)),
    _core("endpoints", "Endpoints", True, short=("ep",)),
    _core("configmaps", "ConfigMap", True, short=("cm",)),
    _core("secrets", "Secret", True),
    _core("serviceaccounts", "ServiceAccount", True, short=("sa",)),
    _core("events", "Event", True, short=("ev",)),
    _grouped("events.k8s.io", "v1", "events", "Event", True),
    _grouped("coordination.k8s.io", "v1", "leases", "Lease", True),
    ResourceType(
        group="apiextensions.k8s.io",
        version="v1",
        plural="customresourcedefinitions",
        kind="CustomResourceDefinition",
        namespaced=False,
        singular="customresourcedefinition",
        short_names=("crd", "crds"),
        subresources=frozenset({"status"}),
    ),
    _grouped("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    _grouped("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
    _grouped("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
    _grouped("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
    ResourceType(
        group="apps",
        version="v1",
        plural="deployments",
        kind="Deployment",
        namespaced=True,
        singular="deployment",
        short_names=("deploy",),
        categories=("all",),
        subresources=frozenset({"status"}),
    ),
    _grouped("apps", "v1", "daemonsets", "DaemonSet", True, "status"),
    _grouped("apps", "v1", "statefulsets", "StatefulSet", True, "status"),
    _grouped("batch", "v1", "jobs", "Job", True, "status"),
    _grouped("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True),
    _grouped("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False),
    _core("resourcequotas", "ResourceQuota", True, "status", short=("quota",)),
    _core("limitranges", "LimitRange", True, short=("limits",)),
    _core("persistentvolumeclaims", "PersistentVolumeClaim", True, "status", short=("pvc",)),
    _core("persistentvolumes", "PersistentVolume", False, "status", short=("pv",)),
    _grouped("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, "status"),
)

CRD_KEY: ResourceKey = ("apiextensions.k8s.io", "customresourcedefinitions")


def from_crd(crd: Mapping[str, Any]) -> ResourceType:
    """The type a CustomResourceDefinition declares (its storage version, else its first)."""
    spec = crd["spec"]
    names = spec["names"]
    versions = [v for v in spec.get("versions", []) if v.get("served", True)]
    if not versions:
        raise ValueError(f"CRD {crd.get('metadata', {}).get('name')} serves no version")
    chosen = next((v for v in versions if v.get("storage")), versions[0])
    return ResourceType(
        group=spec["group"],
        version=chosen["name"],
        plural=names["plural"],
        kind=names["kind"],
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        singular=names.get("singular", names["kind"].lower()),
        short_names=tuple(names.get("shortNames", ())),
        categories=tuple(names.get("categories", ())),
        subresources=frozenset(chosen.get("subresources", {}) or {}),
        crd_version=chosen,
    )


class Registry:
    """The served types by key, by group/version and by kind, kept consistent on change."""

    def __init__(self, types: Iterable[ResourceType] = BUILTIN) -> None:
        self._types: dict[ResourceKey, ResourceType] = {}
        for rtype in types:
            self.add(rtype)

    def add(self, rtype: ResourceType) -> None:
        self._types[rtype.key] = rtype

    def remove(self, key: ResourceKey) -> None:
        self._types.pop(key, None)

    def get(self, group: str, plural: str) -> ResourceType | None:
        return self._types.get((group, plural))

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        rtype = self._types.get((group, plural))
        return rtype if rtype is not None and rtype.version == version else None

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        return [t for t in self._types.values() if t.group == group and t.version == version]

    def groups(self) -> dict[str, list[str]]:
        """Every non-core group and its versions, in a stable order."""
        out: dict[str, list[str]] = {}
        for rtype in sorted(self._types.values(), key=lambda t: (t.group, t.version)):
            if rtype.group and rtype.version not in out.setdefault(rtype.group, []):
                out[rtype.group].append(rtype.version)
        return out

    def __iter__(self) -> Any:
        return iter(list(self._types.values()))
