"""Test support for the kubernetes substrate: Node objects, and the stand-in's request journal."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lightkube import Client

from glimmer.backends.kubernetes.resources import NODES

Journal = Callable[[], list[dict[str, Any]]]


def create_nodes(client: Client, *names: str, **labels: str) -> None:
    """Node objects named ``names``, each labelled with its hostname and ``labels``."""
    for name in names:
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {"kubernetes.io/hostname": name, **labels},
            },
        }
        client.create(NODES.from_dict(node))


def read_journal(path: Path) -> list[dict[str, Any]]:
    """The stand-in's request journal: one entry per request (method, path, query)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
