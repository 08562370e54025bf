"""The default runner command: ``glimmer-runner <kind>`` of this install, run by the local
substrate for real. disk-io (§9.14, standard library only) writes and reads a small file under
tmp_path with O_DIRECT; the run reaches the verdict the runner declared, with its real figures.
Only the runner's command line and §9.14's contract are relied on, not its internals."""

from __future__ import annotations

from pathlib import Path

from local_world import NODE, drive, profile, run_object

from glimmer.api.test import BurnInTestSpec
from glimmer.backends.local.backend import LocalBackend
from glimmer.contract.vocab import Phase

MARKERS = ("DISK_IO_PASS", "DISK_IO_FAIL", "DISK_IO_SKIP", "DISK_IO_ERROR")


def test_the_default_runner_command_runs_glimmer_runner_disk_io_on_this_host(
    tmp_path: Path,
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    disk = BurnInTestSpec.model_validate(
        {
            "kind": "disk-io",
            "durationSeconds": 30,
            "runner": {
                "image": "local",  # disk-io has no default image; a process needs none
                "env": [
                    {"name": "DISK_IO_PATH", "value": str(scratch)},
                    {"name": "DISK_IO_SIZE_MB", "value": "8"},
                ],
                "hostPaths": [{"path": str(scratch), "mountPath": str(scratch), "readOnly": False}],
            },
        }
    )
    b = LocalBackend(
        tmp_path / "state", NODE, profiles={"prof": profile(["disk"])}, tests={"disk": disk}
    )
    b.submit(run_object())
    final = drive(b, poll=0.1)
    assert final.status is not None
    [result] = final.status.results or []
    [execution] = list(b.executions("default", "run", final.metadata.uid or ""))
    log = b.read_log("default", execution.name)
    assert any(marker in log for marker in MARKERS), log
    if result.phase is Phase.PASSED:  # O_DIRECT works here: the figures are real
        assert result.metrics is not None and float(result.metrics["writeBandwidthMBs"]) > 0
    else:  # e.g. a filesystem without O_DIRECT: declared by the runner, never our guess
        assert result.phase in (Phase.SKIPPED, Phase.ERROR, Phase.FAILED), log
