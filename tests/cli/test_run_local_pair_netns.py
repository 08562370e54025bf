"""Pair and Group across "hosts" without a cluster: network namespaces made by each test stand in
for hosts, and each runs its own ``glimmer run --backend local`` half as a real process.

* a tcp-baseline link: the server half in one namespace, the client half in the other (a veth
  pair between them for the fabric, and in each a management veth pair holding the default
  route, which tcp-baseline refuses to load); the client's envelope is the link's verdict;
* the guard: a host whose only route is the default one Skips;
* a collective of 3 ranks (veths from rank 0's namespace to each other rank's) whose test runner
  really exchanges ranks over TCP through ``BURNIN_ROOT_HOST``; ``glimmer merge`` of the three
  results folders gives one verdict; and a rank that never reports.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.netns import Hosts, in_ns, namespaces

GLIMMER = str(Path(sys.executable).parent / "glimmer")
HERE = Path(__file__).parent
API = "burnin.glimmer.ai/v1alpha1"
# A floor any real transfer clears: the gate is the client's (the server prints no throughput).
GATE = {"metric": "tcpThroughputGbps", "comparison": "GreaterThanOrEqual", "value": "0.001"}
WAIT = 120  # seconds a host's run may take here, at most (they take a few)


def _suite(path: Path, test: dict[str, Any], profile: str) -> Path:
    test_doc = {"apiVersion": API, "kind": "BurnInTest", "metadata": {"name": "t"}, "spec": test}
    profile_doc = {
        "apiVersion": API,
        "kind": "BurnInProfile",
        "metadata": {"name": profile},
        "spec": {"tests": [{"testRef": "t"}]},
    }
    path.write_text(yaml.safe_dump_all([test_doc, profile_doc]))
    return path


def _link(path: Path, interface: str | None) -> Path:
    env = [{"name": "TCP_BASELINE_INTERFACE", "value": interface}] if interface else []
    test = {
        "kind": "tcp-baseline",
        "scope": "Pair",
        "durationSeconds": 2,
        "hostNetwork": True,
        "runner": {"image": "local", "env": env},
        "thresholds": [GATE],
    }
    return _suite(path, test, "pair-link")


def _glimmer(ns: str, tmp: Path, node: str, suite: Path, *args: str) -> subprocess.Popen[str]:
    state, results = str(tmp / f"state-{node}"), str(tmp / node)
    argv = [GLIMMER, "run", "--backend", "local", "-f", str(suite), "--node", node,
            "--state-dir", state, "--results-dir", results, *args]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BURNIN_", "TCP_BASELINE_"))}
    return subprocess.Popen(
        in_ns(ns, *argv), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        out, _ = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


@pytest.fixture
def iperf3() -> None:
    if shutil.which("iperf3") is None:
        pytest.fail("iperf3 is missing: run `make tools` (tests/tools/ensure_iperf3.sh)")


def test_a_link_across_two_hosts_is_judged_by_the_client_and_recorded_by_the_server(
    tmp_path: Path, iperf3: None
) -> None:
    with namespaces() as hosts:
        a, b = hosts.host("a"), hosts.host("b")
        fabric_a, _ = hosts.link(a, "10.213.0.1", b, "10.213.0.2")
        hosts.management(a, "10.214.1")
        hosts.management(b, "10.214.2")
        server = _glimmer(a, tmp_path, "host-a", _link(tmp_path / "a.yaml", fabric_a),
                          "--role", "server", "--peer-node", "host-b")  # fmt: skip
        client = _glimmer(b, tmp_path, "host-b", _link(tmp_path / "b.yaml", None), "--role",
                          "client", "--peer", "10.213.0.1", "--peer-node", "host-a")  # fmt: skip
        client_code, client_out = _finish(client)
        server_code, server_out = _finish(server)
    assert client_code == 0, client_out
    assert server_code == 0, server_out
    envelope = _json(tmp_path / "host-b" / "envelopes" / "001-RunPhaseChanged.json")
    [result] = envelope["results"]
    assert envelope["phase"] == "Passed" and result["phase"] == "Passed"
    assert result["nodes"] == ["host-a", "host-b"] and result["scope"] == "Pair"
    assert float(result["metrics"]["tcpThroughputGbps"]) > 0  # a real figure over the veth
    record = _json(tmp_path / "host-a" / "sidecar" / "server-record.json")
    assert (record["role"], record["node"], record["peerNode"]) == ("server", "host-a", "host-b")
    assert record["results"][0]["metrics"]["tcpTestInterface"] == fabric_a
    assert not (tmp_path / "host-a" / "envelopes").exists()


def test_a_host_whose_only_route_is_the_default_one_skips_the_link(
    tmp_path: Path, iperf3: None
) -> None:
    with namespaces() as hosts:
        lonely = hosts.host("one")
        hosts.management(lonely, "10.214.3")
        client = _glimmer(lonely, tmp_path, "lonely", _link(tmp_path / "c.yaml", None),
                          "--role", "client", "--peer", "10.214.3.2")  # fmt: skip
        code, out = _finish(client)
    envelope = _json(tmp_path / "lonely" / "envelopes" / "001-RunPhaseChanged.json")
    [result] = envelope["results"]
    assert result["phase"] == "Skipped", out
    assert "TCP_BASELINE_SKIP" in result["message"]
    assert code == 0  # nothing required failed or errored


def _collective(path: Path, **env: str) -> Path:
    test = {
        "kind": "custom",
        "scope": "Group",
        "durationSeconds": 4,
        "hostNetwork": True,
        "runner": {
            "image": "local",
            "command": [sys.executable, str(HERE / "group_exchange_runner.py")],
            "env": [{"name": k, "value": v} for k, v in env.items()],
        },
        "thresholds": [{"metric": "rankSum", "comparison": "Equal", "value": "3"}],
    }
    return _suite(path, test, "collective")


def _three_ranks(hosts: Hosts) -> list[tuple[str, str | None]]:
    """Rank 0's namespace joined to each other rank's by a veth of its own subnet; each rank's
    namespace and the address it reaches rank 0 at (None for rank 0 itself)."""
    root = hosts.host("r0")
    ranks: list[tuple[str, str | None]] = [(root, None)]
    for i in (1, 2):
        ns = hosts.host(f"r{i}")
        hosts.link(root, f"10.213.{10 + i}.1", ns, f"10.213.{10 + i}.2")
        ranks.append((ns, f"10.213.{10 + i}.1"))
    return ranks


def _start_ranks(
    tmp_path: Path, ranks: list[tuple[str, str | None]], suite: Path
) -> list[subprocess.Popen[str]]:
    procs = []
    for rank, (ns, root) in enumerate(ranks):
        args = ["--rank", str(rank), "--nranks", "3"] + (["--root", root] if root else [])
        procs.append(_glimmer(ns, tmp_path, f"rank{rank}", suite, *args))
    return procs


def _merge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [GLIMMER, "merge", *args], capture_output=True, text=True, timeout=WAIT, check=False
    )


def test_three_ranks_exchange_over_tcp_and_merge_into_one_passed_verdict(tmp_path: Path) -> None:
    with namespaces() as hosts:
        ranks = _three_ranks(hosts)
        procs = _start_ranks(tmp_path, ranks, _collective(tmp_path / "g.yaml"))
        ended = [_finish(p) for p in procs]
    for code, said in ended:
        assert code == 0, said
    records = [_json(tmp_path / f"rank{i}" / "ranks" / f"rank-0{i}.json") for i in range(3)]
    assert [r["results"][0]["runner"]["metrics"]["rankSum"] for r in records] == ["3"] * 3
    out = tmp_path / "merged.json"
    merged = _merge(*(f"--results-dir={tmp_path / f'rank{i}'}" for i in range(3)), "--out",
                    str(out))  # fmt: skip
    assert merged.returncode == 0, merged.stdout + merged.stderr
    envelope = _json(out)
    [result] = envelope["results"]
    assert envelope["phase"] == "Passed" and result["phase"] == "Passed"
    assert result["nodes"] == ["rank0", "rank1", "rank2"] and result["metrics"]["rankSum"] == "3"
    assert sorted(envelope["fingerprint"]) == ["rank0", "rank1", "rank2"]


def _stop_hung(pid_file: Path) -> None:
    """Stop the hung runner (a process this test's runner made) once it has said its pid."""
    until = time.monotonic() + WAIT
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < until, "the hung rank never started"
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):  # it may have been stopped already
        os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_a_rank_that_never_reports_leaves_rank_0_in_error_and_merge_refuses_without_it(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    suite = _collective(
        tmp_path / "g.yaml", GROUP_EXCHANGE_HANG_RANK="2", GROUP_EXCHANGE_PID_DIR=str(pids)
    )
    with namespaces() as hosts:
        procs = _start_ranks(tmp_path, _three_ranks(hosts), suite)
        root_code, root_out = _finish(procs[0])
        _finish(procs[1])
        _stop_hung(pids / "rank-2.pid")
        _finish(procs[2])
    assert root_code == 3, root_out
    root = _json(tmp_path / "rank0" / "ranks" / "rank-00.json")
    assert root["phase"] == "Error"
    assert "rank 2 never reported" in root["results"][0]["message"]
    refused = _merge(f"--results-dir={tmp_path / 'rank0'}", f"--results-dir={tmp_path / 'rank1'}",
                     "--nranks", "3")  # fmt: skip
    assert refused.returncode == 2 and "rank 2 of 3 missing" in refused.stderr
    assert refused.stdout == ""  # nothing merged, nothing written
