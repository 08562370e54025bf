"""A Pair on this host: two node names that are both this host, the server and the client as
real processes meeting over TCP at the rendezvous address the substrate answered (a loopback
address of the attempt's own)."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

from local_world import backend, drive, run_object

from glimmer.api.test import BurnInTestSpec
from glimmer.contract.vocab import Phase

PAIR_RUNNER = """\
import os, socket, sys, time
env = os.environ
port = int(env["FAKE_PORT"])
if env.get("BURNIN_ROLE") == "server":
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", port))
    listener.listen()
    listener.settimeout(30)
    peer, _ = listener.accept()
    print("received=" + peer.recv(64).decode(), flush=True)
    peer.sendall(b"pong")
else:
    host = env["BURNIN_PEER_HOST"]
    until = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection((host, port), timeout=1) as conn:
                conn.sendall(b"ping")
                conn.settimeout(30)
                print("reply=" + conn.recv(64).decode())
            break
        except OSError:
            if time.monotonic() > until:
                print("the server never answered")
                sys.exit(3)
            time.sleep(0.02)
    print("peer=" + host)
print("bandwidthGbps=390")
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("0.0.0.0", 0))
        return int(probe.getsockname()[1])


def test_a_pair_meets_over_tcp_at_the_rendezvous_address_and_settles_the_link(
    tmp_path: Path,
) -> None:
    script = tmp_path / "pair_runner.py"
    script.write_text(PAIR_RUNNER)
    link = BurnInTestSpec.model_validate(
        {
            "kind": "ib-write-bw",
            "scope": "Pair",
            "durationSeconds": 30,
            "runner": {"env": [{"name": "FAKE_PORT", "value": str(_free_port())}]},
        }
    )
    ends = ["host-a", "host-b"]
    b = backend(tmp_path / "state", [sys.executable, str(script)], {"link": link}, node_name=ends)
    b.submit(run_object(targets=ends, maxConcurrentNodes=2))
    final = drive(b)
    assert final.status is not None and final.status.phase is Phase.PASSED
    [result] = final.status.results or []
    assert result.nodes == ends and result.metrics is not None
    assert result.metrics.get("bandwidthGbps") == "390"
    logs = {
        e.spec.role: b.read_log("default", e.name)
        for e in b.executions("default", "run", final.metadata.uid or "")
    }
    # The client heard the server answer its ping: a real exchange both ways. The server's
    # own record may already be gone (a settled link's remaining execution is deleted).
    assert "reply=pong" in logs["client"]
    if "server" in logs:
        assert "received=ping" in logs["server"]
    [service] = {e.spec.service for e in b.executions("default", "run", final.metadata.uid or "")}
    address = b.rendezvous_address("default", service, "server")
    assert f"peer={address}" in logs["client"] and address.startswith("127.")
