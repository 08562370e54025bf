"""Bad flag values of ``glimmer run``, ``glimmer schedule run``, ``glimmer profiles`` and
``glimmer fingerprint``, as a table: each is exit 2 with one stderr line naming the flag or the
file (and its field), no traceback, and nothing written in the working directory (no
glimmer-report/, no .glimmer/ outbox, no partial file)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from glimmer.cli.app import main

ROOT = Path(__file__).resolve().parents[2]
CERTIFICATION = ROOT / "tests" / "certify" / "catalog" / "samples" / "certification-h100.yaml"
FLEET = ROOT / "src" / "glimmer" / "data" / "fleets" / "ai-factory.yaml"
API = "apiVersion: burnin.glimmer.ai/v1alpha1\n"

# Input files, written into their own folder (never the working directory) before each case.
INPUTS = {
    "empty.yaml": "",
    "comments.yaml": "# to be written\n",
    "run.yaml": API + "kind: BurnInRun\nmetadata: {name: r}\n"
    "spec: {profileRef: smoke, target: {nodeNames: [hgx-node-0001]}}\n",
    "typo.yaml": API + "kind: BurnInProfile\nmetadata: {name: mine}\n"
    "spec:\n  tests:\n    - testRef: clock-smok\n",
    "schedule.yaml": API + "kind: BurnInSchedule\nmetadata: {name: nightly}\n"
    "spec:\n  schedule: '0 3 * * *'\n  profileRef: smoke\n"
    "  target: {nodeNames: [hgx-node-0001]}\n",
    "ghost-schedule.yaml": API + "kind: BurnInSchedule\nmetadata: {name: nightly}\n"
    "spec:\n  schedule: '0 3 * * *'\n  profileRef: smoke\n"
    "  target:\n    nodeNames: [hgx-node-0001, hgx-node-0404]\n",
}


@dataclass(frozen=True)
class Case:
    """One command line and what its single error line must say."""

    argv: tuple[str, ...]
    says: tuple[str, ...]  # substrings of the one error line ({in} is the inputs folder)


CASES = {
    "run-duplicate-nodes": Case(
        ("run", "--nodes", "hgx-node-0001,hgx-node-0002,hgx-node-0001"),
        ("--nodes: hgx-node-0001 named more than once",),
    ),
    "run-empty-node-in-list": Case(
        ("run", "--nodes", "hgx-node-0001,,hgx-node-0002"), ("--nodes", "separated by commas")
    ),
    "run-unknown-node": Case(
        ("run", "--nodes", "hgx-node-0404"), ("--nodes: unknown node hgx-node-0404",)
    ),
    "run-max-concurrent-zero": Case(
        ("run", "--max-concurrent", "0"), ("--max-concurrent 0: must be 1 or more",)
    ),
    "run-unknown-profile": Case(
        ("run", "--profile", "acceptence"), ("--profile acceptence: unknown profile",)
    ),
    "run-empty-file": Case(
        ("run", "-f", "{in}/empty.yaml"), ("{in}/empty.yaml: -f: holds no BurnInTest",)
    ),
    "run-comments-only-file": Case(
        ("run", "-f", "{in}/comments.yaml"), ("{in}/comments.yaml: -f: holds no BurnInTest",)
    ),
    "run-empty-file-with-a-sink-and-a-report-folder": Case(
        ("run", "-f", "{in}/empty.yaml", "--sink", "file=out.jsonl", "--report", "reports"),
        ("{in}/empty.yaml: -f: holds no BurnInTest",),
    ),
    "run-planner-would-refuse": Case(
        (
            "run",
            "--profile",
            "pair-network",
            "--nodes",
            "nvl-node-0005,nvl-node-0004",
            "--max-concurrent",
            "1",
        ),
        ("the run cannot start: Pair test", "maxConcurrentNodes is 1"),
    ),
    "run-file-holding-a-certification": Case(
        ("run", "-f", str(CERTIFICATION)),
        (f"{CERTIFICATION}:", "not a Certification; glimmer certify run -f reads it"),
    ),
    "run-file-holding-a-fleet": Case(
        ("run", "-f", str(FLEET)), (f"{FLEET}:", "not a Fleet; --fleet reads it")
    ),
    "run-file-with-an-unknown-test-ref": Case(
        ("run", "-f", "{in}/typo.yaml"),
        ("{in}/typo.yaml:6,", "field spec.tests[0].testRef", '"clock-smok"'),
    ),
    "run-fleet-holding-a-certification": Case(
        ("run", "--fleet", str(CERTIFICATION)), (f"{CERTIFICATION}:", "not a Fleet")
    ),
    "run-fault-and-no-faults": Case(
        ("run", "--fault", "gpu_low_pstate@gpu:hgx-node-0001/3", "--no-faults"),
        ("--fault and --no-faults",),
    ),
    "run-fault-on-unknown-node": Case(
        ("run", "--fault", "gpu_low_pstate@gpu:hgx-node-0404/3"), ("hgx-node-0404",)
    ),
    "run-later-backend": Case(("run", "--backend", "slurm"), ("--backend slurm",)),
    "schedule-empty-file": Case(
        ("schedule", "run", "-f", "{in}/empty.yaml"),
        ("{in}/empty.yaml: -f: holds no BurnInSchedule",),
    ),
    "schedule-file-holding-a-run": Case(
        ("schedule", "run", "-f", "{in}/run.yaml"),
        ("{in}/run.yaml:1,", "not a BurnInRun; glimmer run -f reads it"),
    ),
    "schedule-unknown-node": Case(
        ("schedule", "run", "-f", "{in}/ghost-schedule.yaml"),
        ("{in}/ghost-schedule.yaml:8,", "field spec.target.nodeNames[1]", "hgx-node-0404"),
    ),
    "schedule-until-not-a-duration": Case(
        ("schedule", "run", "-f", "{in}/schedule.yaml", "--until", "a week"), ("--until",)
    ),
    "schedule-fleet-holding-a-certification": Case(
        ("schedule", "run", "-f", "{in}/schedule.yaml", "--fleet", str(CERTIFICATION)),
        (f"{CERTIFICATION}:", "not a Fleet"),
    ),
    "profiles-unknown-name": Case(
        ("profiles", "acceptence"), ("NAME acceptence: no built-in profile or test",)
    ),
    "profiles-unknown-name-as-json": Case(
        ("profiles", "clock-smok", "-o", "json"), ("NAME clock-smok",)
    ),
    "fingerprint-against-a-run-file": Case(
        (
            "fingerprint",
            "--fleet",
            "ai-factory",
            "--node",
            "hgx-node-0001",
            "--against",
            "{in}/run.yaml",
        ),
        ("{in}/run.yaml:1,", "--against takes NodeFingerprint, not a BurnInRun"),
    ),
}


def test_the_table_holds_at_least_twelve_bad_flags() -> None:
    assert len(CASES) >= 12


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_bad_flag_is_exit_2_with_one_line_and_nothing_written(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    inputs, cwd = tmp_path / "inputs", tmp_path / "cwd"
    inputs.mkdir()
    cwd.mkdir()
    for file_name, text in INPUTS.items():
        (inputs / file_name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(cwd)
    case = CASES[name]
    code = main([arg.replace("{in}", str(inputs)) for arg in case.argv])
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert code == 2, captured.out + captured.err
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    assert "Traceback" not in captured.err
    for words in case.says:
        assert words.replace("{in}", str(inputs)) in lines[0], lines[0]
    assert captured.out == ""
    assert sorted(p.name for p in cwd.iterdir()) == []
