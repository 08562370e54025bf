"""``glimmer run --backend kubernetes`` (cli/kube_run.py): the command submits a BurnInRun to
the cluster and follows it while the operator drives it, never making a pass of its own — over
real HTTP against the stand-in cluster, the operator a real process beside it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from glimmer.api.run import BurnInRun
from glimmer.backends.common.registry import KUBERNETES
from glimmer.cli import kube_run
from glimmer.errors import InputError
from tests.operator.conftest import RUNS, Operator, apply_short_tests, get_run, journal, settled
from tools.k8s_standin.cluster import StandInCluster

GLIMMER = str(Path(sys.executable).with_name("glimmer"))


def _glimmer(
    cluster: StandInCluster, *args: str, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [GLIMMER, "run", "--backend", "kubernetes", "--kubeconfig", str(cluster.kubeconfig), *args],
        capture_output=True, text=True, timeout=timeout, env=env,
    )  # fmt: skip


def _run(name: str, node: str, phase: str | None = None) -> BurnInRun:
    body: dict[str, Any] = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInRun",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"profileRef": "host", "target": {"nodeNames": [node]}},
    }
    return BurnInRun.model_validate(body)


def test_the_command_submits_the_run_follows_the_operator_and_exits_with_its_verdict(
    cluster: StandInCluster,
    http: httpx.Client,
    operators: Callable[..., Operator],
    tmp_path: Path,
) -> None:
    apply_short_tests(http, tmp_path)
    op = operators().start()
    done = _glimmer(cluster, "--nodes", "node-1", "--max-concurrent", "1")
    assert op.stop() == 0, op.output()
    assert done.returncode in (0, 1), done.stdout + done.stderr
    out = done.stdout
    assert "BurnInRun on a Kubernetes cluster (backend kubernetes), submitted" in out
    assert "kubectl get bir -n default host-k8s-" in out
    runs = http.get(RUNS).json()["items"]
    assert len(runs) == 1
    final = settled(http, runs[0]["metadata"]["name"])
    phase = final["status"]["phase"]
    assert done.returncode == (0 if phase == "Passed" else 1)
    for result in final["status"]["results"]:  # each result was printed as it settled
        assert f"{result['name']} {result['phase']}" in out
    # The command only read the run and created it: every other write was the operator's (or
    # the kubelet's). Its requests are lightkube's (httpx2); the test's own are plain httpx.
    mine = [e for e in journal(cluster) if e["user_agent"].startswith("python-httpx2/")]
    assert [(e["method"], e["path"]) for e in mine if e["method"] != "GET"] == [("POST", RUNS)]


def test_a_finished_run_of_the_same_name_is_replaced_and_one_under_way_is_followed(
    cluster: StandInCluster, http: httpx.Client
) -> None:
    backend = KUBERNETES.backend(cluster.kubeconfig)
    run = _run("again", "node-1")
    assert kube_run.submit_or_follow(backend, run) == "submitted"
    assert kube_run.submit_or_follow(backend, run) == "following the run already under way"
    held = get_run(http, "again")
    held["status"] = {"phase": "Passed"}
    written = http.put(f"{RUNS}/again/status", json=held)
    assert written.status_code == 200, written.text
    uid = held["metadata"]["uid"]
    assert kube_run.submit_or_follow(backend, run) == (
        "submitted (the finished run of that name replaced)"
    )
    assert get_run(http, "again")["metadata"]["uid"] != uid


def test_a_run_no_operator_picks_up_is_said_so_once_and_followed_to_its_end(
    cluster: StandInCluster, http: httpx.Client, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setattr(kube_run, "POLL_SECONDS", 0.05)
    backend = KUBERNETES.backend(cluster.kubeconfig)
    run = _run("unclaimed", "node-2")
    backend.submit(run)
    ticks = iter(range(10_000))
    fake = lambda: float(next(ticks))  # noqa: E731 (a clock a second a read)

    def finish_once_warned() -> None:
        deadline = time.monotonic() + 30
        while "no operator seems to watch" not in capsys.readouterr().err:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        held = get_run(http, "unclaimed")
        held["status"] = {"phase": "Error"}
        assert http.put(f"{RUNS}/unclaimed/status", json=held).status_code == 200

    # capsys is read by the helper thread; the warning goes to the real stderr it captures.
    finisher = threading.Thread(target=finish_once_warned)
    finisher.start()
    final = kube_run.follow(backend, run, human=False, clock=fake)
    finisher.join(timeout=30)
    assert final.status is not None and final.status.phase.value == "Error"


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--nodes", "node-9"], "--nodes: not a node of the cluster: node-9"),
        (["--profile", "no-such-profile"], "no-such-profile"),
        (["--state-dir", "/tmp"], "--state-dir: not with --backend kubernetes"),
        (["--fault", "gpu_low_pstate@gpu:node-1/0"], "--fault"),
        (["--dry-run"], "--dry-run: not with --backend kubernetes"),
    ],
)
def test_bad_input_exits_2_naming_the_flag_and_submits_nothing(
    cluster: StandInCluster, http: httpx.Client, args: list[str], named: str
) -> None:
    done = _glimmer(cluster, *args, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert named in done.stderr
    assert "Traceback" not in done.stderr
    assert http.get(RUNS).json()["items"] == []


def test_a_profile_in_a_file_is_refused_with_what_to_do_instead(
    cluster: StandInCluster, http: httpx.Client, tmp_path: Path
) -> None:
    given = tmp_path / "profile.yaml"
    given.write_text(
        "apiVersion: burnin.glimmer.ai/v1alpha1\nkind: BurnInProfile\n"
        "metadata: {name: mine}\nspec: {tests: [{testRef: host-memory}]}\n"
    )
    done = _glimmer(cluster, "-f", str(given), timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "BurnInProfile mine" in done.stderr and "kubectl apply -f" in done.stderr
    assert str(given) in done.stderr
    assert http.get(RUNS).json()["items"] == []


def test_a_cluster_that_does_not_answer_is_bad_input_naming_it(tmp_path: Path) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:9'}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\n"
    )
    with pytest.raises(InputError, match=r"the cluster does not answer|cannot reach a cluster"):
        kube_run.prepare(kube_run.KubeFlags(kubeconfig=str(config)))
