"""Pair and Group pods on different stand-in nodes reach each other by the rendezvous Service's
name (``<hostname>.<subdomain>.<namespace>.svc``, podspec.rendezvous_address) at their nodes'
own addresses, through the hosts file the kubelet keeps in each node's network namespace."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lightkube import Client, KubeConfig
from lightkube.resources.core_v1 import Pod, Service

from glimmer.backends.kubernetes.podspec import rendezvous_address
from glimmer.contract.images import RUNNER
from tools.k8s_standin.cluster import standin_cluster

SERVE = """
import http.server, os
class Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("served by " + os.environ["NODE"]).encode()
        self.send_response(200); self.end_headers(); self.wfile.write(body)
http.server.HTTPServer(("0.0.0.0", 8080), Answer).handle_request()
"""
ASK = """
import os, socket, time, urllib.request
host = os.environ["PEER"]
for _ in range(200):
    try:
        reply = urllib.request.urlopen(f"http://{host}:8080/", timeout=5).read().decode()
        break
    except OSError:
        time.sleep(0.05)
print(socket.gethostbyname(host))
print(reply)
"""


def _pod(name: str, role: str, node: str, script: str, env: dict[str, str]) -> Pod:
    variables = [{"name": k, "value": v} for k, v in env.items()]
    variables.append({"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}})
    return Pod.from_dict({
        "metadata": {"name": name, "namespace": "default", "labels": {"rdv": "r1"}},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": {"kubernetes.io/hostname": node},
            "hostname": role,
            "subdomain": "r1-rdv",
            "containers": [{"name": "runner", "image": "busybox:1.36",
                            "command": ["python3", "-c", script], "env": variables}],
        },
    })  # fmt: skip


def _wait(what: str, probe: Callable[[], Any], timeout: float = 60.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = probe()
        if got:
            return got
        time.sleep(0.05)
    pytest.fail(f"{what}: not within {timeout} s")


def _finished(client: Client, name: str) -> str:
    def probe() -> str | None:
        status = client.get(Pod, name, namespace="default").status
        return status.phase if status and status.phase in ("Succeeded", "Failed") else None

    return str(_wait(f"pod {name} finished", probe))


def test_a_client_reaches_its_server_on_another_node_by_the_headless_service_name(
    tmp_path: Path,
) -> None:
    with standin_cluster(2, tmp_path) as cluster:
        client = Client(KubeConfig.from_file(cluster.kubeconfig))
        client.create(Service.from_dict({
            "metadata": {"name": "r1-rdv", "namespace": "default"},
            "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
                     "selector": {"rdv": "r1"}, "ports": [{"port": 8080}]},
        }))  # fmt: skip
        client.create(_pod("server", "server", "node-1", SERVE, {}))
        peer = rendezvous_address("default", "r1-rdv", "server")
        client.create(_pod("client", "client", "node-2", ASK, {"PEER": peer}))
        assert _finished(client, "client") == "Succeeded"
        assert _finished(client, "server") == "Succeeded"
        said = "".join(client.log("client", namespace="default")).splitlines()
        assert said == [cluster.addresses["node-1"], "served by node-1"]


def test_a_name_without_a_publishing_service_does_not_resolve(tmp_path: Path) -> None:
    with standin_cluster(1, tmp_path) as cluster:
        client = Client(KubeConfig.from_file(cluster.kubeconfig))
        lookup = "import socket; socket.gethostbyname('server.r1-rdv.default.svc')"
        client.create(_pod("server", "server", "node-1", "import time; time.sleep(60)", {}))
        client.create(_pod("asker", "client", "node-1", lookup, {}))
        assert _finished(client, "asker") == "Failed"
        assert "gaierror" in "".join(client.log("asker", namespace="default"))


def _runner_pod(role: str, node: str, env: dict[str, str]) -> Pod:
    variables = [{"name": k, "value": v} for k, v in env.items()]
    return Pod.from_dict({
        "metadata": {"name": f"tcp-{role}", "namespace": "default", "labels": {"rdv": "r1"}},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": {"kubernetes.io/hostname": node},
            "hostname": role,
            "subdomain": "r1-rdv",
            "hostNetwork": True,
            "containers": [{"name": "runner", "image": RUNNER.reference("tcp-baseline"),
                            "env": variables}],
        },
    })  # fmt: skip


def test_tcp_baseline_measures_the_fabric_between_two_nodes_past_the_default_route_guard(
    tmp_path: Path,
) -> None:
    with standin_cluster(2, tmp_path) as cluster:
        client = Client(KubeConfig.from_file(cluster.kubeconfig))
        client.create(Service.from_dict({
            "metadata": {"name": "r1-rdv", "namespace": "default"},
            "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
                     "selector": {"rdv": "r1"}},
        }))  # fmt: skip
        common = {"BURNIN_DURATION_SECONDS": "2", "TCP_BASELINE_INTERFACE": "eth0"}
        client.create(_runner_pod("server", "node-1", {**common, "BURNIN_ROLE": "server"}))
        peer = rendezvous_address("default", "r1-rdv", "server")
        client_env = {**common, "BURNIN_ROLE": "client", "BURNIN_PEER_HOST": peer}
        client.create(_runner_pod("client", "node-2", client_env))
        said = {}
        for name in ("tcp-client", "tcp-server"):
            phase = _finished(client, name)
            said[name] = "".join(client.log(name, namespace="default"))
            assert phase == "Succeeded", said[name]
        lines = said["tcp-client"].splitlines()
        metrics = dict(line.split("=", 1) for line in lines if "=" in line)
        # The fabric (eth0) was measured; the management pair holding the default route was not.
        assert (metrics["tcpTestInterface"], metrics["tcpMgmtInterface"]) == ("eth0", "mgmt0")
        assert metrics["tcpNetNamespace"] == f"{cluster.prefix}-node-2"
        assert float(metrics["tcpThroughputGbps"]) > 0


LOOKUP_UNTIL_FOUND = """
import socket, time
for _ in range(1200):
    try:
        print(socket.gethostbyname("server.r1-rdv.default.svc")); break
    except OSError:
        time.sleep(0.05)
"""


def test_a_running_pod_resolves_a_peer_that_appeared_after_it_started(tmp_path: Path) -> None:
    # ip netns exec bound the hosts file when the asker started: the record added later must
    # reach it through that same file (rewritten in place, never replaced).
    with standin_cluster(2, tmp_path) as cluster:
        client = Client(KubeConfig.from_file(cluster.kubeconfig))
        client.create(_pod("asker", "client", "node-2", LOOKUP_UNTIL_FOUND, {}))

        def running() -> bool:
            status = client.get(Pod, "asker", namespace="default").status
            return bool(status and status.phase == "Running")

        _wait("the asker running", running)
        client.create(_pod("server", "server", "node-1", "import time; time.sleep(60)", {}))
        client.create(Service.from_dict({
            "metadata": {"name": "r1-rdv", "namespace": "default"},
            "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
                     "selector": {"rdv": "r1"}},
        }))  # fmt: skip
        assert _finished(client, "asker") == "Succeeded"
        said = "".join(client.log("asker", namespace="default"))
        assert said == f"{cluster.addresses['node-1']}\n"


ROOT = """
import socket
s = socket.create_server(("0.0.0.0", 9000))
for _ in range(2):
    c, (peer, _) = s.accept()
    print(peer, c.recv(64).decode()); c.close()
"""
RANK = """
import os, socket, time
for _ in range(1200):
    try:
        c = socket.create_connection((os.environ["ROOT_HOST"], 9000), timeout=5); break
    except OSError:
        time.sleep(0.05)
c.sendall(("rank " + os.environ["RANK"] + " on " + os.environ["NODE"]).encode())
"""


def test_group_ranks_on_three_nodes_all_reach_rank_0_by_name(tmp_path: Path) -> None:
    with standin_cluster(3, tmp_path) as cluster:
        client = Client(KubeConfig.from_file(cluster.kubeconfig))
        client.create(Service.from_dict({
            "metadata": {"name": "r1-rdv", "namespace": "default"},
            "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
                     "selector": {"rdv": "r1"}},
        }))  # fmt: skip
        client.create(_pod("rank-0", "rank-0", "node-1", ROOT, {}))
        root = rendezvous_address("default", "r1-rdv", "rank-0")
        for rank in (1, 2):
            env = {"ROOT_HOST": root, "RANK": str(rank)}
            client.create(_pod(f"rank-{rank}", f"rank-{rank}", f"node-{rank + 1}", RANK, env))
        for name in ("rank-1", "rank-2", "rank-0"):
            assert _finished(client, name) == "Succeeded", name
        heard = sorted("".join(client.log("rank-0", namespace="default")).splitlines())
        assert heard == [
            f"{cluster.addresses['node-2']} rank 1 on node-2",
            f"{cluster.addresses['node-3']} rank 2 on node-3",
        ]
