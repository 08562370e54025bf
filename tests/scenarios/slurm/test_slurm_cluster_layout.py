"""The test cluster's contract (tests/tools/slurm_cluster.sh): four nodes n1..n4 in partition
``debug``, each its own host name, the fabric on eth0 and the default route on a management
pair inside the node (so tcp-baseline's guard, §9.13, lets eth0 be measured), and the
cluster's subnet unreachable from the root namespace (nothing can leave the machine)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.slurm_cluster import SlurmCluster

LAYOUT = 'echo "$(hostname) $(ip -o route show default) | $(ip -o -4 addr show dev eth0)"'


def test_every_node_has_its_own_name_its_fabric_on_eth0_and_its_default_route_on_mgmt0(
    slurm_cluster: SlurmCluster,
) -> None:
    assert slurm_cluster.nodes == ("n1", "n2", "n3", "n4")
    assert slurm_cluster.partition == "debug"
    out = slurm_cluster.slurm.run(
        "srun", "-N4", "--ntasks-per-node=1", "-p", slurm_cluster.partition, "sh", "-c", LAYOUT
    )
    rows = sorted(line.split() for line in out.splitlines() if line.strip())
    assert [r[0] for r in rows] == list(slurm_cluster.nodes)
    for row in rows:
        line = " ".join(row)
        route, _, fabric = line.partition(" | ")
        assert "default via" in route and "dev mgmt0" in route, line
        assert "eth0" in fabric and "inet " in fabric, line


def test_the_root_namespace_cannot_reach_the_cluster_subnet(slurm_cluster: SlurmCluster) -> None:
    # The controller's address, from the config: the root namespace holds it unreachable.
    conf = Path(slurm_cluster.env["SLURM_CONF"]).read_text().splitlines()
    head = next(ln.split("(", 1)[1].rstrip(")") for ln in conf if ln.startswith("SlurmctldHost="))
    route = subprocess.run(
        ["ip", "route", "get", head], capture_output=True, text=True, timeout=10, check=False
    )
    assert route.returncode != 0 or "unreachable" in route.stdout, route.stdout
