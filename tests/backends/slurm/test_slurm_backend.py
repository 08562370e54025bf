"""The slurm backend assembled, driven by the one engine on a real cluster: a Node-scope run
over every node at cap 2 drains at most two nodes at once with its stamp, runs one job per node
in the drained node's window, and gives every node back."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.drivers import drive_wall_clock
from glimmer.backends.slurm.backend import SlurmBackend
from glimmer.backends.slurm.stamp import decode
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import runs_images
from glimmer.engine.reconciler import Engine
from tests.slurm_cluster import SlurmCluster

API = "burnin.glimmer.ai/v1alpha1"
RUNNER = "import time\ntime.sleep(1.0)\n"  # passes, printing nothing


class Watching:
    """The backend, with what Slurm showed after every cordon change: the nodes drained with a
    stamp naming a run."""

    def __init__(self, inner: SlurmBackend, cluster: SlurmCluster) -> None:
        self.inner = inner
        self.cluster = cluster
        self.drained: list[set[str]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def update_node(self, name: str, **changes: Any) -> Any:
        updated = self.inner.update_node(name, **changes)
        drained = set()
        for node in self.cluster.nodes:
            stamp = decode(self.cluster.reason(node))
            if stamp is not None and stamp.owner:
                drained.add(node)
        self.drained.append(drained)
        return updated


def _backend(cluster: SlurmCluster, tmp_path: Path) -> SlurmBackend:
    script = tmp_path / "runner.py"
    script.write_text(RUNNER)
    test = BurnInTestSpec.model_validate({"kind": "gpu-burn", "durationSeconds": 60})
    profile = BurnInProfile.model_validate(
        {
            "apiVersion": API,
            "kind": "BurnInProfile",
            "metadata": {"name": "prof", "namespace": "default"},
            "spec": {"tests": [{"testRef": "burn"}]},
        }
    )
    return SlurmBackend(
        tmp_path / "state",
        cluster.slurm,
        partition=cluster.partition,
        runner_command=[sys.executable, str(script)],
        profiles={"prof": profile},
        tests={"burn": test},
    )


def test_a_node_run_at_cap_two_drains_two_nodes_at_a_time_and_resumes_every_one(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    backend = Watching(_backend(slurm_cluster, tmp_path), slurm_cluster)
    run = BurnInRun.model_validate(
        {
            "apiVersion": API,
            "kind": "BurnInRun",
            "metadata": {"name": "waves", "namespace": "default"},
            "spec": {
                "profileRef": "prof",
                "target": {"nodeNames": list(slurm_cluster.nodes)},
                "maxConcurrentNodes": 2,
            },
        }
    )
    backend.inner.submit(run)
    # A pass every 0.2 s at most (as the conformance drive): the waves wait on Slurm, not on us.
    final = drive_wall_clock(backend, Engine(backend), "default", "waves", poll=0.2)  # type: ignore[arg-type]
    assert final is not None and final.status is not None
    assert final.status.phase is Phase.PASSED, final.status.results
    results = final.status.results or []
    assert sorted(n for r in results for n in r.nodes or ()) == sorted(slurm_cluster.nodes)
    assert all(r.phase is Phase.PASSED for r in results)
    assert max(len(d) for d in backend.drained) == 2  # waves of two, visible in sinfo -R
    assert backend.drained[-1] == set()
    for node in slurm_cluster.nodes:
        slurm_cluster.wait_idle(node)
    assert slurm_cluster.reservations() == []
    assert backend.inner.reap() == []  # nothing left for the reaper


def test_jobs_run_the_installed_runner_not_an_image(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    assert runs_images(_backend(slurm_cluster, tmp_path)) is False
