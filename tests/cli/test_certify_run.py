"""``glimmer certify run`` / ``certify report``: the report card, JSON, exit codes, and the
planted NIC fault on ai-factory named with its reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glimmer.cli.app import main

CERT = """\
apiVersion: certify.glimmer.ai/v1alpha1
kind: Certification
metadata: {name: nvl-acceptance, namespace: default}
spec:
  target:
    nodeSelector: {nvidia.com/gpu.product: NVIDIA-GB200}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: diagnose}
    - domain: communication
      variant: nccl-all-gather
      options: {enableMNNVL: false}
    - domain: diagnostics
      variant: dcgm-level2
    - domain: training
      variant: nemotron5-8b
"""


@pytest.fixture
def cert(tmp_path: Path) -> Path:
    path = tmp_path / "cert.yaml"
    path.write_text(CERT)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["certify", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_healthy_fleet_is_certified(capsys: pytest.CaptureFixture[str], cert: Path) -> None:
    code, out, _ = run(capsys, "run", "-f", str(cert), "--fleet", "ai-factory")
    assert code == 0, out
    assert "Certification Report" in out and "Result: PASSED" in out
    assert "Categories: 4/4 passed" in out and "Failed Nodes: 0" in out
    assert "communication/nccl-all-reduce" in out and "Avg Runtime Goodput" in out


def test_planted_nic_fault_names_the_node_and_reason(
    capsys: pytest.CaptureFixture[str], cert: Path
) -> None:
    code, out, _ = run(
        capsys, "run", "-f", str(cert), "--fleet", "ai-factory",
        "--fault", "nic_degraded@nic:nvl-node-0003/eth2",
    )  # fmt: skip
    assert code == 1, out
    assert "Result: FAILED" in out and "Failed Nodes: 1 (nvl-node-0003)" in out
    # The reason is the evidence: the collective, what it measured, the floor and the path.
    assert "nvl-node-0003 (WorkloadFailed): all_reduce busbw" in out
    assert "MNNVL off" in out and "< floor 168.48 GB/s" in out


def test_nic_link_down_json_result(capsys: pytest.CaptureFixture[str], cert: Path) -> None:
    code, out, _ = run(
        capsys, "run", "-f", str(cert), "--fault", "nic_link_down@nic:nvl-node-0011/eth3",
        "--output", "json",
    )  # fmt: skip
    doc = json.loads(out)
    assert code == 1 and doc["result"] == "FAILED" and doc["failedNodes"] == ["nvl-node-0011"]
    gather = doc["categories"][1]
    assert gather["variant"] == "nccl-all-gather" and gather["status"] == "Failed"
    (reason,) = gather["failedNodeReasons"]
    assert reason["name"] == "nvl-node-0011" and "eth3 port state DOWN" in reason["message"]
    assert gather["isolation"]["rounds"] > 0
    training = doc["categories"][3]
    assert training["status"] == "Failed" and "port state DOWN" in training["failureReason"] + str(
        training["failedGroups"]
    )
    statuses = {n["name"]: n["status"] for n in doc["nodeResults"]}
    assert statuses["nvl-node-0011"] == "Failed" and statuses["nvl-node-0000"] == "Passed"


def test_report_prints_the_card_of_a_saved_result(
    capsys: pytest.CaptureFixture[str], cert: Path, tmp_path: Path
) -> None:
    code, out, _ = run(
        capsys, "run", "-f", str(cert), "--fault", "gpu_row_remap@gpu:nvl-node-0005/1", "-o", "json"
    )
    assert code == 1
    saved = tmp_path / "result.json"
    saved.write_text(out)
    code2, card, _ = run(capsys, "report", str(saved))
    assert code2 == 1
    assert "nvl-node-0005 (WorkloadFailed): dcgmi diag --run 2" in card
    assert "row remapping failed" in card and "Result: FAILED" in card


def test_other_architectures_are_excluded_but_certified_nodes_pass(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "all.yaml"
    path.write_text(
        CERT.replace(
            "  target:\n    nodeSelector: {nvidia.com/gpu.product: NVIDIA-GB200}\n",
            "  target: {}\n",
        )
    )
    code, out, _ = run(capsys, "run", "-f", str(path))
    assert code == 0 and "Result: INCOMPLETE" in out
    assert "certified gb200 only" in out and "hgx-node-0001" in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["run", "-f", "/nonexistent.yaml"], "no such file"),
        (["run", "-f", "CERT", "--fault", "nic_degraded"], "missing '@'"),
        (["run", "-f", "CERT", "--fleet", "no-such-fleet"], "no built-in fleet"),
        (["report", "/nonexistent.json"], "cannot read file"),
    ],
)
def test_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str], cert: Path, argv: list[str], needle: str
) -> None:
    code, _, err = run(capsys, *[str(cert) if a == "CERT" else a for a in argv])
    assert code == 2 and needle in err


def test_unknown_category_and_bad_option_are_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(CERT.replace("nccl-all-gather", "nccl-everything"))
    code, _, err = run(capsys, "run", "-f", str(path))
    assert code == 2 and "spec.categories[1]" in err and "not in the catalog" in err
    path.write_text(CERT.replace("{testScale: diagnose}", "{testScale: sideways}"))
    code, _, err = run(capsys, "run", "-f", str(path))
    assert code == 2 and "testScale" in err


def test_a_taint_selector_no_node_carries_is_one_error_naming_its_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "taint.yaml"
    bad.write_text(
        "apiVersion: certify.glimmer.ai/v1alpha1\nkind: Certification\nmetadata: {name: t}\n"
        "spec:\n  target:\n    nodeNames: [hgx-node-0001]\n"
        "    taintSelectors:\n      - {key: dedicated}\n"
        "  categories:\n    - {domain: diagnostics, variant: dcgm-level1}\n"
    )
    code, out, err = run(capsys, "run", "-f", str(bad))
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith(
        f"error: {bad}:7, document 1, Certification/t, field spec.target.taintSelectors: "
    )


def test_include_unschedulable_certifies_a_drained_node(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = (
        "apiVersion: certify.glimmer.ai/v1alpha1\nkind: Certification\nmetadata: {name: t}\n"
        "spec:\n  target:\n    nodeNames: [hgx-node-0001, hgx-node-0002]\n{extra}"
        "  categories:\n    - {domain: diagnostics, variant: dcgm-level1}\n"
    )
    drain = ["--fault", "gpu_node_drain@node:hgx-node-0001", "-o", "json"]
    counts = []
    for extra in ("", "    includeUnschedulable: true\n"):
        path = tmp_path / "c.yaml"
        path.write_text(doc.replace("{extra}", extra))
        code, out, err = run(capsys, "run", "-f", str(path), *drain)
        assert code == 0, err
        counts.append(json.loads(out)["totalNodes"])
    assert counts == [1, 2]


# Issue 9 item 1: each of these once ran the category and condemned healthy nodes, or passed.
AUTHORING_ERRORS = [
    "value >>= fast",
    "value >= abc",
    "400",
    "value => 400",
    "value >= 1e999",
    "true",
]


@pytest.mark.parametrize("expression", AUTHORING_ERRORS)
def test_a_threshold_that_cannot_gate_a_value_is_exit_2_before_any_category_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, expression: str
) -> None:
    path = tmp_path / "cert.yaml"
    path.write_text(
        CERT.replace(
            "options: {testScale: diagnose}",
            f"options: {{thresholds: {{busBandwidthGBps: {json.dumps(expression)}}}}}",
        )
    )
    code, out, err = run(capsys, "run", "-f", str(path))
    assert code == 2 and out == "", out  # no verdict, no report card
    (line,) = err.splitlines()
    assert line.startswith(f"error: {path}:10, document 1, Certification/nvl-acceptance, ")
    assert "field spec.categories[0].options.thresholds.busBandwidthGBps: " in line


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        ("", "no document (the file is empty or holds only comments)"),
        ("# only a comment\n", "no document"),
        (
            "apiVersion: burnin.glimmer.ai/v1alpha1\nkind: BurnInProfile\nmetadata: {name: p}\n"
            "spec:\n  tests: [{testRef: gpu-burn}]\n",
            "BurnInProfile/p",
        ),
    ],
)
def test_a_run_file_without_a_certification_is_refused_naming_what_it_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, holds: str
) -> None:
    path = tmp_path / "wrong.yaml"
    path.write_text(text)
    code, out, err = run(capsys, "run", "-f", str(path))
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(f"error: {path}: holds no Certification to run: it holds ")
    assert holds in line


def test_a_run_file_holding_only_a_fleet_is_refused_naming_what_it_holds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fleet = Path(__file__).parents[2] / "src/glimmer/data/fleets/hgx-fixture.yaml"
    code, out, err = run(capsys, "run", "-f", str(fleet))
    assert (code, out) == (2, "")
    assert err == f"error: {fleet}: holds no Certification to run: it holds Fleet/hgx-fixture\n"


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"\xff\xfe\x00binary", "not UTF-8 text"),
        (b"[1, 2]", "it holds a JSON list"),
        (b'{"apiVersion": "burnin.glimmer.ai/v1alpha1", "kind": "BurnInRun"}', "BurnInRun"),
        (b'{"name": "x", "categories": []}', "it has no gpu, totalNodes"),
        (b"kind: Certification\n", "not JSON"),
    ],
)
def test_report_on_a_file_that_is_not_a_saved_result_is_exit_2_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, why: str
) -> None:
    path = tmp_path / "result.json"
    path.write_bytes(content)
    code, out, err = run(capsys, "report", str(path))
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(f"error: {path}: is not a saved certification result")
    assert why in line and "Traceback" not in err


def test_a_node_name_no_node_of_the_fleet_has_is_refused_at_its_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "cert.yaml"
    path.write_text(
        "apiVersion: certify.glimmer.ai/v1alpha1\nkind: Certification\nmetadata: {name: two}\n"
        "spec:\n  target:\n    nodeNames:\n    - nvl-node-0001\n    - nvl-node-001\n"
        "  categories:\n  - {domain: diagnostics, variant: dcgm-level1}\n"
    )
    code, out, err = run(capsys, "run", "-f", str(path))
    assert (code, out) == (2, "")  # not a one-node certification of what the filter left
    (line,) = err.splitlines()
    assert line.startswith(f"error: {path}:8, document 1, Certification/two, ")
    assert "field spec.target.nodeNames[1]: no node of fleet 'ai-factory' is named" in line


@pytest.mark.parametrize(
    ("flags", "start"),
    [
        (["--fault", "nic_degraded@nic:nvl-node-9999/eth2"], "error: field --fault: fault "),
        (["--fault", "nic_degraded@gpu:nvl-node-0003/0"], "error: field --fault: fault "),
        (["--fleet", "ai-factroy"], "error: field --fleet: no built-in fleet 'ai-factroy'"),
    ],
)
def test_a_flag_value_the_run_cannot_use_is_refused_naming_the_flag(
    capsys: pytest.CaptureFixture[str], cert: Path, flags: list[str], start: str
) -> None:
    code, out, err = run(capsys, "run", "-f", str(cert), *flags)
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(start)


def test_a_gpu_pinned_to_a_low_pstate_fails_the_certification_naming_only_its_node(
    capsys: pytest.CaptureFixture[str], cert: Path
) -> None:
    code, out, _ = run(
        capsys, "run", "-f", str(cert), "--fault", "gpu_low_pstate@gpu:nvl-node-0003/2"
    )
    assert code == 1, out
    assert "Result: FAILED" in out and "Failed Nodes: 1 (nvl-node-0003)" in out
    assert "TFLOP/s (floor 625.00)" in out and 'Threshold "avgTFLOPsPerGPU" violated' in out
