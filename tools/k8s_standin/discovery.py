"""The discovery documents clients read before they talk to a resource.

Core answers ``groupVersion: "v1"`` (kubectl cannot find ``pod`` otherwise), ``/api`` carries
``serverAddressByClientCIDRs`` (the official client's models demand it), and every path is
served with or without a trailing slash (kr8s asks for ``/version/``).
"""

from __future__ import annotations

from typing import Any

from tools.k8s_standin.resources import Registry

SERVER_VERSION = {
    "major": "1",
    "minor": "30",
    "gitVersion": "v1.30.0-glimmer-standin",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-12-01T00:00:00Z",
    "goVersion": "go1.22.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def api_versions() -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def api_groups(registry: Registry) -> dict[str, Any]:
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group(g, vs) for g, vs in registry.groups().items()],
    }


def api_group(registry: Registry, name: str) -> dict[str, Any] | None:
    versions = registry.groups().get(name)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(name, versions)}


def resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    types = registry.in_group_version(group, version)
    if not types:
        return None
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": [
            entry for t in sorted(types, key=lambda t: t.plural) for entry in t.discovery()
        ],
    }


def root_paths(registry: Registry) -> dict[str, Any]:
    paths = {"/api", "/api/v1", "/apis", "/version", "/healthz", "/livez", "/readyz"}
    for group, versions in registry.groups().items():
        paths.add(f"/apis/{group}")
        paths.update(f"/apis/{group}/{v}" for v in versions)
    return {"paths": sorted(paths)}
