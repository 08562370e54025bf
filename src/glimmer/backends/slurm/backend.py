"""The slurm backend: a Slurm cluster as a substrate of the one engine.

* **nodes**: the cluster's nodes (:mod:`.nodes`), read fresh with ``scontrol``; the cordon a
  drain with the run's stamp plus a reservation for the submitting user, the stamp before it in
  a file under the state directory;
* **executions**: one batch job per execution, pinned to its node (:mod:`.jobs`), submitted
  inside the node's window (:meth:`.nodes.SlurmNodes.opened`) so a job of this run starts on
  the node the run has drained;
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
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.clock import HostClock, SubstrateClock
from glimmer.backends.common.delivery import SinkDelivery
from glimmer.backends.common.run_store import FileRunStore, RunsInStore
from glimmer.backends.slurm.commands import Slurm
from glimmer.backends.slurm.jobs import SlurmJobs
from glimmer.backends.slurm.nodes import SlurmNodes
from glimmer.backends.slurm.reaper import Reaped, reap
from glimmer.engine.backend import (
    Delivery,
    ExecutionIndex,
    ExecutionSpec,
    NodeView,
    Rendezvous,
)
from glimmer.sinks.sinkset import SinkSet


def default_runner_command() -> tuple[str, ...]:
    """``glimmer-runner`` beside this interpreter: on a shared install, the nodes' own."""
    return (str(Path(sys.executable).parent / "glimmer-runner"),)


class SlurmBackend(RunsInStore):
    """A :class:`~glimmer.engine.backend.Backend` over a Slurm cluster, state under
    ``state_dir`` (shared with the nodes).

    ``slurm`` calls the cluster's programs; ``partition`` limits the nodes and is where jobs
    go (None: every node, the default partition); ``runner_command`` starts a runner on a node,
    the kind appended (default :func:`default_runner_command`); ``user`` is whom a cordon's
    reservation admits (default: the user running glimmer). ``clock`` is the wall clock unless
    a test gives a faster one."""

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
        self.nodes = SlurmNodes(self.state_dir, self.slurm, partition=partition, user=user)
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

    def reap(self) -> list[Reaped]:
        """Release the nodes this store drained for runs that no longer exist (:mod:`.reaper`)."""
        return reap(self.nodes, self.store)

    # -- the clock ----------------------------------------------------------------------------
    def now(self) -> datetime:
        return self.clock.now()

    # -- nodes --------------------------------------------------------------------------------
    def get_node(self, name: str) -> NodeView | None:
        return self.nodes.get_node(name)

    def list_nodes(self, selector: Mapping[str, str] | None = None) -> list[NodeView]:
        return self.nodes.list_nodes(selector)

    def update_node(
        self,
        name: str,
        *,
        unschedulable: bool | None = None,
        annotations: Mapping[str, str | None] | None = None,
    ) -> NodeView:
        return self.nodes.update_node(name, unschedulable=unschedulable, annotations=annotations)

    # -- executions ---------------------------------------------------------------------------
    @property
    def runs_images(self) -> bool:
        """False: jobs run the runner installed on the nodes, not the test's image
        (:class:`~glimmer.engine.backend.ImageFree`)."""
        return False

    def executions(self, namespace: str, run: str, run_uid: str) -> ExecutionIndex:
        return self.jobs.executions(namespace, run, run_uid)

    def create_execution(self, spec: ExecutionSpec) -> None:
        self.jobs.create_execution(spec)

    def delete_execution(self, namespace: str, name: str) -> None:
        self.jobs.delete_execution(namespace, name)

    def read_log(self, namespace: str, name: str) -> str:
        return self.jobs.read_log(namespace, name)

    def ensure_rendezvous(self, service: Rendezvous) -> None:
        self.jobs.ensure_rendezvous(service)

    def rendezvous_address(self, namespace: str, rendezvous: str, role: str) -> str:
        return self.jobs.rendezvous_address(namespace, rendezvous, role)

    # -- the run store ------------------------------------------------------------------------
    def submit(self, run: BurnInRun) -> BurnInRun:
        """Store a new run (a uid, namespace and creationTimestamp filled when missing)."""
        if not run.metadata.uid:
            meta = run.metadata.model_copy(update={"uid": str(uuid.uuid4())})
            run = run.model_copy(update={"metadata": meta})
        return self.store.create_run(run)

    def _forget(self, run: BurnInRun) -> None:
        uid = run.metadata.uid or ""
        self.delivery.forget_run(uid)
        self.jobs.delete_owned(run.metadata.namespace or "default", run.name, uid)

    def get_profile(self, namespace: str, name: str) -> BurnInProfile | None:
        return self.store.get_profile(namespace, name)

    def get_tests(self, namespace: str) -> Mapping[str, BurnInTestSpec]:
        return self.store.get_tests(namespace)

    # -- delivery -----------------------------------------------------------------------------
    @property
    def describes_runs(self) -> bool:
        return self.delivery.describes_runs

    def deliver(self, delivery: Delivery) -> bool:
        return self.delivery.deliver(delivery)
