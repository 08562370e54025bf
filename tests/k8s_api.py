"""Pytest fixtures for the Kubernetes API stand-in (tools/k8s_standin), over real HTTP.

``k8s_api``: a fresh, empty API for each test, glimmer CRDs registered, served from a thread of
its own (so sync clients, kubectl and kopf in a thread all reach it), with a kubeconfig, a pod
log folder and a request journal in the test's tmp_path. ``kubectl``: the real kubectl (Debian's
1.20, installed by tests/tools/ensure_kubectl.sh) with KUBECONFIG pointing at it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tools.k8s_standin.background import api_in_thread
from tools.k8s_standin.kubeconfig import write_kubeconfig

REPO = Path(__file__).resolve().parent.parent
KUBECTL = REPO / "tests" / "tools" / "bin" / "kubectl"


@dataclass(frozen=True)
class K8sAPI:
    url: str
    kubeconfig: Path
    log_dir: Path
    journal: Path


Kubectl = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def k8s_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[K8sAPI]:
    log_dir = tmp_path / "k8s-logs"
    log_dir.mkdir()
    journal = tmp_path / "k8s-journal.jsonl"
    with api_in_thread(log_dir=log_dir, journal=journal) as running:
        config = write_kubeconfig(tmp_path / "kubeconfig", running.url)
        # Clients that read $KUBECONFIG (lightkube, kopf, kubectl) find the stand-in.
        monkeypatch.setenv("KUBECONFIG", str(config))
        yield K8sAPI(url=running.url, kubeconfig=config, log_dir=log_dir, journal=journal)


def run_kubectl(
    api: K8sAPI, *args: str, input: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``kubectl ARGS`` against ``api``; never raises on a non-zero exit (tests assert on it)."""
    if not KUBECTL.is_file():
        pytest.fail(
            f"kubectl is missing at {KUBECTL}: run tests/tools/ensure_kubectl.sh (make tools)"
        )
    env = {**os.environ, "KUBECONFIG": str(api.kubeconfig), "HOME": str(api.kubeconfig.parent)}
    return subprocess.run(
        [str(KUBECTL), *args],
        input=input,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def kubectl(k8s_api: K8sAPI) -> Kubectl:
    def call(
        *args: str, input: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        return run_kubectl(k8s_api, *args, input=input, timeout=timeout)

    return call
