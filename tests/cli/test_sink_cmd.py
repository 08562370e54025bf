"""``glimmer sink serve``: /metrics from delivered envelopes (a real server in a subprocess),
``--once`` for a single exposition, and bad flags exiting 2."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from glimmer.cli.app import main
from glimmer.sinks.envelope import VERSION

REPO = Path(__file__).resolve().parents[2]


def envelope(uid: str, phase: str) -> dict[str, Any]:
    return {
        "version": VERSION,
        "deliveryId": (uid * 32)[:32],
        "reason": "RunPhaseChanged",
        "sentAt": "2026-09-01T10:00:00Z",
        "run": {"namespace": "lab", "name": f"run-{uid}", "uid": uid, "profile": "acc"},
        "phase": phase,
        "results": [
            {
                "name": "burn",
                "kind": "gpu-burn",
                "scope": "Node",
                "phase": phase,
                "nodes": ["gpu-01"],
                "metrics": {"miscompares": "0"},
            }
        ],
        "summary": {"passed": 1, "failed": 0, "errored": 0, "skipped": 0},
    }


def test_once_prints_the_exposition_of_a_file_sink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps(envelope("a", "Passed")) + "\n")
    assert main(["sink", "serve", "--once", "--from", str(path)]) == 0
    out = capsys.readouterr().out
    assert 'burnin_run_phase{namespace="lab",run="run-a",profile="acc",phase="Passed"} 1' in out
    assert "burnin_exporter_runs_tracked 1" in out


def test_a_missing_source_exits_2_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sink", "serve", "--once", "--from", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "Traceback" not in err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _fetch(url: str, proc: subprocess.Popen[bytes]) -> tuple[str, str]:
    for _ in range(300):  # bounded: about a minute for the server to come up
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                return resp.read().decode(), resp.headers["Content-Type"]
        except (urllib.error.URLError, ConnectionError):
            if proc.poll() is not None:
                assert proc.stderr is not None
                pytest.fail(f"glimmer sink serve exited: {proc.stderr.read().decode()}")
            time.sleep(0.2)
    pytest.fail("glimmer sink serve never answered")


def test_serve_answers_metrics_from_a_folder_sink_and_catches_up(tmp_path: Path) -> None:
    folder = tmp_path / "cm"
    folder.mkdir()
    first = envelope("a", "Running")
    (folder / f"{first['deliveryId']}.json").write_text(json.dumps(first))
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    cmd = [sys.executable, "-m", "glimmer.cli", "sink", "serve", "--port", str(port),
           "--from", str(folder)]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        text, ctype = _fetch(url, proc)
        assert ctype.startswith("text/plain; version=0.0.4")
        assert 'run="run-a",profile="acc",phase="Running"} 1' in text
        second = envelope("b", "Passed")
        (folder / f"{second['deliveryId']}.json").write_text(json.dumps(second))
        text, _ = _fetch(url, proc)
        assert 'run="run-b",profile="acc",phase="Passed"} 1' in text
        assert "burnin_exporter_runs_tracked 2" in text
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/nope", timeout=10)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    assert f"127.0.0.1:{port}/metrics" in proc.stderr.read().decode()
