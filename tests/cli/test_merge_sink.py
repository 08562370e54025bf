"""``glimmer merge --sink``: the merged envelope delivered once, by ``glimmer run``'s sink flags
and sink code, under the CLI retry policy; a sink that does not take it is a warning naming it
and never changes the exit code."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from glimmer.cli.app import main
from glimmer.contract.vocab import RunnerVerdict
from glimmer.sinks.jsonl import JsonlSink
from glimmer.sinks.outbox import Outbox
from glimmer.sinks.sender import RealClock
from tests.cli.test_merge import _declared, _record, _write
from tests.sinks.receiver import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    try:
        yield r
    finally:
        r.stop()


@pytest.fixture(autouse=True)
def _here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the default outbox (./.glimmer/outbox) lands in tmp_path


def _ranks(tmp_path: Path, failing: int | None = None) -> list[str]:
    args = []
    for i in range(3):
        said = _declared(RunnerVerdict.FAIL) if i == failing else None
        folder = _write(tmp_path / f"h{i}", _record(i, runner=said))
        args += ["--results-dir", str(folder)]
    return args


def _refusing_port() -> int:
    # Bound once to find a free port, then closed: connects to it are refused at once.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _no_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr(RealClock, "sleep", lambda self, seconds: slept.append(seconds))
    return slept


def test_a_webhook_receives_exactly_one_envelope_carrying_the_merged_results(
    tmp_path: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "merged.json"
    code = main(
        ["merge", *_ranks(tmp_path), "--out", str(out), "--sink", f"webhook={receiver.url}"]
    )
    err = capsys.readouterr().err
    assert code == 0 and "warning" not in err
    (seen,) = receiver.requests
    delivered = seen.envelope()
    assert delivered == json.loads(out.read_text())  # the file and the delivery: one envelope
    assert seen.key == delivered["deliveryId"]
    assert delivered["reason"] == "RunPhaseChanged" and delivered["phase"] == "Passed"
    [result] = delivered["results"]
    assert result["nodes"] == ["r0", "r1", "r2"] and result["scope"] == "Group"
    assert "group of 3 (this verdict is about the COLLECTIVE" in result["message"]
    assert delivered["summary"] == {"passed": 1, "failed": 0, "errored": 0, "skipped": 0}


def test_a_failed_collective_is_delivered_failed_and_exits_1(
    tmp_path: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["merge", *_ranks(tmp_path, failing=1), "--sink", f"webhook={receiver.url}"])
    printed = json.loads(capsys.readouterr().out)
    assert code == 1
    (seen,) = receiver.requests
    assert seen.envelope()["phase"] == "Failed"
    assert seen.envelope()["results"] == printed["results"]


def test_a_sink_nobody_listens_on_is_a_warning_naming_it_and_keeps_the_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    slept = _no_waits(monkeypatch)
    hook = f"webhook=http://127.0.0.1:{_refusing_port()}/hook"
    code = main(["merge", *_ranks(tmp_path, failing=2), "--sink", hook])
    captured = capsys.readouterr()
    assert code == 1  # the verdict's code, not the sink's
    assert json.loads(captured.out)["phase"] == "Failed"
    [warning] = [line for line in captured.err.splitlines() if line.startswith("warning:")]
    assert f"sink {hook}" in warning and "failed after 6 attempts" in warning  # CLI policy
    assert f"glimmer sink flush --sink {hook} --sink-state .glimmer/outbox" in warning
    assert len(slept) == 5  # the policy's waits between its 6 attempts
    [owed] = Outbox(tmp_path / ".glimmer" / "outbox").owed(hook)
    assert owed["deliveryId"] == json.loads(captured.out)["deliveryId"]


def test_a_sink_refusing_the_envelope_for_good_is_a_warning_and_nothing_is_owed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    receiver = Receiver(script=["400"]).start()
    try:
        spec = f"webhook={receiver.url}"
        code = main(["merge", *_ranks(tmp_path), "--sink", spec, "--sink-state", "box"])
    finally:
        receiver.stop()
    err = capsys.readouterr().err
    assert code == 0 and len(receiver.requests) == 1  # a 400 is permanent: no retry
    [warning] = [line for line in err.splitlines() if line.startswith("warning:")]
    assert f"sink {spec}" in warning and "glimmer sink flush" not in warning
    assert Outbox(tmp_path / "box").owed(spec) == []


def test_one_dead_sink_does_not_keep_the_envelope_from_the_others(
    tmp_path: Path,
    receiver: Receiver,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _no_waits(monkeypatch)
    dead = f"webhook=http://127.0.0.1:{_refusing_port()}/hook"
    sinks = ["--sink", dead, "--sink", f"webhook={receiver.url}", "--sink", "file=merged.jsonl"]
    code = main(["merge", *_ranks(tmp_path), *sinks])
    captured = capsys.readouterr()
    assert code == 0
    printed = json.loads(captured.out)
    [line] = (tmp_path / "merged.jsonl").read_text().splitlines()
    assert json.loads(line) == printed
    assert [seen.envelope() for seen in receiver.requests] == [printed]
    warnings = [line for line in captured.err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and dead in warnings[0]


def test_a_sink_that_breaks_unexpectedly_is_still_a_warning_and_keeps_the_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: JsonlSink, envelope: object, body: bytes, timeout: float) -> None:
        raise RuntimeError("a bug in a sink")

    monkeypatch.setattr(JsonlSink, "send", broken)
    code = main(["merge", *_ranks(tmp_path, failing=0), "--sink", "file=merged.jsonl"])
    captured = capsys.readouterr()
    assert code == 1 and json.loads(captured.out)["phase"] == "Failed"
    [warning] = [line for line in captured.err.splitlines() if line.startswith("warning:")]
    assert "not delivered" in warning and "merged.jsonl" in warning


def test_a_sink_flag_that_cannot_make_a_sink_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "merged.json"
    code = main(["merge", *_ranks(tmp_path), "--out", str(out), "--sink", "bogus"])
    captured = capsys.readouterr()
    assert code == 2 and "--sink" in captured.err
    assert not out.exists() and not (tmp_path / ".glimmer").exists()


def test_without_sink_flags_merge_delivers_nothing_and_writes_no_outbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["merge", *_ranks(tmp_path)]) == 0
    assert "warning" not in capsys.readouterr().err
    assert not (tmp_path / ".glimmer").exists()
