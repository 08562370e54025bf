"""``glimmer validate`` reads the kinds the certification controllers write (Workflow, Job,
GoodputMeasurement, BandwidthMeasurement) in a fresh process, and refuses a bad field by name
with exit 2, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from tests.api.certify import cluster_kind_samples as samples

PROBE = "import sys; from glimmer.cli.app import main; sys.exit(main(['validate', *sys.argv[1:]]))"


def test_validate_reads_the_controller_kinds_and_names_a_bad_field(tmp_path: Path) -> None:
    # One fresh interpreter (this test process has imported every kind already) for both: the
    # four kinds valid in one file, a Job with an empty health check in the other.
    good = tmp_path / "objects.yaml"
    good.write_text(yaml.safe_dump_all(samples.every_kind()))
    job = samples.job("j")
    job["spec"]["nodeHealthMonitor"]["cel"]["expression"] = ""
    bad = tmp_path / "job.yaml"
    bad.write_text(yaml.safe_dump(job))
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(good), str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    for ref in ("Workflow/", "Job/", "GoodputMeasurement/", "BandwidthMeasurement/"):
        assert f"ok  {ref}" in done.stdout
    [error] = done.stderr.splitlines()
    assert error.startswith(f"error: {bad}:")
    assert "Job/j, field spec.nodeHealthMonitor.cel.expression" in error
