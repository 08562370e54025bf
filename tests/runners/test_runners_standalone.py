"""The runners need nothing but the standard library and glimmer.contract: each one runs in a
fresh virtual environment (no pip, no packages) holding only copies of glimmer/contract and
glimmer/runners, without even glimmer/__init__.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

from real_runner import assert_contract, run_runner, standalone


def test_each_runner_runs_with_only_the_contract_beside_it(tmp_path: Path) -> None:
    alone = standalone(tmp_path)
    python, pkgs = alone.python, Path(alone.pythonpath)
    assert not (pkgs / "glimmer" / "__init__.py").exists()
    env = {"PYTHONPATH": str(pkgs)}
    isolated = subprocess.run(
        [python, "-c", "import glimmer.runners, pydantic"],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert "No module named 'pydantic'" in isolated.stderr  # nothing else is installed there
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    cases = {
        "host-health": ({"BURNIN_DURATION_SECONDS": "1"}, 0),
        "disk-io": ({"DISK_IO_PATH": str(scratch), "DISK_IO_SIZE_MB": "4"}, 0),
        "fingerprint-probe": ({"FINGERPRINT_PROBE_SYSFS": "/sys"}, 0),
        "dcgm-diag": ({"PATH": "/usr/bin:/bin"}, 3),  # no DCGM here: Error naming dcgmi
        "clockprobe": ({}, 2),  # no torch and no GPU there: the declared Skip
        "thermal-soak": ({}, 2),
        "gpu-burn": ({}, 2),
        "gemm-sweep": ({"BURNIN_VARIANT_PRECISION": "bf16"}, 2),
        "compute-smoke": ({}, 2),
        "memory-bw": ({}, 2),
        "nccl": ({}, 2),
    }
    for kind, (kind_env, code) in cases.items():
        ran = run_runner(kind, {**env, **kind_env}, python=python)
        assert_contract(ran)
        assert ran.exit_code == code, (kind, ran.stdout, ran.stderr)
        assert ran.stderr == "", (kind, ran.stderr)
    script = subprocess.run(
        [python, "-m", "glimmer.runners.cli", "fingerprint-probe"],
        env={**env, "FINGERPRINT_PROBE_SYSFS": "/sys"}, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert script.returncode == 0, script.stderr
