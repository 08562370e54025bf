"""The operator refuses to start, exit 2 with one line and no traceback, when it cannot know
where NodeFingerprints live (§1.6), and serves ``/metrics`` only where it is told to."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.operator.conftest import REPO, Operator, eventually
from tools.k8s_standin.cluster import StandInCluster


def test_serving_every_namespace_with_no_namespace_for_fingerprints_refuses_to_start(
    cluster: StandInCluster,
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "POD_NAMESPACE"}
    done = subprocess.run(
        [sys.executable, "-m", "glimmer.operator", "run", "--kubeconfig",
         str(cluster.kubeconfig), "--all-namespaces", "--standalone"],
        capture_output=True, text=True, timeout=120, env=env, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "NodeFingerprints need a namespace: set POD_NAMESPACE" in done.stderr
    assert "Traceback" not in done.stderr


def test_metrics_are_served_at_the_address_given(
    cluster: StandInCluster, operators: Callable[..., Operator], tmp_path: Path
) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    op = operators("--standalone", "--namespace", "default", "--metrics", f"127.0.0.1:{port}")
    op.start()
    op.wait_started()

    def scraped() -> str:
        try:
            got = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2)
        except httpx.HTTPError:
            return ""
        return got.text if got.status_code == 200 else ""

    eventually(lambda: scraped() or None, "/metrics answering", timeout=60)
    assert op.stop() == 0, op.output()


def test_a_bad_metrics_address_is_bad_input(cluster: StandInCluster) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "glimmer.operator", "run", "--kubeconfig",
         str(cluster.kubeconfig), "--metrics", "nowhere"],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--metrics 'nowhere' must be HOST:PORT" in done.stderr
