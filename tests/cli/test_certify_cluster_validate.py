"""``glimmer validate`` reads the kinds the certification controllers write (Workflow, Job,
GoodputMeasurement, BandwidthMeasurement) in a fresh process, and refuses a bad field by name
with exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from tests.api.certify import cluster_kind_samples as samples

PROBE = "import sys; from glimmer.cli.app import main; sys.exit(main(['validate', sys.argv[1]]))"


def _validate(path: Path) -> subprocess.CompletedProcess[str]:
    # A fresh interpreter: this test process has imported every kind already.
    return subprocess.run(
        [sys.executable, "-c", PROBE, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_validate_accepts_one_object_of_each_controller_kind(tmp_path: Path) -> None:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all(samples.every_kind()))
    done = _validate(path)
    assert done.returncode == 0, done.stderr
    for ref in ("Workflow/", "Job/", "GoodputMeasurement/", "BandwidthMeasurement/"):
        assert f"ok  {ref}" in done.stdout


def test_validate_refuses_a_bad_job_field_by_name_with_exit_2(tmp_path: Path) -> None:
    job = samples.job("j")
    job["spec"]["nodeHealthMonitor"]["cel"]["expression"] = ""
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    done = _validate(path)
    assert done.returncode == 2
    assert f"{path}:" in done.stderr and "Job/j, field spec.nodeHealthMonitor.cel.expression" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr
