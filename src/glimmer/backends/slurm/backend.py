"""The slurm backend: a Slurm cluster as a substrate of the one engine.

* **nodes**: the cluster's nodes (:mod:`.nodes`), read fresh with ``scontrol``; the cordon a
  drain with the run's stamp plus a reservation for the submitting user, the stamp before it in
  a file under the state directory;
* **executions**: one batch job per execution, pinned to its node (:mod:`.jobs`), submitted
  inside the nodes' window (:meth:`.nodes.SlurmNodes.opened_all`) so a job of this run starts
  on the node the run has drained. What a pass creates is held and submitted together, in one
  window, when the pass is done creating (:mod:`.pass_batch`);
* **run store**: :class:`~glimmer.backends.common.run_store.FileRunStore` under
  ``<state>/runs`` — the run's status is the checkpoint, so running the same command again
  after a crash resumes where the status says;
* **delivery**: :class:`~glimmer.backends.common.delivery.SinkDelivery`;
* **clock**: the wall clock (:mod:`glimmer.backends.common.clock`).

The state directory must be on a filesystem the nodes share (as Slurm output files usually
are): job scripts, their output files and what they write back live under it::

    <state>/store-id                                 this store's identity (in every stamp)
    <state>/runs/<namespace>/<run>.json              the runs (FileRunStore)
    <state>/nodes/<node>.json                        this store's cordon and stamp per node
    <state>/executions/<namespace>/<run>/<name>.*    one record, script and output per job

Jobs run the runner installed on the nodes (``runner_command``, the kind appended), not an
image, so :attr:`SlurmBackend.runs_images` is False (a test with no resolvable image is no
Error here).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from glimmer.api.profile import BurnInProfile
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.clock import HostClock, SubstrateClock
from glimmer.backends.common.delivery import SinkDelivery
from glimmer.backends.common.run_store import FileRunStore
from glimmer.backends.slurm.commands import Slurm
from glimmer.backends.slurm.jobs import SlurmJobs
from glimmer.backends.slurm.nodes import SlurmNodes
from glimmer.backends.slurm.pass_batch import PassBatch
from glimmer.backends.slurm.reaper import Reaped, reap
from glimmer.sinks.sinkset import SinkSet


def default_runner_command() -> tuple[str, ...]:
    """``glimmer-runner`` beside this interpreter: on a shared install, the nodes' own."""
    return (str(Path(sys.executable).parent / "glimmer-runner"),)


class SlurmBackend(PassBatch):
    """A :class:`~glimmer.engine.backend.Backend` over a Slurm cluster, state under
    ``state_dir`` (shared with the nodes).

    ``slurm`` calls the cluster's programs; ``partition`` limits the nodes and is where jobs
    go (None: every node, the default partition); ``runner_command`` starts a runner on a node,
    the kind appended (default :func:`default_runner_command`); ``user`` is whom a cordon's
    reservation admits (default: the user running glimmer). ``clock`` is the wall clock unless
    a test gives a faster one. What a pass creates goes out in one window
    (:class:`~.pass_batch.PassBatch`)."""

    def __init__(
        self,
        state_dir: Path,
        slurm: Slurm | None = None,
        *,
        partition: str | None = None,
        runner_command: Sequence[str] | None = None,
        profiles: Mapping[str, BurnInProfile] | None = None,
        tests: Mapping[str, BurnInTestSpec] | None = None,
        sinks: SinkSet | None = None,
        clock: SubstrateClock | None = None,
        user: str | None = None,
    ) -> None:
        self.state_dir = Path(state_dir)
        self.slurm = slurm or Slurm()
        self.clock: SubstrateClock = clock or HostClock()
        self.nodes: SlurmNodes = SlurmNodes(
            self.state_dir, self.slurm, partition=partition, user=user
        )
        self.store = FileRunStore(
            self.state_dir / "runs", now=self.clock.now, profiles=profiles, tests=tests
        )
        self.jobs = SlurmJobs(
            self.state_dir,
            self.slurm,
            self.clock,
            runner_command=tuple(runner_command or default_runner_command()),
            partition=partition,
            doors=self.nodes,
        )
        self.delivery = SinkDelivery(sinks)
        self.runner_part = self.jobs

    def reap(self) -> list[Reaped]:
        """Release the nodes this store drained for runs that no longer exist (:mod:`.reaper`)."""
        return reap(self.nodes, self.store)

    @property
    def runs_images(self) -> bool:
        """False: jobs run the runner installed on the nodes, not the test's image
        (:class:`~glimmer.engine.backend.ImageFree`)."""
        return False
