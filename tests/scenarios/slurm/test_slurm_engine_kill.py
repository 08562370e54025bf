"""Issue 15, Tests: the engine SIGKILLed at 20 random points of a 4-node run and started again
each time (the same command, as an operator would) ends as an uninterrupted run does — every
node Passed, the run Passed — with no job submitted twice (job names unique among the run's
jobs in ``squeue -t all``, one per node and test) and no node left drained.

The points are random in time (seeded and printed, so a failure can be replayed): some fall
before the first pass, some between a drain and its submit, some while jobs run or between a
harvest and the release. Durations are short so the test stays inside the CI budget.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

from slurm_scenario import (
    RUN_TIMEOUT_S,
    Ran,
    host_health,
    job_names,
    profile_file,
    stamps,
    start_glimmer,
)

from glimmer.contract.vocab import Phase
from tests.slurm_cluster import SlurmCluster

KILLS = 20
CAP = 2
TESTS = ("health-a", "health-b")


def test_an_engine_killed_at_20_random_points_and_restarted_ends_as_an_uninterrupted_run(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes = slurm_cluster.nodes[:4]
    profile = profile_file(
        tmp_path / "host.yaml", "host-kill", [host_health(t, duration=2) for t in TESTS]
    )
    state = tmp_path / "state"
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    print(f"kill points seeded with {seed}")
    kills = 0
    finished: Ran | None = None
    deadline = time.monotonic() + 150
    while finished is None:
        assert time.monotonic() < deadline, f"no end after {kills} kills (seed {seed})"
        engine = start_glimmer(slurm_cluster, state, [profile], nodes, CAP)
        point = rng.uniform(0.3, 2.5) if kills < KILLS else RUN_TIMEOUT_S
        try:
            out, err = engine.communicate(timeout=point)
        except subprocess.TimeoutExpired:
            if kills == KILLS:
                engine.kill()
                engine.communicate(timeout=30)
                raise
            engine.send_signal(signal.SIGKILL)
            engine.communicate(timeout=30)
            kills += 1
            continue
        # It ended by itself: the run is over (more kills would only start a new run).
        finished = Ran(engine.returncode, out, err)
    assert kills == KILLS, f"the run ended after {kills} kills (seed {seed}); make it longer"
    assert finished.code == 0, finished.stdout + finished.stderr
    run = finished.run
    assert run.status is not None and run.status.phase is Phase.PASSED, run.status
    results = finished.results()
    assert sorted(results) == sorted((t, (n,)) for t in TESTS for n in nodes)
    assert all(r.phase is Phase.PASSED for r in results.values()), {
        k: (r.phase, r.message) for k, r in results.items()
    }
    assert all((r.metrics or {}).get("xidEvents") == "0" for r in results.values())
    submitted = job_names(slurm_cluster, comment=run.metadata.uid)
    assert len(submitted) == len(set(submitted)) == len(TESTS) * len(nodes), sorted(submitted)
    assert stamps(slurm_cluster) == {}
    for node in nodes:  # released: idle once slurmctld has pinged it again
        slurm_cluster.wait_idle(node)
