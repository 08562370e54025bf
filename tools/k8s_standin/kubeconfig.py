"""A kubeconfig pointing at the stand-in: what kubectl, lightkube and kopf log in with."""

from __future__ import annotations

from pathlib import Path

import yaml


def kubeconfig(
    url: str, namespace: str = "default", name: str = "glimmer-standin"
) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": url}}],
        # A token user: clients that insist on a user (lightkube's async client) get one; the
        # stand-in does no authentication.
        "users": [{"name": name, "user": {"token": "glimmer-standin"}}],
        "contexts": [
            {"name": name, "context": {"cluster": name, "user": name, "namespace": namespace}}
        ],
        "current-context": name,
        "preferences": {},
    }


def write_kubeconfig(path: Path, url: str, namespace: str = "default") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(kubeconfig(url, namespace), sort_keys=False))
    return path
