"""The kubernetes substrate on the whole stand-in cluster (tools/k8s_standin/cluster.py): the
API stand-in plus its kubelet stand-in, which runs each scheduled pod's runner as a real
process. A Node-scope run reaches its verdict from the real runner's output read through
pods/log, its nodes restored; a Pair's client reaches its server by the rendezvous Service's
DNS name (each stand-in node in its own network namespace) and the link is judged."""

from __future__ import annotations

import sys
from pathlib import Path

from engine_world import profile, run_object, spec_of

from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.drivers import drive_wall_clock
from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.client import connect
from glimmer.contract.vocab import Phase
from glimmer.engine.keys import CORDON_OWNER
from glimmer.engine.reconciler import Engine
from tools.k8s_standin.cluster import StandInCluster, standin_cluster

# The Pair's two ends as one program: the server accepts one connection and greets it, the
# client connects to BURNIN_PEER_HOST (the server's name under the rendezvous Service).
SERVER = """
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 5201))
s.listen(1)
c, peer = s.accept()
print("server saw", peer[0])
c.sendall(b"hi")
c.close()
"""
CLIENT = """
import os, socket, time
host = os.environ["BURNIN_PEER_HOST"]
for _ in range(200):
    try:
        c = socket.create_connection((host, 5201), timeout=1)
        break
    except OSError:
        time.sleep(0.1)
print("client got", c.recv(2).decode(), "from", host)
"""
PAIR_PROGRAM = f"""
import os
exec({SERVER!r} if os.environ.get("BURNIN_ROLE") == "server" else {CLIENT!r})
"""


def _drive(cluster: StandInCluster, test: BurnInTestSpec) -> tuple[KubernetesBackend, BurnInRun]:
    backend = KubernetesBackend(
        connect(cluster.kubeconfig),
        profiles={"prof": profile([{"testRef": "t"}])},
        tests={"t": test},
    )
    backend.submit(run_object(targets=list(cluster.nodes), maxConcurrentNodes=len(cluster.nodes)))
    final = drive_wall_clock(backend, Engine(backend), "default", "run", poll=0.5, max_passes=400)
    assert final is not None and final.status is not None
    return backend, final


def test_a_run_on_the_kubelet_stand_in_is_judged_from_the_real_runners_output(
    tmp_path: Path,
) -> None:
    with standin_cluster(2, tmp_path, network="host") as cluster:
        backend, final = _drive(cluster, spec_of("host-health", durationSeconds=3))
        assert final.status is not None and final.status.phase is Phase.PASSED
        results = final.status.results or []
        assert sorted(n for r in results for n in r.nodes or ()) == list(cluster.nodes)
        for result in results:
            assert result.message == "HOST_HEALTH_OK"  # the runner's own last line
            assert (result.metrics or {}).get("hostHealthStage") == "done"
        for node in backend.list_nodes():
            assert not node.unschedulable and CORDON_OWNER not in node.annotations


def test_a_pairs_client_reaches_its_server_by_the_rendezvous_services_name(
    tmp_path: Path,
) -> None:
    test = spec_of(
        "tcp-baseline",
        scope="Pair",
        durationSeconds=5,
        runner={"image": "local/pair:1", "command": [sys.executable, "-c", PAIR_PROGRAM]},
    )
    with standin_cluster(2, tmp_path, network="netns") as cluster:
        _, final = _drive(cluster, test)
        assert final.status is not None and final.status.phase is Phase.PASSED
        (result,) = final.status.results or []
        assert result.nodes == list(cluster.nodes)
        message = result.message or ""
        server_address = cluster.addresses[cluster.nodes[1]]  # the client's node
        assert f"server saw {server_address}" in message
        assert "client got hi from server.bp-run-" in message and ".default.svc" in message
