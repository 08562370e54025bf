"""Fixtures of the cluster substrate's certification tests: an API stand-in (no kubelet) with
the certification kinds, a lightkube client of it, and plain HTTP beside it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from lightkube import Client

from glimmer.backends.kubernetes.client import connect
from tests.backends.kubernetes.certify.standin_crds import crd_dirs
from tools.k8s_standin.background import api_in_thread
from tools.k8s_standin.kubeconfig import write_kubeconfig

NS = "default"


@dataclass(frozen=True)
class Api:
    http: httpx.Client
    client: Client


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    with api_in_thread(crd_dirs=crd_dirs(tmp_path)) as running:
        config = write_kubeconfig(tmp_path / "kubeconfig", running.url, NS)
        with httpx.Client(base_url=running.url, timeout=30) as http:
            yield Api(http, connect(config))
