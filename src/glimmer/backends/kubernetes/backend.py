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

Each member is handed to the part that owns it by
:class:`~glimmer.backends.common.assembled.PartsBackend`, as for this host and Slurm; what is
this substrate's own is how a run is created (the server fills its uid) and let go of.

The client is lightkube's synchronous one (:mod:`.client` says why). The cluster's garbage
collector deletes a deleted run's pods and Services by their owner references; the backend
deletes them as well when the run's delete completes, so nothing of a run outlives it where no
collector runs (the API stand-in) or before it gets to them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from lightkube import Client

from glimmer.api.k8s import Toleration
from glimmer.api.profile import BurnInProfile
from glimmer.api.result import ArtifactRef
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.assembled import PartsBackend
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
)
from glimmer.sinks.sinkset import SinkSet


class KubernetesBackend(PartsBackend):
    """A :class:`~glimmer.engine.backend.Backend` over the cluster ``client`` talks to (or
    the one ``kubeconfig`` names). ``profiles`` and ``tests`` answer names the cluster does
    not hold (the built-in library); ``sinks`` take the deliveries (None: recorded only);
    ``clock`` is the wall clock unless a test gives a faster one."""

    store: KubeRunStore

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
        self.pods = self.runner_part = KubeExecutions(
            self.client, self.clock.from_host, self._tolerations
        )
        self.artifacts = KubeArtifacts(self.client)
        self.delivery = SinkDelivery(sinks)

    def _tolerations(self, namespace: str, run: str, run_uid: str) -> Sequence[Toleration]:
        """The run's ``spec.target.tolerations`` (none when the run is not the one named)."""
        found = self.store.get_run(namespace, run)
        if found is None or found.metadata.uid != run_uid:
            return ()
        return list(found.spec.target.tolerations or ())

    # -- artifacts ----------------------------------------------------------------------------
    def store_artifacts(
        self, run: BurnInRun, test: str, pod_name: str, artifacts: Sequence[Artifact]
    ) -> list[ArtifactRef]:
        return self.artifacts.store(run, test, pod_name, artifacts)

    # -- the run store ------------------------------------------------------------------------
    def submit(self, run: BurnInRun) -> BurnInRun:
        """Create a new run (the server fills its uid, resourceVersion and creation time)."""
        return self.store.create_run(run)

    def _forget(self, run: BurnInRun) -> None:
        uid = run.metadata.uid or ""
        self.delivery.forget_run(uid)
        # Where the delete fails, the cluster's garbage collector deletes them by their owner
        # references: a run already gone is not failed for it.
        with contextlib.suppress(BackendError):
            self.pods.delete_owned(run.metadata.namespace or "default", run.name, uid)
