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
import sys
import time
from pathlib import Path

from real_runner import assert_contract, finish, run_runner, standalone

from glimmer.contract.parse import parse
from glimmer.contract.vocab import RunnerVerdict

KIND = "ib-write-bw"
MODULE = "glimmer.runners.ib_write_bw"
FIXTURES = Path(__file__).parent / "fixtures" / "ib-write-bw"
LOOPBACK_GID = "0000:0000:0000:0000:0000:ffff:7f00:0001"  # ::ffff:127.0.0.1


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BURNIN_")}
    env.update(extra)
    return env


def _run(module: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _sysfs(root: Path, state: str = "4: ACTIVE") -> Path:
    """One RoCE device whose RoCE v2 GID 3 carries 127.0.0.1 (where this test's Pair runs)."""
    port = root / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    for sub in ("gids", "gid_attrs/types", "gid_attrs/ndevs"):
        (port / sub).mkdir(parents=True)
    (port / "state").write_text(state + "\n")
    (port / "link_layer").write_text("Ethernet\n")
    for i, kind in ((2, "IB/RoCE v1"), (3, "RoCE v2")):
        (port / "gids" / str(i)).write_text(LOOPBACK_GID + "\n")
        (port / "gid_attrs" / "types" / str(i)).write_text(kind + "\n")
        (port / "gid_attrs" / "ndevs" / str(i)).write_text("lo\n")
    return root


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_with_no_rdma_device_every_role_skips_with_the_marker() -> None:
    assert shutil.which("ib_write_bw"), "perftest is missing: run `make tools`"
    for role in ("server", "client"):
        done = _run(MODULE, _env(BURNIN_ROLE=role, BURNIN_PEER_HOST="10.0.0.1"))
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
    group = _run(MODULE, _env(BURNIN_RANK="0", BURNIN_NRANKS="2", BURNIN_SYSFS_ROOT=sysfs))
    assert group.returncode == 3
    node = _run(MODULE, _env(BURNIN_SYSFS_ROOT=sysfs))
    assert node.returncode == 2
    assert node.stdout.startswith("IB_WRITE_BW_SKIP")


def test_rdma_hardware_with_no_active_port_fails(tmp_path: Path) -> None:
    env = _env(BURNIN_ROLE="client", BURNIN_PEER_HOST="127.0.0.1")
    env["BURNIN_SYSFS_ROOT"] = str(_sysfs(tmp_path, state="1: DOWN"))
    done = _run(MODULE, env)
    result = parse(KIND, done.stdout, done.returncode)
    assert done.returncode == 1, done.stdout
    assert result.verdict is RunnerVerdict.FAIL
    assert "no ACTIVE port" in result.message


def test_an_unknown_measurand_is_an_error() -> None:
    done = _run(MODULE, _env(BURNIN_ROLE="client", BURNIN_VARIANT_MEASURAND="jitter"))
    assert done.returncode == 3
    assert "BURNIN_VARIANT_MEASURAND" in parse(KIND, done.stdout, 3).message


def _pair(
    tmp_path: Path, module: str, client_env: dict[str, str] | None = None, **shared: str
) -> tuple[subprocess.CompletedProcess[str], str, str]:
    """Server and client of ``module`` on this host over the fixture device, with the stand-in
    tools; returns (client run, server stdout, the tools' argument log)."""
    log = tmp_path / "standin.log"
    env = _env(
        BURNIN_SYSFS_ROOT=str(_sysfs(tmp_path / "sys")),
        BURNIN_HEALTH_PORT=str(_free_port()),
        BURNIN_PERFTEST_PORT=str(_free_port()),
        PATH=f"{FIXTURES / 'bin'}:{os.environ['PATH']}",
        STANDIN_LOG=str(log),
        STANDIN_BW=str(FIXTURES / "bw-duration-gbits.txt"),
        STANDIN_LAT=str(FIXTURES / "lat-iterations.txt"),
        **shared,
    )
    server = subprocess.Popen(
        [sys.executable, "-m", module],
        env={**env, "BURNIN_ROLE": "server"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        client = _run(
            module,
            {**env, "BURNIN_ROLE": "client", "BURNIN_PEER_HOST": "127.0.0.1", **(client_env or {})},
        )
        served, _ = server.communicate(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert server.returncode == 0, served
    return client, served, log.read_text() if log.exists() else ""


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
    env = _env(
        BURNIN_ROLE="client",
        BURNIN_PEER_HOST="127.0.0.1",
        BURNIN_HEALTH_PORT=str(_free_port()),
        BURNIN_SYSFS_ROOT=str(_sysfs(tmp_path)),
        PERFTEST_PEER_WAIT_SECONDS="1",
        PATH=f"{FIXTURES / 'bin'}:{os.environ['PATH']}",
    )
    done = _run(MODULE, env)
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
    health = _free_port()
    env = _env(
        BURNIN_SYSFS_ROOT=str(_sysfs(tmp_path / "sys")),
        BURNIN_HEALTH_PORT=str(health),
        BURNIN_PERFTEST_PORT=str(_free_port()),
        BURNIN_VARIANT_MEASURAND="bandwidth",
        PATH=f"{FIXTURES / 'bin'}:{os.environ['PATH']}",
        STANDIN_BW=str(FIXTURES / "bw-duration-gbits.txt"),
    )
    server = subprocess.Popen(
        [sys.executable, "-m", MODULE],
        env={**env, "BURNIN_ROLE": "server"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        for _ in range(600):  # a tcpSocket probe: connect, say nothing, close
            try:
                socket.create_connection(("127.0.0.1", health), 1).close()
                break
            except OSError:
                time.sleep(0.1)
        client = _run(MODULE, {**env, "BURNIN_ROLE": "client", "BURNIN_PEER_HOST": "127.0.0.1"})
        served, _ = server.communicate(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert client.returncode == 0, client.stdout
    assert server.returncode == 0, served
    assert parse(KIND, client.stdout, 0).metrics["bandwidthGbps"] == "99.61"
