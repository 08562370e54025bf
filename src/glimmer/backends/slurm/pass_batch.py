"""What one engine pass creates on Slurm goes out together, in one submit window.

The engine creates a pass's executions one call at a time (cordon a node, create its
execution, cordon the next...), and each submit costs a window of Slurm's own clock, one to two
seconds whatever it holds (:mod:`.job_submit`): a wave of 64 nodes took 64 windows. So while a
pass is under way, ``create_execution`` records the intent and holds the execution
(:meth:`.jobs.SlurmJobs.queue`; it reads as pending meanwhile), and the first call by which the
pass is done creating submits everything held in one window (:meth:`.jobs.SlurmJobs.flush`):

* a status or metadata write, or a delivery (the end of a pass: a status never mentions an
  execution that was not submitted first);
* a read of the run (the next pass, or a driver looking after a pass that wrote nothing);
* an update of a node a held execution is on (its job goes out under the cordon it was
  created under, never after a release).

Reads in between see a held execution as a job just submitted is seen: pending, with no log
yet; a held execution deleted is dropped, never submitted. So a pass that harvests one node
and creates on the next, node after node, still sends its creates in one window.

"A pass is under way" starts with the read of the run that every pass begins with
(:meth:`~glimmer.engine.reconciler.Engine.reconcile`), and ends at the first of those calls
that finds something held. Outside a pass — a caller creating executions by hand — a create is
submitted before it returns, as the Backend protocol's reader expects. A crash before the
submit leaves only the intent, which reads as absent: the next engine creates it again, as it
would after a crash inside a create. Nothing here changes what the engine asks or sees.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence

from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.backends.common.assembled import AssembledBackend
from glimmer.backends.slurm.jobs import SlurmJobs
from glimmer.engine.backend import BackendError, Delivery, ExecutionSpec, NodeView


class PassBatch(AssembledBackend):
    """An assembled backend whose executions part is :class:`~.jobs.SlurmJobs` (``jobs``),
    holding what a pass creates for one window (module docstring)."""

    jobs: SlurmJobs
    _in_pass: bool = False

    def flush(self) -> None:
        """Submit every execution held; the pass is done creating once something was."""
        if self.jobs.queued():
            self._in_pass = False
            self.jobs.flush()

    # -- creating -----------------------------------------------------------------------------
    def create_execution(self, spec: ExecutionSpec) -> None:
        if self._in_pass:
            self.jobs.queue(spec)
        else:
            self.jobs.create_execution(spec)

    # -- what ends a pass's creating ----------------------------------------------------------
    def get_run(self, namespace: str, name: str) -> BurnInRun | None:
        # A failed submit is not raised from a read (a driver reads after a pass, outside its
        # retry): what it did not submit reads as absent and is created again by the next
        # pass, which meets the same trouble and fails as a pass should.
        with contextlib.suppress(BackendError):
            self.flush()
        found = super().get_run(namespace, name)
        self._in_pass = True
        return found

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

    def update_node(
        self,
        name: str,
        *,
        unschedulable: bool | None = None,
        annotations: Mapping[str, str | None] | None = None,
    ) -> NodeView:
        if any(spec.node == name for spec in self.jobs.queued()):
            self.flush()
        return super().update_node(name, unschedulable=unschedulable, annotations=annotations)
