"""``glimmer-runner <kind>`` and ``python -m glimmer.runners.<kind>`` are one program."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from real_runner import finish, run_runner, runner_env

from glimmer.runners.cli import runnable_kinds

SCRIPT = Path(sys.executable).with_name("glimmer-runner")


def _script(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args], env=runner_env(env), capture_output=True, text=True, check=False
    )


def test_the_console_script_is_installed() -> None:
    assert SCRIPT.is_file() and os.access(SCRIPT, os.X_OK)


def test_an_unknown_kind_is_a_usage_error_exit_2() -> None:
    for args in (("no-such-kind",), (), ("disk-io", "extra")):
        done = _script(*args)
        assert done.returncode == 2
        assert "usage: glimmer-runner <kind>" in done.stderr
        assert done.stdout == ""


def test_help_lists_the_runnable_kinds() -> None:
    done = _script("--help")
    assert done.returncode == 0
    for kind in ("host-health", "disk-io", "fingerprint-probe", "dcgm-diag"):
        assert kind in done.stdout
    assert set(runnable_kinds()) >= {"host-health", "disk-io", "fingerprint-probe", "dcgm-diag"}


def test_the_script_and_the_module_print_the_same(tmp_path: Path) -> None:
    env = {"FINGERPRINT_PROBE_SYSFS": "/sys"}
    done = _script("fingerprint-probe", env=env)
    by_script = finish("fingerprint-probe", done.stdout, done.stderr, done.returncode)
    by_module = run_runner("fingerprint-probe", env)
    assert (by_script.exit_code, by_script.stdout) == (by_module.exit_code, by_module.stdout)
    skip = _script("disk-io")
    assert skip.returncode == 2 and skip.stdout.startswith("DISK_IO_SKIP: ")
