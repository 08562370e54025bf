"""The kubernetes backend: a cluster, through its API server, as a substrate of the one engine.

* **nodes**: core/v1 Nodes read fresh, cordon and stamps in one merge patch with a
  resourceVersion precondition (:mod:`.nodes`);
* **executions**: one runner Pod per execution and a headless Service per rendezvous
  (:mod:`.executions`, shaped by :mod:`.podspec`), phases and exit codes from pod status
  (:mod:`.pod_status`), logs from ``pods/log``;
* **run store**: the BurnInRun objects themselves, status through the status subresource
  (:mod:`.run_store`), every body free of ``null`` (:mod:`.wire`);
* **artifacts**: each run's ``<run>-artifacts`` ConfigMap, owned by the run (:mod:`.artifacts`);
* **delivery**: :class:`~glimmer.backends.common.delivery.SinkDelivery`;
* **clock**: the wall clock (the cluster's timestamps are UTC wall times), or a faster one a
  test gives, the pods' timestamps read through it.

The client is lightkube's synchronous one (:mod:`.client` says why). The cluster's garbage
collector deletes a deleted run's pods and Services by their owner references; the backend
deletes them as well when the run's delete completes, so nothing of a run outlives it where no
collector runs (the API stand-in) or before it gets to them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from lightkube import Client

from glimmer.api.k8s import Toleration
from glimmer.api.profile import BurnInProfile
from glimmer.api.result import ArtifactRef
from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.clock import HostClock, SubstrateClock
from glimmer.backends.common.delivery import SinkDelivery
from glimmer.backends.kubernetes.artifacts import KubeArtifacts
from glimmer.backends.kubernetes.client import connect
from glimmer.backends.kubernetes.executions import KubeExecutions
from glimmer.backends.kubernetes.nodes import KubeNodes
from glimmer.backends.kubernetes.run_store import KubeRunStore
from glimmer.contract.vocab import Artifact
from glimmer.engine.backend import (
    BackendError,
    Delivery,
    ExecutionIndex,
    ExecutionSpec,
    NodeView,
    Rendezvous,
)
from glimmer.sinks.sinkset import SinkSet


class KubernetesBackend:
    """A :class:`~glimmer.engine.backend.Backend` over the cluster ``client`` talks to (or
    the one ``kubeconfig`` names). ``profiles`` and ``tests`` answer names the cluster does
    not hold (the built-in library); ``sinks`` take the deliveries (None: recorded only);
    ``clock`` is the wall clock unless a test gives a faster one."""

    def __init__(
        self,
        client: Client | None = None,
        *,
        kubeconfig: Path | str | None = None,
        profiles: Mapping[str, BurnInProfile] | None = None,
        tests: Mapping[str, BurnInTestSpec] | None = None,
        sinks: SinkSet | None = None,
        clock: SubstrateClock | None = None,
    ) -> None:
        self.client = client if client is not None else connect(kubeconfig)
        self.clock: SubstrateClock = clock or HostClock()
        self.nodes = KubeNodes(self.client)
        self.store = KubeRunStore(self.client, profiles=profiles, tests=tests)
        self.pods = KubeExecutions(self.client, self.clock.from_host, self._tolerations)
        self.artifacts = KubeArtifacts(self.client)
        self.delivery = SinkDelivery(sinks)

    def _tolerations(self, namespace: str, run: str, run_uid: str) -> Sequence[Toleration]:
        """The run's ``spec.target.tolerations`` (none when the run is not the one named)."""
        found = self.store.get_run(namespace, run)
        if found is None or found.metadata.uid != run_uid:
            return ()
        return list(found.spec.target.tolerations or ())

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
        return self.pods.executions(namespace, run, run_uid)

    def create_execution(self, spec: ExecutionSpec) -> None:
        self.pods.create_execution(spec)

    def delete_execution(self, namespace: str, name: str) -> None:
        self.pods.delete_execution(namespace, name)

    def read_log(self, namespace: str, name: str) -> str:
        return self.pods.read_log(namespace, name)

    def ensure_rendezvous(self, service: Rendezvous) -> None:
        self.pods.ensure_rendezvous(service)

    def rendezvous_address(self, namespace: str, rendezvous: str, role: str) -> str:
        return self.pods.rendezvous_address(namespace, rendezvous, role)

    # -- artifacts ----------------------------------------------------------------------------
    def store_artifacts(
        self, run: BurnInRun, test: str, pod_name: str, artifacts: Sequence[Artifact]
    ) -> list[ArtifactRef]:
        return self.artifacts.store(run, test, pod_name, artifacts)

    # -- the run store ------------------------------------------------------------------------
    def submit(self, run: BurnInRun) -> BurnInRun:
        """Create a new run (the server fills its uid, resourceVersion and creation time)."""
        return self.store.create_run(run)

    def get_run(self, namespace: str, name: str) -> BurnInRun | None:
        return self.store.get_run(namespace, name)

    def list_runs(self) -> list[BurnInRun]:
        return self.store.list_runs()

    def write_status(self, run: BurnInRun, status: BurnInRunStatus) -> BurnInRun:
        return self.store.write_status(run, status)

    def write_metadata(
        self,
        run: BurnInRun,
        *,
        annotations: Mapping[str, str | None] | None = None,
        finalizers: Sequence[str] | None = None,
    ) -> BurnInRun:
        written = self.store.write_metadata(run, annotations=annotations, finalizers=finalizers)
        if written.metadata.deletion_timestamp is not None and not written.metadata.finalizers:
            self._forget(written)  # the last finalizer gone: the delete completed
        return written

    def delete_run(self, namespace: str, name: str) -> None:
        held = self.store.get_run(namespace, name)
        self.store.delete_run(namespace, name)
        if held is not None and not held.metadata.finalizers:
            self._forget(held)

    def _forget(self, run: BurnInRun) -> None:
        uid = run.metadata.uid or ""
        self.delivery.forget_run(uid)
        # Where the delete fails, the cluster's garbage collector deletes them by their owner
        # references: a run already gone is not failed for it.
        with contextlib.suppress(BackendError):
            self.pods.delete_owned(run.metadata.namespace or "default", run.name, uid)

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
