"""fabric-soak as a program: Skips for real on this host (no RDMA device); a Group rank is an
Error (Appendix C decided); the window must be shorter than the duration; on a fixture host a
server and a client soak in windows through stand-ins printing perftest's format, with the port
counters reported as a delta."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from perftest_pair import clean_env, free_port, roce_sysfs, run_module, run_pair
from real_runner import assert_contract, finish, run_runner, standalone

from glimmer.contract.parse import parse
from glimmer.contract.vocab import RunnerVerdict

KIND = "fabric-soak"
MODULE = "glimmer.runners.fabric_soak"
FIXTURES = Path(__file__).parent / "fixtures" / "ib-write-bw"


def _env(**extra: str) -> dict[str, str]:
    return clean_env(("BURNIN_", "FABRIC_SOAK_"), **extra)


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_module(MODULE, env, timeout=180)


def _sysfs(root: Path) -> Path:
    return roce_sysfs(root, counters=True)


def test_with_no_rdma_device_it_skips_with_the_marker() -> None:
    done = _run(_env(BURNIN_ROLE="server", BURNIN_DURATION_SECONDS="60"))
    assert done.returncode == 2, done.stdout
    assert parse(KIND, done.stdout, 2).verdict is RunnerVerdict.SKIP
    assert done.stdout.rstrip().splitlines()[-1].startswith("FABRIC_SOAK_SKIP: ")


def test_a_group_rank_is_an_error_not_a_skip() -> None:
    done = _run(_env(BURNIN_RANK="0", BURNIN_NRANKS="3"))
    assert done.returncode == 3
    assert parse(KIND, done.stdout, 3).verdict is RunnerVerdict.ERROR


def test_a_window_not_shorter_than_the_duration_is_an_error() -> None:
    done = _run(_env(BURNIN_ROLE="client", BURNIN_DURATION_SECONDS="20"))
    assert done.returncode == 3
    assert "FABRIC_SOAK_WINDOW_SECONDS" in parse(KIND, done.stdout, 3).message


def test_a_soak_reports_window_statistics_and_the_counter_delta(tmp_path: Path) -> None:
    sysfs = _sysfs(tmp_path / "sys")
    env = _env(
        BURNIN_SYSFS_ROOT=str(sysfs),
        BURNIN_HEALTH_PORT=str(free_port()),
        BURNIN_PERFTEST_PORT=str(free_port()),
        BURNIN_DURATION_SECONDS="4",
        FABRIC_SOAK_WINDOW_SECONDS="1",
        PATH=f"{FIXTURES / 'bin'}:{os.environ['PATH']}",
        STANDIN_BW=str(FIXTURES / "bw-duration-gbits.txt"),
    )
    client, server = run_pair(MODULE, env)
    assert server.returncode == 0, server.stdout
    result = parse(KIND, client.stdout, client.returncode)
    assert client.returncode == 0, client.stdout
    assert_contract(finish(KIND, client.stdout, client.stderr, client.returncode))
    windows = int(result.metrics["soakIterations"])
    assert windows >= 1
    assert result.metrics["soakFailedIterations"] == "0"
    assert result.metrics["minBandwidthGbps"] == "99.61"
    assert result.metrics["p1BandwidthGbps"] == "99.61"
    assert result.metrics["meanBandwidthGbps"] == "99.61"
    assert result.metrics["bandwidthStdDevGbps"] == "0.000"
    assert result.metrics["linkErrorEvents"] == "0"
    assert "bandwidthGbps" not in result.metrics  # the soak never prints the single-run name


def test_failed_windows_fail_the_soak_and_are_counted(tmp_path: Path) -> None:
    env = _env(
        BURNIN_SYSFS_ROOT=str(_sysfs(tmp_path / "sys")),
        BURNIN_HEALTH_PORT=str(free_port()),
        BURNIN_PERFTEST_PORT=str(free_port()),
        BURNIN_DURATION_SECONDS="3",
        FABRIC_SOAK_WINDOW_SECONDS="1",
        PATH=f"{FIXTURES / 'bin'}:{os.environ['PATH']}",
        STANDIN_BW=str(FIXTURES / "memlock-cq.txt"),
        STANDIN_EXIT="1",
    )
    client, _ = run_pair(MODULE, env)
    result = parse(KIND, client.stdout, client.returncode)
    assert client.returncode == 1, client.stdout
    assert result.verdict is RunnerVerdict.FAIL
    assert int(result.metrics["soakFailedIterations"]) == int(result.metrics["soakIterations"])
    assert "minBandwidthGbps" not in result.metrics  # no window measured: nothing to fold


def test_fabric_soak_runs_with_only_the_contract_beside_it(tmp_path: Path) -> None:
    """No pip, no packages: copies of glimmer/contract and glimmer/runners only."""
    alone = standalone(tmp_path)
    env = {
        "PYTHONPATH": alone.pythonpath,
        "BURNIN_ROLE": "client",
        "BURNIN_PEER_HOST": "10.0.0.1",
    }
    ran = run_runner("fabric-soak", env, python=alone.python)
    assert_contract(ran)
    assert ran.exit_code == 2, ran.stdout + ran.stderr
    assert ran.stderr == ""
