"""The slurm backend: a Slurm cluster as a substrate of the one engine.

* **nodes**: the cluster's nodes (:mod:`.nodes`), read fresh with ``scontrol``; the cordon a
  drain with the run's stamp plus a reservation for the submitting user, the stamp before it in
  a file under the state directory;
* **executions**: one batch job per execution, pinned to its node (:mod:`.jobs`), submitted
  inside the nodes' window (:meth:`.nodes.SlurmNodes.opened_all`) so a job of this run starts
  on the node the run has drained. What a pass creates is held and submitted together, in one
  window, when the pass is done creating (see :class:`SlurmBackend`);
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

import contextlib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.assembled import AssembledBackend
from glimmer.backends.common.clock import HostClock, SubstrateClock
from glimmer.backends.common.delivery import SinkDelivery
from glimmer.backends.common.run_store import FileRunStore
from glimmer.backends.slurm.commands import Slurm
from glimmer.backends.slurm.jobs import SlurmJobs
from glimmer.backends.slurm.nodes import SlurmNodes
from glimmer.backends.slurm.reaper import Reaped, reap
from glimmer.engine.backend import BackendError, Delivery, ExecutionSpec, NodeView
from glimmer.sinks.sinkset import SinkSet


def default_runner_command() -> tuple[str, ...]:
    """``glimmer-runner`` beside this interpreter: on a shared install, the nodes' own."""
    return (str(Path(sys.executable).parent / "glimmer-runner"),)


class SlurmBackend(AssembledBackend):
    """A :class:`~glimmer.engine.backend.Backend` over a Slurm cluster, state under
    ``state_dir`` (shared with the nodes).

    ``slurm`` calls the cluster's programs; ``partition`` limits the nodes and is where jobs
    go (None: every node, the default partition); ``runner_command`` starts a runner on a node,
    the kind appended (default :func:`default_runner_command`); ``user`` is whom a cordon's
    reservation admits (default: the user running glimmer). ``clock`` is the wall clock unless
    a test gives a faster one.

    The engine creates a pass's executions one call at a time, and each would cost a window of
    its own (one to two seconds of Slurm's clock: :mod:`.job_submit`). So ``create_execution``
    only records the intent and holds the execution (it reads as pending meanwhile), and the
    first call that ends the pass's creating submits everything held in one window: a status
    or metadata write, a delivery, a read of the run, or an update of a node one of them is
    on. A status never mentions an execution that was not submitted first, and a crash before
    the submit leaves only the intent, which reads as absent: the next engine creates it
    again, as it would after a crash inside ``create_execution``."""

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

    # -- holding what a pass creates ---------------------------------------------------------
    def create_execution(self, spec: ExecutionSpec) -> None:
        self.jobs.queue(spec)

    def flush(self) -> None:
        """Submit every execution held (:meth:`.jobs.SlurmJobs.flush`)."""
        self.jobs.flush()

    def write_status(self, run: BurnInRun, status: BurnInRunStatus) -> BurnInRun:
        self.flush()
        return super().write_status(run, status)

    def write_metadata(
        self,
        run: BurnInRun,
        *,
        annotations: Mapping[str, str | None] | None = None,
        finalizers: Sequence[str] | None = None,
    ) -> BurnInRun:
        self.flush()
        return super().write_metadata(run, annotations=annotations, finalizers=finalizers)

    def deliver(self, delivery: Delivery) -> bool:
        self.flush()
        return super().deliver(delivery)

    def get_run(self, namespace: str, name: str) -> BurnInRun | None:
        # Read first by the next pass and by a driver after each pass: what a pass that wrote
        # nothing created goes out here. A failed submit is not raised from a read (a driver
        # reads outside its retry): what it did not submit reads as absent and is created
        # again by the next pass, which meets the same trouble and fails as it should.
        with contextlib.suppress(BackendError):
            self.flush()
        return super().get_run(namespace, name)

    def update_node(
        self,
        name: str,
        *,
        unschedulable: bool | None = None,
        annotations: Mapping[str, str | None] | None = None,
    ) -> NodeView:
        if any(spec.node == name for spec in self.jobs.queued()):
            self.flush()  # its job goes out in the window of the cordon it was created under
        return super().update_node(name, unschedulable=unschedulable, annotations=annotations)

    def reap(self) -> list[Reaped]:
        """Release the nodes this store drained for runs that no longer exist (:mod:`.reaper`)."""
        return reap(self.nodes, self.store)

    @property
    def runs_images(self) -> bool:
        """False: jobs run the runner installed on the nodes, not the test's image
        (:class:`~glimmer.engine.backend.ImageFree`)."""
        return False
