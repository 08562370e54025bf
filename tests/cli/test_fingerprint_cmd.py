"""``glimmer fingerprint``: this host, a simulated node, every simulated node; YAML or JSON;
``--against`` a stored fingerprint reports drift on the condition and stderr."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from glimmer.cli.app import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["fingerprint", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_this_host(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys)
    assert code == 0
    doc = yaml.safe_load(out)
    assert doc["kind"] == "NodeFingerprint"
    assert re.fullmatch(r"v1:[0-9a-f]{64}", doc["status"]["digest"])
    assert doc["status"]["kernel"] and doc["spec"]["nodeName"]


def test_a_simulated_node_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--fleet", "ai-factory", "--node", "hgx-node-0001", "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["metadata"]["name"] == "hgx-node-0001"
    assert doc["metadata"]["labels"] == {"burnin.glimmer.ai/node": "hgx-node-0001"}
    status = doc["status"]
    assert {g["arch"] for g in status["gpus"]} == {"sm_90"}
    assert status["kernel"] == "6.8.0-glimmer-sim"
    assert status["conditions"][0]["reason"] == "BaselineCaptured"


def test_every_simulated_node(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--fleet", "ai-factory", "--all", "-o", "json")
    docs = json.loads(out)
    assert code == 0 and len(docs) == len({d["spec"]["nodeName"] for d in docs}) > 1


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--fleet", "ai-factory"], "--node"),
        (["--node", "x"], "need --fleet"),
        (["--fleet", "ai-factory", "--node", "nope"], "no node 'nope'"),
    ],
)
def test_bad_flags_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], words: str) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2 and words in err


def test_against_a_stored_fingerprint_reports_drift(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    node = ["--fleet", "ai-factory", "--node", "hgx-node-0001"]
    _, out, _ = run(capsys, *node)
    stored = tmp_path / "stored.yaml"
    stored.write_text(out)
    code, out, err = run(capsys, *node, "--against", str(stored))
    doc = yaml.safe_load(out)
    assert code == 0 and err == ""
    assert doc["status"]["conditions"][0]["reason"] == "DigestStable"
    # As stored before a kernel upgrade: another kernel, and so another digest.
    older = re.sub(r"v1:[0-9a-f]{64}", "v1:" + "0" * 64, stored.read_text())
    stored.write_text(older.replace("6.8.0-glimmer-sim", "6.2.0-old"))
    code, out, err = run(capsys, *node, "--against", str(stored))
    condition = yaml.safe_load(out)["status"]["conditions"][0]
    assert code == 0
    assert (condition["status"], condition["reason"]) == ("True", "DigestChanged")
    assert "kernel 6.2.0-old → 6.8.0-glimmer-sim" in condition["message"]
    assert err.startswith("Warning HardwareDrift hgx-node-0001: kernel")


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("", "--against: holds no NodeFingerprint"),
        (
            "apiVersion: burnin.glimmer.ai/v1alpha1\nkind: BurnInProfile\nmetadata: {name: p}\n"
            "spec: {tests: [{testRef: clock-smoke}]}\n",
            "--against takes NodeFingerprint, not a BurnInProfile; glimmer run -f reads it",
        ),
    ],
    ids=["empty", "profile"],
)
def test_against_a_file_holding_no_fingerprint_is_refused_naming_what_it_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, named: str
) -> None:
    stored = tmp_path / "stored.yaml"
    stored.write_text(text)
    node = ("--fleet", "ai-factory", "--node", "hgx-node-0001")
    code, out, err = run(capsys, *node, "--against", str(stored))
    assert code == 2 and out == ""
    assert err.startswith(f"error: {stored}") and named in err and err.count("\n") == 1
