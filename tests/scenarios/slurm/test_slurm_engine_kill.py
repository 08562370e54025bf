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
    pending_on_drained,
    profile_file,
    stamps,
    start_glimmer,
)

from glimmer.contract.vocab import Phase
from tests.slurm_cluster import SlurmCluster

KILLS = 20
CAP = 2
TESTS = ("health-a", "health-b")
# A job waits for a node resumed for it about a second (sched_interval=1); far longer is stuck.
STUCK_S = 20.0


def test_an_engine_killed_at_20_random_points_and_restarted_ends_as_an_uninterrupted_run(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes = slurm_cluster.nodes[:4]
    # Long enough that 20 kill points fall inside the run: with one submit window per pass a
    # 2 s test let the run end after 17 (the kills' own restarts are most of the engine's time).
    profile = profile_file(
        tmp_path / "host.yaml", "host-kill", [host_health(t, duration=5) for t in TESTS]
    )
    state = tmp_path / "state"
    seed = int(os.environ.get("GLIMMER_KILL_SEED") or int.from_bytes(os.urandom(4), "big"))
    rng = random.Random(seed)
    print(f"kill points seeded with {seed}")
    kills = 0
    finished: Ran | None = None
    deadline = time.monotonic() + 150
    while finished is None:
        assert time.monotonic() < deadline, f"no end after {kills} kills (seed {seed})"
        engine = start_glimmer(slurm_cluster, state, [profile], nodes, CAP)
        if kills == KILLS:
            finished = _to_the_end(slurm_cluster, engine, seed)
            break
        try:
            out, err = engine.communicate(timeout=rng.uniform(0.3, 2.5))
        except subprocess.TimeoutExpired:
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


def _to_the_end(cluster: SlurmCluster, engine: subprocess.Popen[str], seed: int) -> Ran:
    """The last engine, uninterrupted, to the run's end. A job left pending on a node drained
    again (a kill inside the window in which the node was resumed for its submit) would only
    end at the engine's scheduling grace, minutes later: that is named as what it is."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    stuck_since: dict[str, float] = {}
    try:
        while True:
            try:
                out, err = engine.communicate(timeout=1)
                return Ran(engine.returncode, out, err)
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            assert now < deadline, f"the run did not end within {RUN_TIMEOUT_S:g} s (seed {seed})"
            stuck = pending_on_drained(cluster)
            stuck_since = {job: stuck_since.get(job, now) for job in stuck}
            for job, since in stuck_since.items():
                assert now - since < STUCK_S, (
                    f"job {job} pending on a node drained with our stamp for {STUCK_S:g} s: "
                    f"an engine killed inside a submit window left it there (seed {seed})"
                )
    finally:
        if engine.poll() is None:
            engine.kill()
            engine.communicate(timeout=30)
