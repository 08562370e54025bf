"""``glimmer fleet telemetry`` and ``glimmer fleet serve`` (a real server in a subprocess)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from glimmer.cli.app import main
from glimmer.sim.clock import EPOCH

REPO = Path(__file__).resolve().parents[2]
SIM_TIME = re.compile(r"^glimmer_simulated_time_seconds (\S+)$", re.M)


def _sim_time(text: str) -> float:
    m = SIM_TIME.search(text)
    assert m, "no glimmer_simulated_time_seconds sample"
    return float(m.group(1))


def test_telemetry_prints_the_exposition_at_an_offset(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["fleet", "telemetry", "--fleet", "ai-factory-fixture", "--at", "+1h", "--no-noise"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert _sim_time(out) == EPOCH + 3600
    assert "# TYPE DCGM_FI_DEV_GPU_UTIL gauge" in out
    assert out.count("\nDCGM_FI_DEV_POWER_USAGE{") == 80


def test_telemetry_takes_rfc3339_and_faults(capsys: pytest.CaptureFixture[str]) -> None:
    code = main([
        "fleet", "telemetry", "--fleet", "ai-factory-fixture", "--at", "2026-10-02T00:30:00Z",
        "--fault", "gpu_fallen_off_bus@gpu:nvl-node-0000/0",
        "--fault", "gpu_ecc_uncorrectable@gpu:nvl-node-0001/1=0.5",
    ])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert _sim_time(out) == EPOCH + 1800
    assert out.count("\nDCGM_FI_DEV_POWER_USAGE{") == 79


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--at", "yesterday"], "--at"),
        (["--fault", "gpu_low_pstate@rack:site-a/nvl-a"], "gpu_low_pstate@rack:site-a/nvl-a"),
        (["--fault", "gpu_low_pstate"], "MODE@TARGET"),
        (["--fault", "gpu_low_pstate@gpu:nvl-node-0000/0=lots"], "not a number"),
    ],
)
def test_bad_flags_exit_2_with_a_clear_message(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["fleet", "telemetry", "--fleet", "ai-factory-fixture", *args])
    captured = capsys.readouterr()
    assert code == 2
    assert needle in captured.err
    assert "Traceback" not in captured.err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _fetch(url: str, deadline: float, proc: subprocess.Popen[bytes]) -> tuple[str, str]:
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                return resp.read().decode(), resp.headers["Content-Type"]
        except (urllib.error.URLError, ConnectionError):
            if proc.poll() is not None:  # the server died: say why instead of waiting
                assert proc.stderr is not None
                pytest.fail(f"glimmer fleet serve exited: {proc.stderr.read().decode()}")
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_serve_answers_metrics_while_simulated_time_advances() -> None:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    cmd = [sys.executable, "-m", "glimmer.cli", "fleet", "serve", "--fleet", "ai-factory-fixture",
           "--port", str(port), "--speed", "600", "--start", "+2h"]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        first, ctype = _fetch(url, time.monotonic() + 60, proc)
        assert ctype.startswith("text/plain; version=0.0.4")
        assert "DCGM_FI_DEV_GPU_TEMP{" in first
        time.sleep(0.5)
        second, _ = _fetch(url, time.monotonic() + 10, proc)
        t1, t2 = _sim_time(first), _sim_time(second)
        assert EPOCH + 7200 <= t1 < t2  # simulated time moved on between scrapes
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


@pytest.mark.parametrize("port", ["70000", "65536", "-1"])
def test_serve_refuses_a_port_out_of_range_as_one_line_of_bad_input(
    capsys: pytest.CaptureFixture[str], port: str
) -> None:
    code = main(["fleet", "serve", "--fleet", "ai-factory-fixture", "--port", port])
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"error: --port: must be a TCP port from 0 to 65535, got {port}\n"


@pytest.mark.parametrize("speed", ["inf", "nan", "0"])
def test_serve_refuses_a_speed_that_is_not_a_positive_finite_number(
    capsys: pytest.CaptureFixture[str], speed: str
) -> None:
    code = main(["fleet", "serve", "--fleet", "ai-factory-fixture", "--speed", speed])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: --speed: must be a positive finite number")
    assert err.count("\n") == 1
