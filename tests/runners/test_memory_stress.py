"""memory-stress for real: stressapptest on this machine (a small region, a few seconds), its
output read by the contract parser as the engine reads it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from real_runner import assert_contract, finish, run_runner, standalone

from glimmer.contract.parse import parse
from glimmer.contract.vocab import RunnerVerdict

KIND = "memory-stress"
MIB = 1024 * 1024


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BURNIN_")}
    env.update(extra)
    return env


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "glimmer.runners.memory_stress"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def stressapptest() -> str:
    found = shutil.which("stressapptest")
    if found is None:
        pytest.fail(
            "stressapptest is missing: run `make tools` (tests/tools/ensure_stressapptest.sh)"
        )
    return found


def _fixture_host(tmp: Path, *, available_mib: int, limit_mib: int | None) -> dict[str, str]:
    proc, sysfs = tmp / "proc", tmp / "sys"
    (proc / "self").mkdir(parents=True)
    (proc / "meminfo").write_text(
        f"MemTotal: {4 * available_mib * 1024} kB\nMemAvailable: {available_mib * 1024} kB\n"
    )
    (proc / "self" / "cgroup").write_text("0::/job\n")
    job = sysfs / "fs" / "cgroup" / "job"
    job.mkdir(parents=True)
    (job / "memory.max").write_text("max\n" if limit_mib is None else f"{limit_mib * MIB}\n")
    return {"BURNIN_PROC_ROOT": str(proc), "BURNIN_SYSFS_ROOT": str(sysfs)}


def test_a_real_run_passes_with_real_bandwidth(stressapptest: str) -> None:
    done = _run(_env(BURNIN_DURATION_SECONDS="3", BURNIN_MEMORY_MB="64", BURNIN_MEMORY_THREADS="1"))
    result = parse(KIND, done.stdout, done.returncode)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_contract(finish(KIND, done.stdout, done.stderr, done.returncode))
    assert result.verdict is RunnerVerdict.PASS
    assert result.metrics["memoryErrors"] == "0"
    assert result.metrics["miscompares"] == "0"
    assert result.metrics["sdcDetections"] == "0"
    assert float(result.metrics["readBandwidthMBs"]) > 0
    assert result.metrics["readBandwidthMBs"] == result.metrics["writeBandwidthMBs"]
    assert result.metrics["satStatus"] == "pass"
    assert result.metrics["tool"] == "stressapptest"
    assert result.metrics["threads"] == "1"
    assert result.metrics["durationRequestedS"] == "3"
    assert "elapsedS" in result.metrics
    assert done.stdout.rstrip().splitlines()[-1].startswith("STRESSAPPTEST_PASS")


def test_injected_errors_are_a_real_fail(stressapptest: str) -> None:
    done = _run(
        _env(
            BURNIN_DURATION_SECONDS="2",
            BURNIN_MEMORY_MB="32",
            BURNIN_MEMORY_THREADS="1",
            BURNIN_MEMORY_EXTRA_ARGS="--force_errors",
        )
    )
    result = parse(KIND, done.stdout, done.returncode)
    assert done.returncode == 1, done.stdout
    assert result.verdict is RunnerVerdict.FAIL
    assert int(result.metrics["memoryErrors"]) > 0
    assert result.metrics["satStatus"] == "fail-hardware"


def test_sizing_comes_from_the_cgroup_limit_and_mem_available(
    stressapptest: str, tmp_path: Path
) -> None:
    host = _fixture_host(tmp_path, available_mib=4096, limit_mib=100)
    done = _run(
        _env(
            BURNIN_DURATION_SECONDS="2",
            BURNIN_MEMORY_MIN_MB="32",
            BURNIN_MEMORY_THREADS="1",
            **host,
        )
    )
    assert done.returncode == 0, done.stdout
    assert "-M 70 " in done.stdout  # 70 % of the 100 MiB limit, not of MemAvailable
    assert "cgroup limit 100 MiB" in done.stdout


def test_a_too_small_cgroup_limit_is_an_error_naming_the_knob(tmp_path: Path) -> None:
    host = _fixture_host(tmp_path, available_mib=4096, limit_mib=128)
    done = _run(_env(BURNIN_DURATION_SECONDS="2", **host))
    result = parse(KIND, done.stdout, done.returncode)
    assert done.returncode == 3
    assert result.verdict is RunnerVerdict.ERROR
    assert "spec.resources.limits.memory" in result.message
    assert "BURNIN_MEMORY_MB" in result.message


def test_a_machine_too_small_without_a_limit_skips_with_the_marker(tmp_path: Path) -> None:
    host = _fixture_host(tmp_path, available_mib=200, limit_mib=None)
    done = _run(_env(BURNIN_DURATION_SECONDS="2", **host))
    result = parse(KIND, done.stdout, done.returncode)
    assert done.returncode == 2
    assert result.verdict is RunnerVerdict.SKIP
    assert done.stdout.rstrip().splitlines()[-1].startswith("STRESSAPPTEST_SKIP: ")


def test_a_missing_stressapptest_is_an_error_naming_tool_and_package(tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    done = _run(_env(PATH=str(bare), BURNIN_DURATION_SECONDS="2", BURNIN_MEMORY_MB="16"))
    result = parse(KIND, done.stdout, done.returncode)
    assert done.returncode == 3
    assert result.verdict is RunnerVerdict.ERROR
    # The tool and the Debian package that ships it (both named stressapptest).
    assert result.message.count("stressapptest") >= 2
    assert "package" in result.message
    assert "memoryErrors" not in result.metrics


def test_a_malformed_fraction_is_an_error_naming_the_variable() -> None:
    done = _run(_env(BURNIN_MEMORY_FRACTION="70"))
    assert done.returncode == 3
    assert "BURNIN_MEMORY_FRACTION" in parse(KIND, done.stdout, 3).message


def test_sigterm_mid_run_is_an_error_with_no_counters(stressapptest: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "glimmer.runners.memory_stress"],
        env=_env(BURNIN_DURATION_SECONDS="60", BURNIN_MEMORY_MB="32", BURNIN_MEMORY_THREADS="1"),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:  # wait until stressapptest has been started
        seen.append(line)
        if line.startswith("running:"):
            break
    proc.send_signal(signal.SIGTERM)
    rest, _ = proc.communicate(timeout=60)
    stdout = "".join(seen) + rest
    result = parse(KIND, stdout, proc.returncode)
    assert proc.returncode == 3, stdout
    assert result.verdict is RunnerVerdict.ERROR
    assert "memoryErrors" not in result.metrics
    assert "readBandwidthMBs" not in result.metrics


def test_memory_stress_runs_with_only_the_contract_beside_it(tmp_path: Path) -> None:
    """No pip, no packages: copies of glimmer/contract and glimmer/runners only."""
    alone = standalone(tmp_path)
    env = {
        "PYTHONPATH": alone.pythonpath,
        "BURNIN_DURATION_SECONDS": "2",
        "BURNIN_MEMORY_MB": "16",
        "BURNIN_MEMORY_THREADS": "1",
    }
    ran = run_runner("memory-stress", env, python=alone.python)
    assert_contract(ran)
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    assert ran.stderr == ""
