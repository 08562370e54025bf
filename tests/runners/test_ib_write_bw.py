"""ib-write-bw as a program: on this host (no RDMA device) it Skips with its marker for real;
against fixture sysfs trees (an RDMA device this host lacks) it Fails on a port that is not
ACTIVE, and a server and a client on this host run the whole control connection, the device and
GID selection and the memlock fit, with stand-ins for perftest's tools printing perftest's own
report format."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from perftest_pair import clean_env, free_port, roce_sysfs, run_module, run_pair
from real_runner import assert_contract, finish, run_runner, standalone

from glimmer.contract.parse import parse
from glimmer.contract.vocab import RunnerVerdict

KIND = "ib-write-bw"
MODULE = "glimmer.runners.ib_write_bw"
FIXTURES = Path(__file__).parent / "fixtures" / "ib-write-bw"


def _sysfs(root: Path, state: str = "4: ACTIVE") -> Path:
    """One RoCE device whose RoCE v2 GID 3 carries 127.0.0.1 (where this test's Pair runs)."""
    return roce_sysfs(root, state, gids=((2, "IB/RoCE v1"), (3, "RoCE v2")))


def test_with_no_rdma_device_every_role_skips_with_the_marker() -> None:
    assert shutil.which("ib_write_bw"), "perftest is missing: run `make tools`"
    for role in ("server", "client"):
        done = run_module(MODULE, clean_env(BURNIN_ROLE=role, BURNIN_PEER_HOST="10.0.0.1"))
        result = parse(KIND, done.stdout, done.returncode)
        assert done.returncode == 2, done.stdout
        assert result.verdict is RunnerVerdict.SKIP
        assert done.stdout.rstrip().splitlines()[-1].startswith("IB_WRITE_BW_SKIP: ")
        assert "no RDMA device" in result.message


def test_a_group_rank_is_an_error_before_any_hardware_and_node_scope_skips(
    tmp_path: Path,
) -> None:
    # The fixture has a device whose port is down: a Group rank must not even look at it.
    sysfs = str(_sysfs(tmp_path, state="1: DOWN"))
    group = run_module(
        MODULE, clean_env(BURNIN_RANK="0", BURNIN_NRANKS="2", BURNIN_SYSFS_ROOT=sysfs)
    )
    assert group.returncode == 3
    node = run_module(MODULE, clean_env(BURNIN_SYSFS_ROOT=sysfs))
    assert node.returncode == 2
    assert node.stdout.startswith("IB_WRITE_BW_SKIP")


def test_rdma_hardware_with_no_active_port_fails(tmp_path: Path) -> None:
    env = clean_env(BURNIN_ROLE="client", BURNIN_PEER_HOST="127.0.0.1")
    env["BURNIN_SYSFS_ROOT"] = str(_sysfs(tmp_path, state="1: DOWN"))
    done = run_module(MODULE, env)
    result = parse(KIND, done.stdout, done.returncode)
    assert done.returncode == 1, done.stdout
    assert result.verdict is RunnerVerdict.FAIL
    assert "no ACTIVE port" in result.message


def test_an_unknown_measurand_is_an_error() -> None:
    done = run_module(MODULE, clean_env(BURNIN_ROLE="client", BURNIN_VARIANT_MEASURAND="jitter"))
    assert done.returncode == 3
    assert "BURNIN_VARIANT_MEASURAND" in parse(KIND, done.stdout, 3).message


def _pair(
    tmp_path: Path, module: str, client_env: dict[str, str] | None = None, **shared: str
) -> tuple[subprocess.CompletedProcess[str], str, str]:
    """Server and client of ``module`` on this host over the fixture device, with the stand-in
    tools; returns (client run, server stdout, the tools' argument log)."""
    log = tmp_path / "standin.log"
    env = clean_env(
        BURNIN_SYSFS_ROOT=str(_sysfs(tmp_path / "sys")),
        BURNIN_HEALTH_PORT=str(free_port()),
        BURNIN_PERFTEST_PORT=str(free_port()),
        PATH=f"{FIXTURES / 'bin'}:{os.environ['PATH']}",
        STANDIN_LOG=str(log),
        STANDIN_BW=str(FIXTURES / "bw-duration-gbits.txt"),
        STANDIN_LAT=str(FIXTURES / "lat-iterations.txt"),
        **shared,
    )
    client, server = run_pair(module, env, client_env)
    assert server.returncode == 0, server.stdout
    return client, server.stdout, log.read_text() if log.exists() else ""


def test_a_pair_runs_both_phases_over_the_control_connection(tmp_path: Path) -> None:
    client, served, calls = _pair(tmp_path, MODULE, BURNIN_DURATION_SECONDS="25")
    result = parse(KIND, client.stdout, client.returncode)
    assert client.returncode == 0, client.stdout
    assert_contract(finish(KIND, client.stdout, client.stderr, client.returncode))
    assert result.metrics["bandwidthGbps"] == "99.61"
    assert result.metrics["messageRateMpps"] == "0.011874"
    assert result.metrics["latencyUs"] == "1.71"
    assert result.metrics["minLatencyUs"] == "1.58"
    assert result.metrics["maxLatencyUs"] == "6.11"
    assert result.metrics["p99LatencyUs"] == "1.96"
    assert "peakBandwidthGbps" not in result.metrics  # duration mode's 0.00 is never a peak
    lines = calls.splitlines()
    bw = [line for line in lines if line.startswith("ib_write_bw")]
    assert len(bw) == 2  # the server's end and the client's end
    assert all("-d mlx5_0 -i 1 -x 3" in line for line in lines)  # the RoCE v2 GID of 127.0.0.1
    assert all("-D 5 --report_gbits" in line for line in bw)  # duration - 20 s
    assert "device: mlx5_0 port 1" in served
    assert any(line.endswith("127.0.0.1") for line in bw)


def test_a_latency_cell_reports_no_bandwidth(tmp_path: Path) -> None:
    client, _, calls = _pair(tmp_path, MODULE, BURNIN_VARIANT_MEASURAND="latency")
    result = parse(KIND, client.stdout, client.returncode)
    assert client.returncode == 0, client.stdout
    assert "bandwidthGbps" not in result.metrics
    assert result.metrics["latencyUs"] == "1.71"
    assert "ib_write_bw" not in calls


def test_a_run_that_carried_no_traffic_fails(tmp_path: Path) -> None:
    client, _, _ = _pair(
        tmp_path,
        MODULE,
        client_env={"STANDIN_BW": str(FIXTURES / "bw-no-traffic.txt")},
        BURNIN_VARIANT_MEASURAND="bandwidth",
    )
    assert client.returncode == 1, client.stdout
    assert "no traffic" in parse(KIND, client.stdout, 1).message


def test_a_report_in_the_wrong_unit_is_an_error(tmp_path: Path) -> None:
    client, _, _ = _pair(
        tmp_path,
        MODULE,
        client_env={"STANDIN_BW": str(FIXTURES / "bw-duration-mbytes.txt")},
        BURNIN_VARIANT_MEASURAND="bandwidth",
    )
    assert client.returncode == 3, client.stdout
    assert "Gb/sec" in parse(KIND, client.stdout, 3).message


def test_a_peer_that_never_appears_is_an_error(tmp_path: Path) -> None:
    env = clean_env(
        BURNIN_ROLE="client",
        BURNIN_PEER_HOST="127.0.0.1",
        BURNIN_HEALTH_PORT=str(free_port()),
        BURNIN_SYSFS_ROOT=str(_sysfs(tmp_path)),
        PERFTEST_PEER_WAIT_SECONDS="1",
        PATH=f"{FIXTURES / 'bin'}:{os.environ['PATH']}",
    )
    done = run_module(MODULE, env)
    assert done.returncode == 3, done.stdout
    assert "never appeared" in parse(KIND, done.stdout, 3).message


def test_ib_write_bw_runs_with_only_the_contract_beside_it(tmp_path: Path) -> None:
    """No pip, no packages: copies of glimmer/contract and glimmer/runners only."""
    alone = standalone(tmp_path)
    env = {
        "PYTHONPATH": alone.pythonpath,
        "BURNIN_ROLE": "client",
        "BURNIN_PEER_HOST": "10.0.0.1",
    }
    ran = run_runner("ib-write-bw", env, python=alone.python)
    assert_contract(ran)
    assert ran.exit_code == 2, ran.stdout + ran.stderr
    assert ran.stderr == ""


def test_a_readiness_probe_on_the_control_port_does_not_take_the_clients_place(
    tmp_path: Path,
) -> None:
    health = free_port()
    env = clean_env(
        BURNIN_SYSFS_ROOT=str(_sysfs(tmp_path / "sys")),
        BURNIN_HEALTH_PORT=str(health),
        BURNIN_PERFTEST_PORT=str(free_port()),
        BURNIN_VARIANT_MEASURAND="bandwidth",
        PATH=f"{FIXTURES / 'bin'}:{os.environ['PATH']}",
        STANDIN_BW=str(FIXTURES / "bw-duration-gbits.txt"),
    )

    def probe() -> None:
        for _ in range(600):  # a tcpSocket probe: connect, say nothing, close
            try:
                socket.create_connection(("127.0.0.1", health), 1).close()
                return
            except OSError:
                time.sleep(0.1)

    client, server = run_pair(MODULE, env, before_client=probe)
    assert client.returncode == 0, client.stdout
    assert server.returncode == 0, server.stdout
    assert parse(KIND, client.stdout, 0).metrics["bandwidthGbps"] == "99.61"
