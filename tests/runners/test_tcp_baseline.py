"""tcp-baseline for real: an iperf3 server runner and a client runner in two network namespaces
this test creates (a veth pair between them for the fabric, and in each a management veth pair
holding the default route), a real throughput parsed as the engine parses it; and the guard
itself, in a namespace whose only route is the default one. Traffic stays inside the
namespaces made here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from real_runner import assert_contract, finish, run_runner, standalone

from glimmer.contract.parse import parse
from glimmer.contract.vocab import RunnerVerdict

KIND = "tcp-baseline"
MODULE = "glimmer.runners.tcp_baseline"
SERVER_IP, CLIENT_IP = "10.77.0.1", "10.77.0.2"


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@dataclass(frozen=True)
class Hosts:
    server: str  # namespace names
    client: str
    lonely: str  # management only: the guard's one-NIC node
    server_fabric: str
    client_fabric: str
    client_mgmt: str
    lonely_mgmt: str


def _mgmt(ns: str, name: str, subnet: int) -> None:
    """A veth pair with both ends inside ``ns``, the first holding the default route."""
    _ip("-n", ns, "link", "add", f"{name}0", "type", "veth", "peer", "name", f"{name}1")
    _ip("-n", ns, "addr", "add", f"10.78.{subnet}.1/24", "dev", f"{name}0")
    _ip("-n", ns, "link", "set", f"{name}0", "up")
    _ip("-n", ns, "link", "set", f"{name}1", "up")
    _ip("-n", ns, "route", "add", "default", "via", f"10.78.{subnet}.2", "dev", f"{name}0")


@pytest.fixture(scope="module")
def hosts() -> Iterator[Hosts]:
    if shutil.which("iperf3") is None:
        pytest.fail("iperf3 is missing: run `make tools` (tests/tools/ensure_iperf3.sh)")
    tag = f"tb{os.getpid() % 100000}"
    h = Hosts(
        server=f"{tag}-srv",
        client=f"{tag}-cli",
        lonely=f"{tag}-one",
        server_fabric=f"{tag}f0",
        client_fabric=f"{tag}f1",
        client_mgmt=f"{tag}m10",
        lonely_mgmt=f"{tag}m20",
    )
    made: list[str] = []
    try:
        for ns in (h.server, h.client, h.lonely):
            _ip("netns", "add", ns)
            made.append(ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        _ip(
            "link",
            "add",
            h.server_fabric,
            "netns",
            h.server,
            "type",
            "veth",
            "peer",
            "name",
            h.client_fabric,
            "netns",
            h.client,
        )
        _ip("-n", h.server, "addr", "add", f"{SERVER_IP}/24", "dev", h.server_fabric)
        _ip("-n", h.client, "addr", "add", f"{CLIENT_IP}/24", "dev", h.client_fabric)
        _ip("-n", h.server, "link", "set", h.server_fabric, "up")
        _ip("-n", h.client, "link", "set", h.client_fabric, "up")
        _mgmt(h.server, f"{tag}m0", 0)
        _mgmt(h.client, f"{tag}m1", 1)
        _mgmt(h.lonely, f"{tag}m2", 2)
        yield h
    except subprocess.CalledProcessError as exc:
        pytest.fail(f"`ip {' '.join(exc.cmd[1:])}` was refused: {exc.stderr.strip()}")
    finally:
        for ns in made:  # deleting a namespace removes the veths inside it
            subprocess.run(["ip", "netns", "delete", ns], check=False, capture_output=True)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BURNIN_", "TCP_BASELINE_"))}
    env.update(extra)
    return env


def _in(ns: str) -> list[str]:
    return ["ip", "netns", "exec", ns, sys.executable, "-m", MODULE]


def _run(ns: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _in(ns), env=_env(**env), capture_output=True, text=True, timeout=300, check=False
    )


def test_a_pair_across_two_namespaces_measures_real_throughput(hosts: Hosts) -> None:
    server = subprocess.Popen(
        _in(hosts.server),
        env=_env(
            BURNIN_ROLE="server",
            BURNIN_DURATION_SECONDS="2",
            TCP_BASELINE_INTERFACE=hosts.server_fabric,
            BURNIN_PEER_NODE="client-node",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        client = _run(
            hosts.client,
            BURNIN_ROLE="client",
            BURNIN_PEER_HOST=SERVER_IP,
            BURNIN_DURATION_SECONDS="2",
        )
        served, _ = server.communicate(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    result = parse(KIND, client.stdout, client.returncode)
    assert client.returncode == 0, client.stdout + client.stderr
    assert_contract(finish(KIND, client.stdout, client.stderr, client.returncode))
    assert result.verdict is RunnerVerdict.PASS
    assert float(result.metrics["tcpThroughputGbps"]) > 0
    assert int(result.metrics["tcpRetransmits"]) >= 0  # a real count, reported even at 0
    assert float(result.metrics["tcpRttUs"]) > 0
    assert result.metrics["tcpTestInterface"] == hosts.client_fabric
    assert result.metrics["tcpMgmtInterface"] == hosts.client_mgmt
    assert result.metrics["tcpNetNamespace"] == hosts.client
    assert float(result.metrics["elapsedS"]) > 0
    server_result = parse(KIND, served, server.returncode)
    assert server.returncode == 0, served
    assert server_result.metrics["tcpTestInterface"] == hosts.server_fabric
    assert "client-node" in server_result.message


def test_a_connection_that_brings_no_test_restarts_the_server(hosts: Hosts) -> None:
    server = subprocess.Popen(
        _in(hosts.server),
        env=_env(
            BURNIN_ROLE="server",
            BURNIN_DURATION_SECONDS="1",
            TCP_BASELINE_PORT="5301",
            TCP_BASELINE_INTERFACE=hosts.server_fabric,
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        probe = "import socket,sys,time\nfor _ in range(100):\n" + (
            "    try:\n        socket.create_connection((sys.argv[1], 5301), 1).close(); break\n"
            "    except OSError: time.sleep(0.1)\n"
        )
        subprocess.run(
            ["ip", "netns", "exec", hosts.client, sys.executable, "-c", probe, SERVER_IP],
            check=True,
            timeout=60,
        )
        client = _run(
            hosts.client,
            BURNIN_ROLE="client",
            BURNIN_PEER_HOST=SERVER_IP,
            BURNIN_DURATION_SECONDS="1",
            TCP_BASELINE_PORT="5301",
        )
        served, _ = server.communicate(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert client.returncode == 0, client.stdout
    assert server.returncode == 0, served
    assert "(0 listener restarts)" not in served


def test_with_only_the_default_route_interface_the_runner_skips(hosts: Hosts) -> None:
    done = _run(
        hosts.lonely,
        BURNIN_ROLE="client",
        BURNIN_PEER_HOST="10.79.0.9",
        BURNIN_DURATION_SECONDS="2",
    )
    result = parse(KIND, done.stdout, done.returncode)
    assert done.returncode == 2, done.stdout + done.stderr
    assert result.verdict is RunnerVerdict.SKIP
    assert done.stdout.rstrip().splitlines()[-1].startswith("TCP_BASELINE_SKIP: ")
    assert result.metrics["tcpTestInterface"] == hosts.lonely_mgmt
    assert result.metrics["tcpMgmtInterface"] == hosts.lonely_mgmt


def test_naming_the_management_interface_is_an_error(hosts: Hosts) -> None:
    done = _run(
        hosts.client,
        BURNIN_ROLE="client",
        BURNIN_PEER_HOST=SERVER_IP,
        TCP_BASELINE_INTERFACE=hosts.client_mgmt,
    )
    assert done.returncode == 3, done.stdout
    assert "default route" in parse(KIND, done.stdout, 3).message
    server = _run(hosts.server, BURNIN_ROLE="server", TCP_BASELINE_INTERFACE=f"{hosts.server}x")
    assert server.returncode == 3


def test_a_server_that_never_appears_is_an_error_not_a_fail(hosts: Hosts) -> None:
    done = _run(
        hosts.client,
        BURNIN_ROLE="client",
        BURNIN_PEER_HOST=SERVER_IP,
        BURNIN_DURATION_SECONDS="1",
        TCP_BASELINE_PORT="5399",
        TCP_BASELINE_PEER_WAIT_SECONDS="2",
    )
    result = parse(KIND, done.stdout, done.returncode)
    assert done.returncode == 3, done.stdout
    assert result.verdict is RunnerVerdict.ERROR
    assert "Connection refused" in result.message
    assert "tcpThroughputGbps" not in result.metrics


def test_a_group_rank_is_an_error_and_no_role_skips() -> None:
    group = subprocess.run(
        [sys.executable, "-m", MODULE],
        env=_env(BURNIN_RANK="0", BURNIN_NRANKS="3"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert group.returncode == 3
    node = subprocess.run(
        [sys.executable, "-m", MODULE],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert node.returncode == 2
    assert parse(KIND, node.stdout, 2).verdict is RunnerVerdict.SKIP


def test_a_missing_iperf3_is_an_error_naming_tool_and_package() -> None:
    done = subprocess.run(
        [sys.executable, "-m", MODULE],
        env=_env(PATH="/nonexistent", BURNIN_ROLE="client", BURNIN_PEER_HOST="127.0.0.1"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 3
    message = parse(KIND, done.stdout, 3).message
    assert message.count("iperf3") >= 2 and "package" in message


def test_tcp_baseline_runs_with_only_the_contract_beside_it(tmp_path: Path) -> None:
    """No pip, no packages: copies of glimmer/contract and glimmer/runners only."""
    alone = standalone(tmp_path)
    env = {"PYTHONPATH": alone.pythonpath, "TCP_BASELINE_PORT": "5201"}
    ran = run_runner("tcp-baseline", env, python=alone.python)
    assert_contract(ran)
    assert ran.exit_code == 2, ran.stdout + ran.stderr
    assert ran.stderr == ""


def test_a_server_port_already_taken_is_an_error_at_once(hosts: Hosts) -> None:
    squatter = subprocess.Popen(
        ["ip", "netns", "exec", hosts.server, "iperf3", "-s", "-p", "5302"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Wait until it holds the port (a plain iperf3 -s survives a bare connection).
        probe = "import socket,time\nfor _ in range(100):\n" + (
            "    try:\n        socket.create_connection(('127.0.0.1', 5302), 1).close(); break\n"
            "    except OSError: time.sleep(0.1)\n"
        )
        subprocess.run(
            ["ip", "netns", "exec", hosts.server, sys.executable, "-c", probe],
            check=True,
            timeout=60,
        )
        done = _run(
            hosts.server,
            BURNIN_ROLE="server",
            TCP_BASELINE_PORT="5302",
            TCP_BASELINE_INTERFACE=hosts.server_fabric,
        )
    finally:
        squatter.terminate()
        squatter.wait()
    assert done.returncode == 3, done.stdout
    assert "could not listen on port 5302" in parse(KIND, done.stdout, 3).message
