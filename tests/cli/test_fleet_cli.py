"""``glimmer fleet validate|show|topology|generate|list``: output and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glimmer.cli.app import main

BAD = Path(__file__).resolve().parent.parent / "fixtures" / "fleet-bad"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["fleet", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_a_builtin(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", "--fleet", "ai-factory")
    assert code == 0 and "Fleet/ai-factory: valid" in out and "96 GPUs" in out


def test_validate_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", "--fleet", "hgx-fixture", "--output", "json")
    doc = json.loads(out)
    assert code == 0 and doc["valid"] is True and doc["nvlinkEdges"] == 144


@pytest.mark.parametrize(
    ("name", "line", "reason"),
    [
        ("gpus-per-node-fraction.yaml", 14, "must be a finite whole integer"),
        ("missing-ambient.yaml", 17, "explicit operating assumption is required"),
        ("overlapping-slots.yaml", 39, "occupied rack slots overlap"),
    ],
)
def test_bad_fleet_files_exit_2_naming_file_line_and_field(
    capsys: pytest.CaptureFixture[str], name: str, line: int, reason: str
) -> None:
    code, _, err = run(capsys, "validate", "--fleet", str(BAD / name))
    assert code == 2
    assert f"{name}:{line}" in err and reason in err and "field spec.pools" in err
    assert "Traceback" not in err


def test_unknown_fleet_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "show", "--fleet", "no-such-fleet")
    assert code == 2 and "no built-in fleet 'no-such-fleet'" in err and "ai-factory" in err


def test_show_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "--fleet", "ai-factory")
    assert code == 0 and "hgx-pool" in out and "nvl-pool" in out
    code, out, _ = run(capsys, "show", "--fleet", "ai-factory", "--output", "json", "--nodes")
    doc = json.loads(out)
    assert doc["summary"]["nodes"] == 22
    assert [p["name"] for p in doc["pools"]] == ["hgx-pool", "nvl-pool", "pcie-pool"]
    assert doc["nodes"][0]["hostname"] == "hgx-node-0001"


def test_topology_reach(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "topology", "--reach", "node:hgx-node-0002", "--output", "json")
    doc = json.loads(out)
    assert code == 0 and doc["kind"] == "node" and len(doc["gpus"]) == 8
    assert doc["nvlinkEdges"] == 144
    code, out, _ = run(capsys, "topology", "--reach", "rack:site-a/nvl-a")
    assert code == 0 and "reaches 72 GPUs on 18 nodes" in out
    code, _, err = run(capsys, "topology", "--reach", "gpu:nope/0")
    assert code == 2 and "no entity with key" in err


def test_topology_exports(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "topology", "--fleet", "hgx-fixture", "--output", "json")
    assert code == 0 and len(json.loads(out)["nvlinkEdges"]) == 144
    code, out, _ = run(capsys, "topology", "--fleet", "hgx-fixture", "--output", "dot", "--gpus")
    assert code == 0 and out.startswith('graph "hgx-fixture"')
    code, out, _ = run(capsys, "topology", "--fleet", "ai-factory")
    assert code == 0 and "domain:site-a/nvl-a/domain-a" in out


def test_generate_writes_a_file_that_validates(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "f.yaml"
    code, _, _ = run(capsys, "generate", "--gpus", "144", "--shape", "nvl72", "--out", str(target))
    assert code == 0 and target.exists()
    code, out, _ = run(capsys, "validate", "--fleet", str(target), "--output", "json")
    assert code == 0 and json.loads(out)["gpus"] == 144


def test_generate_to_stdout_and_refusals(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "generate", "--gpus", "8", "--shape", "pcie", "--name", "tiny")
    assert code == 0 and "name: tiny" in out and out.startswith("# Generated")
    code, _, err = run(capsys, "generate", "--gpus", "8", "--shape", "dgx")
    assert code == 2 and "--shape must be one of" in err


def test_list_builtins(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "--output", "json")
    assert code == 0 and {"ai-factory", "hgx-1k"} <= set(json.loads(out))


def _generated(tmp_path: Path, faults: str) -> Path:
    out = tmp_path / "fleet.yaml"
    assert main(["fleet", "generate", "--gpus", "16", "--shape", "hgx", "--out", str(out)]) == 0
    out.write_text(out.read_text() + faults)
    return out


def test_validate_refuses_a_declared_fault_the_simulator_does_not_know(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _generated(
        tmp_path, '  faults:\n    - {mode: gpu_no_such_mode, target: "node:hgx-su000-node-0000"}\n'
    )
    capsys.readouterr()
    assert main(["fleet", "validate", "--fleet", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:" in err and "field spec.faults[0]" in err
    assert 'unknown fault mode "gpu_no_such_mode"' in err
    assert len(err.strip().splitlines()) == 1


def test_validate_accepts_a_declared_fault_the_simulator_can_inject(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _generated(
        tmp_path, '  faults:\n    - {mode: gpu_low_pstate, target: "node:hgx-su000-node-0000"}\n'
    )
    assert main(["fleet", "validate", "--fleet", str(path)]) == 0
    assert "2 nodes, 16 GPUs, 1 rack," in capsys.readouterr().out
