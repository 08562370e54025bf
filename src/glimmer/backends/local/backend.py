"""The local backend: this host as a substrate of the one engine.

* **node**: this host (:mod:`.nodes`), its cordon and stamps in a file under the state
  directory, one atomic update each;
* **executions**: real processes, each under a detached supervisor (:mod:`.executions`,
  :mod:`.supervise`) that survives the glimmer process, so ``kill -9`` of glimmer stops no
  measurement and loses no result; the runner itself, or a container runtime's client running
  it in a container (``runtime``, :mod:`.runtimes`, :mod:`.containers`);
* **run store**: :class:`~glimmer.backends.common.run_store.FileRunStore` under
  ``<state>/runs`` — the run's status is the checkpoint, so running the same command again
  after a crash resumes where the status says;
* **delivery**: :class:`~glimmer.backends.common.delivery.SinkDelivery`;
* **clock**: the wall clock (:mod:`.clock`), driven by
  :func:`~glimmer.backends.common.drivers.drive_wall_clock`.

The state directory::

    <state>/runs/<namespace>/<run>.json              the runs (FileRunStore)
    <state>/nodes/<node>.json                        schedulability + annotations per node
    <state>/executions/<namespace>/<run>/<name>.json  one record per execution (+ .log, .lock)

Two runs on one host share the state directory, so admission sees both (TargetsBusy).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from glimmer.api.profile import BurnInProfile
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.assembled import AssembledBackend
from glimmer.backends.common.delivery import SinkDelivery
from glimmer.backends.common.run_store import FileRunStore
from glimmer.backends.local.clock import HostClock, SubstrateClock
from glimmer.backends.local.containers import DeviceScan, char_devices
from glimmer.backends.local.executions import STOP_GRACE, ProcessExecutions
from glimmer.backends.local.nodes import NodeFiles, host_node, hostname
from glimmer.backends.local.runtimes import PROCESS
from glimmer.sinks.sinkset import SinkSet


class LocalBackend(AssembledBackend):
    """A :class:`~glimmer.engine.backend.Backend` over this host, state under ``state_dir``.

    ``node_name`` names the node (default: the hostname). A sequence of names gives several
    nodes that are all this host — for tests (the conformance suite's three-node world), where
    their executions all run here; ``node_labels`` adds labels per node name. ``runner_command``
    is the command a runner is started with, the kind appended (default ``glimmer-runner``
    of this install). ``clock`` is the wall clock unless a test gives a faster one.
    ``runtime`` runs the executions: ``process`` (the runner as a process), ``auto``,
    ``docker``, ``podman`` or ``nerdctl`` (§8.1; :mod:`.runtimes`); ``runtime_path`` is where
    runtime programs are looked up (default: PATH) and ``device_scan`` finds the devices of a
    mounted host path (:mod:`.containers`).
    """

    def __init__(
        self,
        state_dir: Path,
        node_name: str | Sequence[str] | None = None,
        *,
        runner_command: Sequence[str] | None = None,
        profiles: Mapping[str, BurnInProfile] | None = None,
        tests: Mapping[str, BurnInTestSpec] | None = None,
        sinks: SinkSet | None = None,
        node_labels: Mapping[str, Mapping[str, str]] | None = None,
        clock: SubstrateClock | None = None,
        stop_grace: float = STOP_GRACE,
        runtime: str = PROCESS,
        runtime_path: str | None = None,
        device_scan: DeviceScan = char_devices,
    ) -> None:
        self.state_dir = Path(state_dir)
        names = [node_name or hostname()] if isinstance(node_name, str | None) else node_name
        labels = node_labels or {}
        self.clock: SubstrateClock = clock or HostClock()
        self.nodes = NodeFiles(
            self.state_dir / "nodes", [host_node(n, labels.get(n)) for n in names]
        )
        self.store = FileRunStore(
            self.state_dir / "runs", now=self.clock.now, profiles=profiles, tests=tests
        )
        self.processes = ProcessExecutions(
            self.state_dir / "executions",
            self.clock,
            runner_command,
            stop_grace=stop_grace,
            runtime=runtime,
            runtime_path=runtime_path,
            device_scan=device_scan,
        )
        self.delivery = SinkDelivery(sinks)
        self.runner_part = self.processes

    @property
    def runs_images(self) -> bool:
        """Whether executions run the test's image: not as plain processes, which run the
        runner installed with glimmer, so a test with no image is no Error here
        (:class:`~glimmer.engine.backend.ImageFree`)."""
        return self.processes.runtime.current() is not None
