"""``glimmer run --backend local`` with a host's half of a link or a collective: the §8.1
refusals (exit 2 naming the flag, nothing written), the warning for a half run without its
flags, and the §8.3 ``--results-dir`` layout of a normal run, a Pair server, a Pair client and a
Group rank. The runner is a real process (``half_echo_runner.py``, given as the test's
``runner.command``) that prints the rendezvous variables it was given."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.cli.app import main

HERE = Path(__file__).parent
ECHO = [sys.executable, str(HERE / "half_echo_runner.py")]
API = "burnin.glimmer.ai/v1alpha1"


def _suite(tmp_path: Path, *tests: tuple[str, str]) -> Path:
    """A file of tests (name, scope) over the echo runner, each gated on ``echoed``, and a
    profile ``halves`` running them in order."""
    docs: list[dict[str, object]] = []
    for name, scope in tests:
        docs.append(
            {
                "apiVersion": API,
                "kind": "BurnInTest",
                "metadata": {"name": name},
                "spec": {
                    "kind": "custom",
                    "scope": scope,
                    "durationSeconds": 5,
                    "runner": {"image": "local", "command": ECHO},
                    "thresholds": [{"metric": "echoed", "comparison": "Equal", "value": "1"}],
                },
            }
        )
    docs.append(
        {
            "apiVersion": API,
            "kind": "BurnInProfile",
            "metadata": {"name": "halves"},
            "spec": {"tests": [{"testRef": name} for name, _ in tests]},
        }
    )
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, suite: Path, *args: str) -> tuple[
    int, str, str
]:  # fmt: skip
    code = main(["run", "--backend", "local", "-f", str(suite), "--node", "here",
                 "--state-dir", str(tmp_path / "state"), *args])  # fmt: skip
    captured = capsys.readouterr()
    return code, captured.out, captured.err


NODE, PAIR, GROUP = [("disk", "Node")], [("link", "Pair")], [("ring", "Group")]


@pytest.mark.parametrize(
    ("tests", "args", "said"),
    [
        (NODE, ["--role", "server"], "--role: profile halves has no Pair test"),
        (NODE, ["--rank", "0", "--nranks", "2"], "--rank: profile halves has no Group"),
        (PAIR, ["--role", "client"], "--peer: --role client needs the server"),
        (PAIR, ["--role", "server", "--peer", "10.0.0.1"], "--peer: only a Pair client"),
        (PAIR, ["--peer", "10.0.0.1"], "--peer: only with --role"),
        (PAIR, ["--role", "leader"], "--role leader: neither server nor client"),
        (PAIR + GROUP, ["--role", "server", "--rank", "0"], "--rank: refused with --role"),
        (GROUP, ["--rank", "1", "--nranks", "3"], "--root: required on rank 1"),
        (GROUP, ["--rank", "3", "--nranks", "3", "--root", "x"], "--rank 3: outside [0, 3)"),
        (GROUP, ["--rank", "-1", "--nranks", "3"], "--rank -1: outside [0, 3)"),
        (GROUP, ["--rank", "0", "--nranks", "1"], "--nranks 1: a collective needs at least 2"),
        (GROUP, ["--rank", "0"], "--nranks: required with --rank"),
        (GROUP, ["--nranks", "2"], "--nranks: only with --rank"),
    ],
)
def test_a_half_flag_that_contradicts_the_plan_or_another_flag_is_refused_naming_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    tests: list[tuple[str, str]],
    args: list[str],
    said: str,
) -> None:
    results = tmp_path / "results"
    code, _, err = _run(capsys, tmp_path, _suite(tmp_path, *tests), *args, "--results-dir",
                        str(results))  # fmt: skip
    assert code == 2 and said in err and "Traceback" not in err
    assert not results.exists() and not (tmp_path / "state").exists()


def test_a_half_flag_with_the_simulator_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--role", "server"])
    assert code == 2 and "--role: only with --backend local" in capsys.readouterr().err


def test_a_results_dir_that_is_a_file_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "taken"
    taken.write_text("mine")
    code, _, err = _run(capsys, tmp_path, _suite(tmp_path, ("disk", "Node")), "--results-dir",
                        str(taken))  # fmt: skip
    assert code == 2 and "--results-dir" in err and taken.read_text() == "mine"
    assert not (tmp_path / "state").exists()


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def test_a_normal_run_leaves_run_json_raw_logs_and_the_one_verdict_envelope(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(tmp_path, ("link", "Pair"))
    results = tmp_path / "results"
    code, _, err = _run(capsys, tmp_path, suite, "--results-dir", str(results))
    # A Pair test without --role is warned about and its runner, given no role, skips.
    assert "warning: Pair test link runs without --role" in err
    run = _json(results / "run.json")
    assert run["node"] == "here" and run["phase"] == "Passed" and code == 0
    assert str(run["startedAt"]).endswith("Z") and str(run["finishedAt"]).endswith("Z")
    [log] = (results / "raw").iterdir()
    assert "HALF_ECHO_SKIP" in log.read_text()
    envelope = _json(results / "envelopes" / "001-RunPhaseChanged.json")
    assert envelope["reason"] == "RunPhaseChanged" and envelope["phase"] == "Passed"
    [result] = envelope["results"]
    assert result["phase"] == "Skipped" and result["nodes"] == ["here"]
    assert result["scope"] == "Pair"
    assert not (results / "sidecar").exists() and not (results / "ranks").exists()


def test_a_pair_client_envelope_names_the_link_server_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    code, _, _ = _run(capsys, tmp_path, _suite(tmp_path, ("link", "Pair")), "--role", "client",
                      "--peer", "127.0.0.1", "--peer-node", "host-a", "--results-dir",
                      str(results))  # fmt: skip
    envelope = _json(results / "envelopes" / "001-RunPhaseChanged.json")
    [result] = envelope["results"]
    assert code == 0 and result["phase"] == "Passed"
    assert result["nodes"] == ["host-a", "here"] and result["scope"] == "Pair"
    assert result["metrics"]["role"] == "client"
    assert result["metrics"]["peerHost"] == "127.0.0.1"
    assert result["metrics"]["peerNode"] == "host-a"


def test_a_pair_server_leaves_a_record_not_a_verdict_judged_by_its_runner_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    code, _, _ = _run(capsys, tmp_path, _suite(tmp_path, ("link", "Pair")), "--role", "server",
                      "--peer-node", "host-b", "--results-dir", str(results))  # fmt: skip
    record = _json(results / "sidecar" / "server-record.json")
    assert code == 0 and not (results / "envelopes").exists()
    assert (record["role"], record["node"], record["peerNode"]) == ("server", "here", "host-b")
    assert record["phase"] == "Passed" and "not a verdict" in str(record["note"])
    [result] = record["results"]
    assert result["nodes"] == ["here", "host-b"]
    assert result["metrics"]["role"] == "server" and "peerHost" not in result["metrics"]
    assert (results / "run.json").is_file() and list((results / "raw").iterdir())


def test_a_group_rank_leaves_its_record_for_merge_and_no_envelope(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    code, _, _ = _run(capsys, tmp_path, _suite(tmp_path, ("ring", "Group")), "--rank", "1",
                      "--nranks", "2", "--root", "127.0.0.1", "--results-dir",
                      str(results))  # fmt: skip
    record = _json(results / "ranks" / "rank-01.json")
    assert code == 0 and not (results / "envelopes").exists()
    assert (record["rank"], record["nranks"], record["node"]) == (1, 2, "here")
    assert record["phase"] == "Passed" and record["required"] == {"ring": True}
    assert set(record) >= {"startedAt", "finishedAt", "fingerprint", "note", "results"}
    assert list(record["fingerprint"]) == ["here"]
    [result] = record["results"]
    assert result["runner"]["verdict"] == "Pass" and result["runner"]["exitCode"] == 0
    assert result["runner"]["metrics"]["rootHost"] == "127.0.0.1"
    assert result["runner"]["metrics"]["rank"] == "1"
    assert result["thresholds"][0]["metric"] == "echoed"


def test_a_group_test_without_rank_is_warned_about_and_its_runner_skips(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    code, _, err = _run(capsys, tmp_path, _suite(tmp_path, *GROUP), "--results-dir", str(results))
    assert "warning: Group test ring runs without --rank" in err
    envelope = _json(results / "envelopes" / "001-RunPhaseChanged.json")
    assert envelope["results"][0]["phase"] == "Skipped" and code == 0


def test_a_dry_run_shows_each_half_and_the_variables_it_would_be_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, tmp_path, _suite(tmp_path, *PAIR), "--role", "client", "--peer",
                        "10.0.0.1", "--peer-node", "host-a", "--dry-run")  # fmt: skip
    assert code == 0 and not (tmp_path / "state").exists()
    assert "Half: link: this host's half of a Pair test; BURNIN_ROLE=client" in out
    assert "BURNIN_PEER_HOST=10.0.0.1, BURNIN_PEER_NODE=host-a" in out
