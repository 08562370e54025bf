"""Issue 15, Tests: a Node-scope profile of host kinds on all four nodes at cap 2 runs in waves
of two, each tested node drained with our stamp while it is tested (as ``sinfo`` shows it), and
every node resumed and idle afterwards, with a verdict per node."""

from __future__ import annotations

import time
from pathlib import Path

from slurm_scenario import (
    Sampler,
    glimmer_run,
    host_health,
    profile_file,
    stamps,
)

from glimmer.contract.vocab import Phase
from tests.slurm_cluster import SlurmCluster

CAP = 2


def test_a_host_profile_on_four_nodes_at_cap_2_runs_in_waves_of_two_drained_with_our_stamp(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes = slurm_cluster.nodes[:4]
    # host-health, short: the CI budget holds every Slurm test in three minutes (memory-stress
    # runs stressapptest for at least 5 s, which would double the run on a 2-core machine).
    profile = profile_file(tmp_path / "host.yaml", "host-short", [host_health()])
    started = time.monotonic()
    with Sampler(slurm_cluster).running() as sampler:
        ran = glimmer_run(slurm_cluster, tmp_path / "state", [profile], nodes, CAP)
    elapsed = time.monotonic() - started
    assert not sampler.errors, sampler.errors
    assert ran.code == 0, ran.stdout + ran.stderr
    run = ran.run
    assert run.status is not None and run.status.phase is Phase.PASSED
    results = ran.results()
    # A verdict per node and test, each naming its one node.
    assert sorted(results) == sorted((t, (n,)) for t in ("health",) for n in nodes)
    assert all(r.phase is Phase.PASSED for r in results.values()), {
        k: (r.phase, r.message) for k, r in results.items()
    }
    ours = [{n for n, reason in s.items() if f"/{run.name}/" in reason} for s in sampler.samples]
    # The interlock as the cluster shows it: never more than two of our drains at once, a wave
    # of two seen, and every node drained with our stamp while it was tested.
    assert max(len(s) for s in ours) == CAP
    assert set().union(*ours) == set(nodes)
    for node in nodes:  # resumed: idle once slurmctld has pinged it again (about a second)
        slurm_cluster.wait_idle(node)
    assert stamps(slurm_cluster) == {}
    print(f"4 nodes at cap {CAP}: {elapsed:.1f} s, {elapsed / 2:.1f} s per wave")
