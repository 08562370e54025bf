"""gpudirect-rdma as a program: Skips for real on this host (no RDMA device); on a fixture host
with a RoCE device it Skips before the rendezvous without a peer-memory provider, and with one a
server and a client run ``--use_cuda`` phases through stand-ins printing perftest's format."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from perftest_pair import clean_env, free_port, roce_sysfs, run_module, run_pair
from real_runner import assert_contract, run_runner, standalone

from glimmer.contract.parse import parse
from glimmer.contract.vocab import RunnerVerdict

KIND = "gpudirect-rdma"
MODULE = "glimmer.runners.gpudirect_rdma"
FIXTURES = Path(__file__).parent / "fixtures" / "ib-write-bw"


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_module(MODULE, env)


def _sysfs(root: Path, provider: bool) -> Path:
    roce_sysfs(root)
    if provider:
        (root / "kernel" / "mm" / "memory_peers" / "nv_mem").mkdir(parents=True)
    return root


def test_with_no_rdma_device_it_skips_with_the_marker() -> None:
    done = _run(clean_env(BURNIN_ROLE="client", BURNIN_PEER_HOST="10.0.0.1"))
    assert done.returncode == 2, done.stdout
    assert parse(KIND, done.stdout, 2).verdict is RunnerVerdict.SKIP
    assert done.stdout.rstrip().splitlines()[-1].startswith("GPUDIRECT_RDMA_SKIP: ")


def test_without_a_peer_memory_provider_it_skips_before_the_rendezvous(tmp_path: Path) -> None:
    # No server exists: a runner that tried the rendezvous first would wait, then Error.
    env = clean_env(BURNIN_ROLE="client", BURNIN_PEER_HOST="127.0.0.1")
    env["BURNIN_SYSFS_ROOT"] = str(_sysfs(tmp_path, provider=False))
    done = _run(env)
    result = parse(KIND, done.stdout, done.returncode)
    assert done.returncode == 2, done.stdout
    assert "peer-memory provider" in result.message
    assert "nvidia_peermem" in result.message


def test_a_group_rank_is_an_error() -> None:
    assert _run(clean_env(BURNIN_RANK="1", BURNIN_NRANKS="2")).returncode == 3


def test_a_pair_measures_rdma_into_gpu_memory(tmp_path: Path) -> None:
    log = tmp_path / "standin.log"
    env = clean_env(
        BURNIN_SYSFS_ROOT=str(_sysfs(tmp_path / "sys", provider=True)),
        BURNIN_HEALTH_PORT=str(free_port()),
        BURNIN_PERFTEST_PORT=str(free_port()),
        BURNIN_DURATION_SECONDS="25",
        PATH=f"{FIXTURES / 'bin'}:{os.environ['PATH']}",
        STANDIN_LOG=str(log),
        STANDIN_BW=str(FIXTURES / "bw-duration-gbits.txt"),
        STANDIN_LAT=str(FIXTURES / "lat-iterations.txt"),
    )
    client, server = run_pair(MODULE, env)
    assert server.returncode == 0, server.stdout
    result = parse(KIND, client.stdout, client.returncode)
    assert client.returncode == 0, client.stdout
    assert result.metrics == {"bandwidthGbps": "99.61", "latencyUs": "1.71"}
    calls = log.read_text().splitlines()
    assert len(calls) == 4 and all("--use_cuda=0" in line for line in calls)


def test_gpudirect_rdma_runs_with_only_the_contract_beside_it(tmp_path: Path) -> None:
    """No pip, no packages: copies of glimmer/contract and glimmer/runners only."""
    alone = standalone(tmp_path)
    env = {"PYTHONPATH": alone.pythonpath, "BURNIN_ROLE": "server"}
    ran = run_runner("gpudirect-rdma", env, python=alone.python)
    assert_contract(ran)
    assert ran.exit_code == 2, ran.stdout + ran.stderr
    assert ran.stderr == ""
