import json
import subprocess
import sys
from pathlib import Path

import pytest

from glimmer.cli.app import main

MALFORMED = """\
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInTest
metadata: {name: bad-kind-gate}
spec:
  kind: custom
  thresholds:
    - {metric: eccErrors, comparison: Equal, value: "0"}
    - {metric: sustainedClockS, comparison: GreaterThanOrEqual, value: "70"}
"""


def test_lint_without_paths_lints_the_builtin_profiles_clean(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["lint"]) == 0
    assert "0 malformed, 0 unsound" in capsys.readouterr().out


def test_lint_over_the_samples_exits_1_for_unsound_only(
    shared_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = str(shared_dir / "conformance/glimmer-samples")
    assert main(["lint", samples, "--output", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert {p["object"] for p in report["problems"]} == {
        "BurnInTest/fabric-soak",
        "BurnInTest/fabric-soak-extended",
    }
    assert {p["severity"] for p in report["problems"]} == {"Unsound"}


def test_a_nan_bound_is_refused_at_load_with_exit_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Malformed spellings never get past the schema (as with the CRD's patterns at apply time),
    # so a file carrying one exits 2 before the linter runs.
    bad = tmp_path / "bad.yaml"
    bad.write_text(MALFORMED.replace('value: "70"', 'value: "NaN"'))
    assert main(["lint", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml:8" in err
    assert "spec.thresholds[1].value" in err


def test_unsound_gates_exit_1_and_name_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(MALFORMED.replace("kind: custom", "kind: clockprobe"))
    assert main(["lint", str(suite)]) == 1
    out = capsys.readouterr().out
    # sustainedClockS is unregistered on a built-in kind: Unsound, not Malformed.
    assert "suite.yaml:8" in out
    assert "spec.thresholds[1]" in out
    assert "0 malformed" in out


def test_lint_of_unloadable_input_exits_2_with_one_line_per_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: burnin.glimmer.ai/v1alpha1\nkind: BurnInTest\nspec: [\n")
    assert main(["lint", str(broken)]) == 2
    err = capsys.readouterr().err
    assert "broken.yaml" in err
    assert "Traceback" not in err


def test_lint_exit_codes_through_the_installed_command(shared_dir: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "glimmer.cli",
            "lint",
            str(shared_dir / "conformance/glimmer-samples"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "fabric-soak-extended" in done.stdout


LINT_REPO = Path(__file__).resolve().parents[2]


def test_lint_accepts_a_fleet_as_glimmer_s_own_kind(capsys: pytest.CaptureFixture[str]) -> None:
    fleet = LINT_REPO / "src" / "glimmer" / "data" / "fleets" / "ai-factory.yaml"
    assert main(["lint", "--output", "json", str(fleet)]) == 0
    assert json.loads(capsys.readouterr().out) == {"checked": 1, "problems": []}


def test_lint_refuses_a_fleet_that_breaks_the_fleet_rules_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fleet = LINT_REPO / "tests" / "fixtures" / "fleet-bad" / "overlapping-slots.yaml"
    assert main(["lint", str(fleet)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: {fleet}:39, document 1, Fleet/bad-overlap, field ")
