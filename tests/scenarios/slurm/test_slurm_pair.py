"""Issue 15, Tests: tcp-baseline across two Slurm nodes is one link verdict naming both, with a
real throughput over the fabric (eth0 on the cluster's bridge), the management interface that
holds each node's default route left alone by §9.13's guard."""

from __future__ import annotations

from pathlib import Path

from slurm_scenario import glimmer_run, profile_file, tcp_pair

from glimmer.contract.vocab import Phase
from tests.slurm_cluster import SlurmCluster


def test_tcp_baseline_across_two_nodes_is_one_link_verdict_naming_both_with_a_real_throughput(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    server, client = slurm_cluster.nodes[:2]
    profile = profile_file(tmp_path / "pair.yaml", "tcp-link", [tcp_pair()])
    ran = glimmer_run(slurm_cluster, tmp_path / "state", [profile], (server, client), 2)
    assert ran.code == 0, ran.stdout + ran.stderr
    [(key, result)] = ran.results().items()
    assert key == ("tcp", (server, client)), key
    assert result.phase is Phase.PASSED, result.message
    metrics = result.metrics or {}
    gbps = float(metrics["tcpThroughputGbps"])
    assert gbps > 0.1  # a real transfer between two namespaces, not a number from nowhere
    assert metrics.get("tcpMgmtInterface", "mgmt0") == "mgmt0"
    print(f"tcp-baseline {server} -> {client}: {gbps:.2f} Gb/s")
