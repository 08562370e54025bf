"""``glimmer sink serve``: /metrics from delivered envelopes (a real server in a subprocess),
``--once`` for a single exposition, and bad flags exiting 2. ``glimmer sink flush`` against a
real receiver on 127.0.0.1."""

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
from glimmer.sinks.outbox import Outbox
from glimmer.sinks.signing import SIGNATURE_HEADER, SigningSecret, verify

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


def _receiver_module() -> Any:
    """tests/sinks/receiver.py: the sink tests' real HTTP receiver and its certificate maker."""
    sys.path.insert(0, str(REPO / "tests" / "sinks"))
    try:
        import receiver
    finally:
        sys.path.pop(0)
    return receiver


def _receiver(script: list[str], tls: tuple[Path, Path] | None = None) -> Any:
    # The real HTTP receiver of the sink tests, on 127.0.0.1.
    return _receiver_module().Receiver(script=script).start(tls)


def test_flush_resends_what_is_owed_to_a_receiver_that_refuses_then_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    receiver = _receiver(["refuse"])
    try:
        spec = f"webhook={receiver.url}"
        box = Outbox(tmp_path / "box")
        for uid in "abc":
            box.put(spec, envelope(uid, "Passed"))
        box.put("file=elsewhere.jsonl", envelope("d", "Passed"))
        args = ["sink", "flush", "--sink", spec, "--sink-state", str(tmp_path / "box")]

        assert main(args) == 1  # refused: the first owed envelope stops the backlog
        out = capsys.readouterr().out
        assert f"{spec}: 0 delivered, 3 still owed" in out
        assert "file=elsewhere.jsonl: 1 owed, not flushed" in out

        assert main(args) == 0
        out = capsys.readouterr().out
        assert f"{spec}: 3 delivered, 0 still owed" in out
        assert [r.envelope()["run"]["uid"] for r in receiver.requests] == list("aabc")
        assert len(receiver.stored) == 3

        assert main(args) == 0
        assert f"{spec}: nothing owed" in capsys.readouterr().out
        assert len(Outbox(tmp_path / "box")) == 1  # only what is owed to the other sink
    finally:
        receiver.stop()


def test_flush_signs_with_the_secret_it_is_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    receiver = _receiver([])
    try:
        spec = f"webhook={receiver.url}"
        Outbox(tmp_path / "box").put(spec, envelope("a", "Passed"))
        secret = tmp_path / "secret"
        secret.write_text("s3cret\n")
        args = ["sink", "flush", "--sink", spec, "--sink-state", str(tmp_path / "box")]
        assert main([*args, "--sink-secret-file", str(secret)]) == 0
        (seen,) = receiver.requests
        key = SigningSecret(b"s3cret", "test")
        assert verify(seen.body, seen.headers[SIGNATURE_HEADER], key)
    finally:
        receiver.stop()


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ((), "--sink: give the sinks to flush"),
        (("--sink", "smtp=x"), "unknown sink 'smtp'"),
        (("--sink", "file=x", "--sink-secret-env", "GLIMMER_NO_SUCH_VAR"), "GLIMMER_NO_SUCH_VAR"),
    ],
)
def test_flush_refuses_bad_input_with_exit_2(
    extra: tuple[str, ...], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sink", "flush", "--sink-state", str(tmp_path / "box"), *extra]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_flush_verifies_a_private_ca_given_with_sink_ca(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cert, key = _receiver_module().self_signed(tmp_path)
    receiver = _receiver([], tls=(cert, key))
    try:
        spec = f"webhook={receiver.url}"
        Outbox(tmp_path / "box").put(spec, envelope("a", "Passed"))
        args = ["sink", "flush", "--sink", spec, "--sink-state", str(tmp_path / "box")]
        assert main(args) == 1  # the default roots do not know this certificate
        assert "CERTIFICATE_VERIFY_FAILED" in capsys.readouterr().out
        assert main([*args, "--sink-ca", str(cert)]) == 0
        assert len(receiver.stored) == 1
    finally:
        receiver.stop()


@pytest.mark.parametrize("port", ["70000", "-1", "65536"])
def test_serve_refuses_a_port_that_is_not_a_tcp_port_in_one_line(
    port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sink", "serve", "--port", port]) == 2
    err = capsys.readouterr().err
    assert err == f"error: --port: must be a TCP port from 0 to 65535, got {port}\n"


def test_serve_refuses_an_empty_host_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sink", "serve", "--host", " ", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --host: ") and err.count("\n") == 1


@pytest.mark.parametrize(
    ("flag", "words"),
    [
        ("--sink-state", "--sink-state: not a folder"),
        ("--sink-ca", "--sink-ca: not a usable CA bundle"),
        ("--sink-secret-file", "cannot read the signing secret"),
    ],
)
def test_flush_refuses_a_flag_naming_a_missing_or_wrong_kind_of_path(
    flag: str, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    given = a_file if flag == "--sink-state" else tmp_path / "missing"
    code = main(["sink", "flush", "--sink", f"file={tmp_path / 'out.jsonl'}", flag, str(given)])
    err = capsys.readouterr().err
    assert code == 2 and words in err and err.count("\n") == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # nothing written


def test_flush_refuses_a_ca_bundle_that_is_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["sink", "flush", "--sink", "webhook=https://127.0.0.1:9/x",
                 "--sink-state", str(tmp_path / "state"), "--sink-ca", str(tmp_path)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "--sink-ca: a folder, not a CA bundle" in err
