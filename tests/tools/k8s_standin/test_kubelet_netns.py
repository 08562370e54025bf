"""The stand-in nodes' network namespaces (k8s_standin.node_netns): reachable from each other at
their own addresses, a default route on a management pair, nothing left behind. Root only, as
CI is; without root the network refuses, naming why."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from tools.k8s_standin import node_netns
from tools.k8s_standin.node_netns import NetnsNetwork, NetworkUnavailable


def _root() -> None:
    if os.geteuid() != 0:
        with pytest.raises(NetworkUnavailable, match="need root"):
            NetnsNetwork(["node-1"])
        pytest.fail("network namespaces need root (CI runs as root)")


def _run(network: NetnsNetwork, node: str, *argv: str) -> str:
    done = subprocess.run(
        [*network.wrap(node), *argv], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_two_nodes_reach_each_other_and_route_by_default_through_management() -> None:
    _root()
    network = NetnsNetwork(["node-1", "node-2"])
    try:
        a, b = network.address("node-1"), network.address("node-2")
        assert a != b
        assert {network.namespace("node-1"), network.hub} <= set(node_netns.namespaces())
        routes = _run(network, "node-1", "ip", "route")
        assert "default via 169.254.77.2 dev mgmt0" in routes
        assert f"src {a}" in routes
        server = subprocess.Popen(
            [*network.wrap("node-2"), sys.executable, "-c",
             "import socket; s=socket.create_server(('0.0.0.0', 7777)); c,_=s.accept();"
             " c.sendall(b'hello from node-2')"],
        )  # fmt: skip
        try:
            ok = asyncio.run(_wait_connect(network, "node-2", b))
            assert ok
        finally:
            server.wait(timeout=10)
        assert network.hosts_path("node-1").is_file()
    finally:
        network.down()
    assert not [n for n in node_netns.namespaces() if n.startswith(network.prefix + "-")]
    assert not network.hosts_path("node-1").parent.exists()


async def _wait_connect(network: NetnsNetwork, node: str, address: str) -> bool:
    for _ in range(100):
        if await network.connect("node-1", address, 7777, 1.0):
            return True
        await asyncio.sleep(0.05)
    return False


def test_a_cluster_whose_process_died_is_reaped_by_the_next_one() -> None:
    _root()
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = f"gk{dead.pid}x0-hub"
    subprocess.run(["ip", "netns", "add", stale], check=True)
    try:
        # Another worker's new cluster may reap it first: either way it is gone after this.
        node_netns.reap_stale()
        assert stale not in node_netns.namespaces()
    finally:
        subprocess.run(["ip", "netns", "delete", stale], capture_output=True, check=False)


def test_a_live_clusters_namespaces_are_not_reaped() -> None:
    _root()
    network = NetnsNetwork(["node-1"])
    try:
        assert network.hub not in node_netns.reap_stale()
        assert network.hub in node_netns.namespaces()
    finally:
        network.down()


def test_without_root_the_namespaces_are_refused_naming_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(node_netns.os, "geteuid", lambda: 1000)
    with pytest.raises(NetworkUnavailable) as caught:
        NetnsNetwork(["node-1"])
    assert "need root (`ip netns add`)" in str(caught.value)
    assert "network='host'" in str(caught.value)
