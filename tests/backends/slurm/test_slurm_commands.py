"""Calling Slurm's programs: records parsed, failures named, nothing unbounded."""

from __future__ import annotations

from pathlib import Path

import pytest

from glimmer.backends.slurm.commands import Slurm, SlurmCommandError, key_values, records


def test_a_record_with_spaces_in_its_values_keeps_them_whole() -> None:
    line = (
        "NodeName=n2 Arch=x86_64 State=IDLE+DRAIN OS=Linux 6.1.0-18-amd64 #1 SMP "
        "Reason=glimmer cordon-owner=default/run/uid [root@2026-12-01T10:00:00] Gres=gpu:8"
    )
    fields = key_values(line)
    assert fields["NodeName"] == "n2"
    assert fields["State"] == "IDLE+DRAIN"
    assert fields["OS"] == "Linux 6.1.0-18-amd64 #1 SMP"
    assert fields["Gres"] == "gpu:8"
    # A word with '=' inside a value whose key is already open is kept when it reads as a key:
    # the reason's own "cordon-owner=" has a '-' so it continues the reason.
    assert fields["Reason"] == "glimmer cordon-owner=default/run/uid [root@2026-12-01T10:00:00]"


def test_every_line_of_scontrol_output_is_one_record() -> None:
    text = "JobId=1 JobName=a ExitCode=0:0\n\nJobId=2 JobName=b ExitCode=3:0\n"
    assert [r["JobName"] for r in records(text)] == ["a", "b"]


def test_a_failing_command_is_a_backend_error_naming_it(tmp_path: Path) -> None:
    program = tmp_path / "squeue"
    program.write_text("#!/bin/sh\necho 'slurm_load_jobs error: Unable to contact' >&2\nexit 1\n")
    program.chmod(0o755)
    with pytest.raises(SlurmCommandError, match="squeue -h: exit 1: slurm_load_jobs error"):
        Slurm(bin_dir=str(tmp_path)).run("squeue", "-h")


def test_a_command_that_never_answers_is_cut_off(tmp_path: Path) -> None:
    program = tmp_path / "sinfo"
    program.write_text("#!/bin/sh\nexec sleep 30\n")
    program.chmod(0o755)
    with pytest.raises(SlurmCommandError, match=r"no answer within 0\.5 s"):
        Slurm(bin_dir=str(tmp_path), timeout=0.5).run("sinfo")


def test_a_missing_program_is_named(tmp_path: Path) -> None:
    with pytest.raises(SlurmCommandError, match="cannot start"):
        Slurm(bin_dir=str(tmp_path)).run("scontrol", "ping")
