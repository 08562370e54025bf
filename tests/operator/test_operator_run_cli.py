"""``glimmer operator run`` and ``python -m glimmer.operator run``: bad input exits 2 with a
clear message, a missing k8s extra exits 2 naming the install command, and a good command line
becomes the operator's own process (SIGTERM stops it with exit 0)."""

from __future__ import annotations

import importlib.util
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from glimmer.cli.app import main
from glimmer.operator.__main__ import main as operator_main
from glimmer.operator.options import OperatorOptions, UsageError, checked, parse
from tests.k8s_api import K8sAPI
from tests.operator.conftest import STARTED, eventually

GLIMMER = Path(sys.executable).parent / "glimmer"


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--namespace", "a", "--all-namespaces"], "--namespace and --all-namespaces exclude"),
        (["--standalone", "--peering", "p"], "--standalone and --peering exclude"),
        (["--namespace", "Not_A_Namespace"], "is not a namespace name"),
        (["--peering", "Bad_Name"], "is not an object name"),
        (["--kubeconfig", "/nonexistent/kubeconfig"], "no such file"),
        (["--liveness", "localhost:8080"], "must be an http URL with a host and a port"),
    ],
)
def test_bad_operator_input_exits_2_with_one_line_naming_the_problem(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["operator", "run", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err and len(err.splitlines()) == 1
    assert operator_main(["run", *argv]) == 2
    assert says in capsys.readouterr().err


def test_python_dash_m_refuses_an_unknown_flag_with_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert operator_main(["run", "--no-such-flag"]) == 2
    assert "--no-such-flag" in capsys.readouterr().err
    assert operator_main([]) == 2


def test_a_missing_k8s_extra_exits_2_naming_the_install_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "kopf" else real(name, *a)
    )
    assert main(["operator", "run", "--standalone"]) == 2
    assert "pip install 'glimmer[k8s]'" in capsys.readouterr().err
    assert operator_main(["run", "--standalone"]) == 2
    assert "pip install 'glimmer[k8s]'" in capsys.readouterr().err


def test_the_options_round_trip_through_the_operators_own_command_line(tmp_path: Path) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text("{}")
    for options in (
        checked(kubeconfig=config, namespace="burn", standalone=True),
        checked(all_namespaces=True, peering="ops", liveness="http://0.0.0.0:8080/healthz"),
        OperatorOptions(),
    ):
        assert parse(options.argv()) == options
    assert OperatorOptions().namespace is None  # every namespace unless one is named
    with pytest.raises(UsageError):
        parse(["serve"])


def test_glimmer_operator_run_becomes_the_operator_and_stops_cleanly_on_sigterm(
    k8s_api: K8sAPI, tmp_path: Path
) -> None:
    log = tmp_path / "operator.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(GLIMMER), "operator", "run", "--kubeconfig", str(k8s_api.kubeconfig),
             "--standalone", "--namespace", "default"],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        eventually(lambda: STARTED in log.read_text(), "the operator's start")
        # The operator's watches reach the API: the operator, not a CLI wrapper, is running.
        eventually(
            lambda: (
                "burninruns" in k8s_api.journal.read_text()
                and "watch" in k8s_api.journal.read_text()
            ),
            "the operator watching BurnInRuns",
        )
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    assert code == 0, log.read_text()
    # The pass in flight finishes before the lead is given up, then kopf stops (its stop flag).
    assert "stopping: the pass in flight finishes first" in log.read_text()
    assert "Operator is stopping." in log.read_text()


def test_liveness_serves_kopfs_probe_at_the_url_given(k8s_api: K8sAPI, tmp_path: Path) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    url = f"http://127.0.0.1:{port}/healthz"
    log = tmp_path / "operator.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "glimmer.operator", "run", "--kubeconfig",
             str(k8s_api.kubeconfig), "--standalone", "-n", "default", "--liveness", url],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip

    def alive() -> bool:
        try:
            return httpx.get(url, timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    try:
        eventually(alive, "the liveness probe answering 200")
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    assert code == 0, log.read_text()
