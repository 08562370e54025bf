"""Test support for the kubernetes substrate: Node objects, and the stand-in's request journal."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
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


class FastClock:
    """``scale`` engine seconds per host second from now, host times mapped onto it (the
    cluster's timestamps have whole seconds: a scale of 100 reads a pod up to 100 engine
    seconds old at birth, well inside any test's window)."""

    def __init__(self, scale: float = 100.0) -> None:
        self.scale = scale
        self.origin = datetime.now(UTC)

    def from_host(self, moment: datetime) -> datetime:
        return self.origin + (moment - self.origin) * self.scale

    def now(self) -> datetime:
        return self.from_host(datetime.now(UTC))

    def host_seconds(self, seconds: float) -> float:
        return seconds / self.scale


def drive_on_standin(
    backend: Any, driver: Any, name: str, *, clock: FastClock, max_passes: int = 500
) -> Any:
    """Reconcile ``default/name`` until it settles, the pods stepped by ``driver`` while the
    drive sleeps; the final run."""
    from glimmer.backends.common.drivers import drive_wall_clock
    from glimmer.engine.reconciler import Engine

    return drive_wall_clock(
        backend,
        Engine(backend),
        "default",
        name,
        poll=0.05 * clock.scale,
        sleep=lambda seconds: driver.sleep(seconds / clock.scale),
        max_passes=max_passes,
    )
