"""``tools/k8s-standin up|down``: a stand-in cluster started by hand, reached over HTTP, and
stopped by signal or by ``down`` with every namespace gone (root, as CI is)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lightkube import Client, KubeConfig
from lightkube.resources.core_v1 import Node, Pod

from tests.k8s_api import KUBECTL
from tools.k8s_standin import node_netns

LAUNCHER = Path(__file__).resolve().parents[3] / "tools" / "k8s-standin"


def _wait_state(folder: Path, proc: subprocess.Popen[str]) -> dict[str, Any]:
    end = time.monotonic() + 60
    while time.monotonic() < end:
        if proc.poll() is not None:
            pytest.fail(f"the launcher exited {proc.returncode}: {proc.communicate()}")
        try:
            return dict(json.loads((folder / "standin.json").read_text()))
        except (OSError, ValueError):
            time.sleep(0.05)
    pytest.fail("the launcher wrote no standin.json within 60 s")


@pytest.fixture
def launched(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], dict[str, Any], Path]]:
    folder = tmp_path / "cluster"
    proc = subprocess.Popen(
        [str(LAUNCHER), "up", "--nodes", "2", "--dir", str(folder)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    state: dict[str, Any] | None = None
    try:
        state = _wait_state(folder, proc)
        yield proc, state, folder
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        # A test that took it down itself left nothing for another ``down`` (each is a
        # process start: seconds of imports on a busy machine); whatever is left is taken down.
        if state is None or (folder / "standin.json").exists() or _prefixed(state["prefix"]):
            subprocess.run([str(LAUNCHER), "down", "--dir", str(folder)], capture_output=True)


def _prefixed(prefix: str) -> list[str]:
    return [n for n in node_netns.namespaces() if n.startswith(f"{prefix}-")]


def test_up_serves_its_nodes_and_runs_a_pod_then_down_stops_it_and_its_namespaces(
    launched: tuple[subprocess.Popen[str], dict[str, Any], Path],
) -> None:
    proc, state, folder = launched
    client = Client(KubeConfig.from_file(folder / "kubeconfig"))
    nodes = {n.metadata.name: n for n in client.list(Node)}  # type: ignore[union-attr]
    assert sorted(nodes) == ["node-1", "node-2"]
    node = nodes["node-1"]
    assert node.metadata is not None and node.status is not None
    labels = node.metadata.labels or {}
    assert labels["kubernetes.io/hostname"] == "node-1"
    assert labels["kubernetes.io/os"] == "linux" and labels["kubernetes.io/arch"]
    addresses = {a.type: a.address for a in node.status.addresses or []}
    assert addresses == {"InternalIP": state["nodes"]["node-1"], "Hostname": "node-1"}
    assert "nvidia.com/gpu" not in (node.status.capacity or {})
    assert {"cpu", "memory"} <= set(node.status.allocatable or {})
    client.create(Pod.from_dict({
        "metadata": {"name": "hello", "namespace": "default"},
        "spec": {"restartPolicy": "Never", "nodeSelector": {"kubernetes.io/hostname": "node-2"},
                 "containers": [{"name": "runner", "image": "x", "command": ["echo", "hi"]}]},
    }))  # fmt: skip
    end = time.monotonic() + 60
    while client.get(Pod, "hello", namespace="default").status.phase != "Succeeded":  # type: ignore[union-attr]
        assert time.monotonic() < end, "the pod did not succeed within 60 s"
        time.sleep(0.05)
    assert "".join(client.log("hello", namespace="default")) == "hi\n"
    env = {**os.environ, "KUBECONFIG": str(folder / "kubeconfig"), "HOME": str(folder)}
    logs = subprocess.run([str(KUBECTL), "logs", "hello"], capture_output=True, text=True,
                          env=env, timeout=60)  # fmt: skip
    assert (logs.returncode, logs.stdout) == (0, "hi\n"), logs.stderr
    assert len(_prefixed(state["prefix"])) == 3  # the hub and two nodes
    done = subprocess.run(
        [str(LAUNCHER), "down", "--dir", str(folder)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert proc.wait(timeout=60) == 0
    assert _prefixed(state["prefix"]) == []
    assert not (folder / "standin.json").exists()
    assert (folder / "logs" / "default" / "hello.log").read_text() == "hi\n"


def test_sigint_to_a_foreground_up_tears_it_down(
    launched: tuple[subprocess.Popen[str], dict[str, Any], Path],
) -> None:
    proc, state, _ = launched
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert out.splitlines()[-1] == "k8s-standin: down"
    assert _prefixed(state["prefix"]) == []


def test_a_second_up_in_the_same_folder_is_refused(
    launched: tuple[subprocess.Popen[str], dict[str, Any], Path],
) -> None:
    _, state, folder = launched
    again = subprocess.run(
        [str(LAUNCHER), "up", "--nodes", "1", "--dir", str(folder)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert again.returncode == 1
    assert f"already up in {folder} (pid {state['pid']})" in again.stderr


def test_down_with_nothing_up_says_so(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(LAUNCHER), "down", "--dir", str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 0
    assert done.stdout == f"k8s-standin: nothing up in {tmp_path}\n"


def test_down_removes_the_namespaces_of_a_launcher_that_was_killed(
    launched: tuple[subprocess.Popen[str], dict[str, Any], Path],
) -> None:
    proc, state, folder = launched
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len(_prefixed(state["prefix"])) == 3  # SIGKILL left them
    done = subprocess.run([str(LAUNCHER), "down", "--dir", str(folder)], capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0
    assert _prefixed(state["prefix"]) == []


def test_up_in_the_background_returns_once_it_serves_and_down_stops_it(tmp_path: Path) -> None:
    folder = tmp_path / "bg"
    try:
        started = subprocess.run(
            [str(LAUNCHER), "up", "--nodes", "1", "--dir", str(folder), "--background"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert started.returncode == 0, started.stderr
        state = json.loads((folder / "standin.json").read_text())
        assert f"(pid {state['pid']}); export KUBECONFIG=" in started.stdout
        client = Client(KubeConfig.from_file(folder / "kubeconfig"))
        assert [n.metadata.name for n in client.list(Node)] == ["node-1"]  # type: ignore[union-attr]
    finally:
        done = subprocess.run([str(LAUNCHER), "down", "--dir", str(folder)],
                              capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0
    assert _prefixed(state["prefix"]) == []
    assert not _running(int(state["pid"]))


def _running(pid: int) -> bool:
    """Alive and not a zombie (a detached launcher's parent is gone; whoever reaps it may not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
