"""A backend assembled from parts: its clock, its nodes, its executions, a file run store and the
common delivery — what this host's substrate and the Slurm one are, each with parts of its own.

The engine's :class:`~glimmer.engine.backend.Backend` is one protocol; a substrate that keeps
its runs in a :class:`~glimmer.backends.common.run_store.FileRunStore` and hands envelopes to
:class:`~glimmer.backends.common.delivery.SinkDelivery` differs from another only in how it
reads nodes and runs executions. :class:`AssembledBackend` answers every member by handing it to
the part that owns it, so a substrate writes its parts and its constructor, not the forwarding.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Protocol

from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.clock import SubstrateClock
from glimmer.backends.common.delivery import SinkDelivery
from glimmer.backends.common.run_store import FileRunStore, RunsInStore
from glimmer.engine.backend import (
    Delivery,
    ExecutionIndex,
    ExecutionSpec,
    NodeView,
    Rendezvous,
    RunStore,
)


class NodesPart(Protocol):
    """How a substrate reads and changes its nodes (the engine's ``Nodes``)."""

    def get_node(self, name: str) -> NodeView | None: ...

    def list_nodes(self, selector: Mapping[str, str] | None = None) -> list[NodeView]: ...

    def update_node(
        self,
        name: str,
        *,
        unschedulable: bool | None = None,
        annotations: Mapping[str, str | None] | None = None,
    ) -> NodeView: ...


class ExecutionsPart(Protocol):
    """How a substrate runs executions (the engine's ``Executions``), and lets go of a deleted
    run's."""

    def executions(self, namespace: str, run: str, run_uid: str) -> ExecutionIndex: ...

    def create_execution(self, spec: ExecutionSpec) -> None: ...

    def delete_execution(self, namespace: str, name: str) -> None: ...

    def read_log(self, namespace: str, name: str) -> str: ...

    def ensure_rendezvous(self, service: Rendezvous) -> None: ...

    def rendezvous_address(self, namespace: str, rendezvous: str, role: str) -> str: ...

    def delete_owned(self, namespace: str, run: str, run_uid: str) -> None: ...


class PartsBackend(RunsInStore):
    """A :class:`~glimmer.engine.backend.Backend` whose members are its parts': a subclass's
    constructor sets :attr:`clock`, :attr:`nodes`, :attr:`runner_part`, :attr:`store` and
    :attr:`delivery`, and writes ``submit`` and ``_forget`` (what its store fills in on a new
    run, and what it lets go of when a run's delete completes). The Kubernetes substrate is one
    (its store is the API server)."""

    clock: SubstrateClock
    nodes: NodesPart
    runner_part: ExecutionsPart
    store: RunStore
    delivery: SinkDelivery

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
    def executions(self, namespace: str, run: str, run_uid: str) -> ExecutionIndex:
        return self.runner_part.executions(namespace, run, run_uid)

    def create_execution(self, spec: ExecutionSpec) -> None:
        self.runner_part.create_execution(spec)

    def delete_execution(self, namespace: str, name: str) -> None:
        self.runner_part.delete_execution(namespace, name)

    def read_log(self, namespace: str, name: str) -> str:
        return self.runner_part.read_log(namespace, name)

    def ensure_rendezvous(self, service: Rendezvous) -> None:
        self.runner_part.ensure_rendezvous(service)

    def rendezvous_address(self, namespace: str, rendezvous: str, role: str) -> str:
        return self.runner_part.rendezvous_address(namespace, rendezvous, role)

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


class AssembledBackend(PartsBackend):
    """The parts of a substrate whose runs live in a :class:`FileRunStore` (this host, Slurm):
    it also says whether its executions run images (``runs_images``)."""

    store: FileRunStore

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
        self.runner_part.delete_owned(run.metadata.namespace or "default", run.name, uid)
