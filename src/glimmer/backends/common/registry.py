"""``--backend NAME`` to a factory: the one place the CLI learns which substrates exist.

Each entry names a substrate and how to build its backend; one not built yet answers "not
available yet" with what does run today. The CLI reaches a substrate only through here: the
simulator's entry also carries the few fleet-twin helpers the simulator-only commands need
(:data:`SIM`: the twin of a fleet spec, its fault check, its clock's time syntax), and this
module re-exports the types they annotate with, so no CLI module imports ``glimmer.backends.sim``
or ``glimmer.sim`` itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glimmer.errors import InputError

if TYPE_CHECKING:
    from glimmer.api.profile import BurnInProfile
    from glimmer.api.test import BurnInTestSpec
    from glimmer.backends.common.drivers import RunWakes
    from glimmer.backends.common.run_store import FileRunStore
    from glimmer.backends.sim.backend import SimBackend
    from glimmer.backends.sim.driver import Drive, Progress
    from glimmer.engine.backend import NodeView
    from glimmer.fleet.faultspec import FaultSpec
    from glimmer.fleet.topology import Topology
    from glimmer.sim.twin import FleetSim
    from glimmer.sinks.sinkset import SinkSet

# The simulator, the engine and the pydantic models are imported where an entry's method
# needs them, not here: every command reaches this module, and most never build a backend.
# The re-exported types stay importable from here (module __getattr__ below), so a CLI
# module can annotate with them under TYPE_CHECKING without importing the simulator.
_REEXPORTS = {
    "Drive": "glimmer.backends.sim.driver",
    "Progress": "glimmer.backends.sim.driver",
    "SimBackend": "glimmer.backends.sim.backend",
    "FleetSim": "glimmer.sim.twin",
}


def __getattr__(name: str) -> Any:
    where = _REEXPORTS.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(where), name)


__all__ = [
    "KUBERNETES",
    "LOCAL",
    "REGISTRY",
    "SIM",
    "SLURM",
    "Drive",
    "Entry",
    "FaultCheck",
    "FleetSim",
    "Progress",
    "SimBackend",
    "SimEntry",
    "entry",
    "names",
]


# Refuses a parsed fault that cannot act in one fleet (InputError naming it and ``where``).
FaultCheck = Callable[["FaultSpec", str], None]


class SimEntry:
    """The simulator's entry: its backend over a fleet twin, the twin's nodes as a substrate
    lists them, and the virtual-clock driver that runs a run to its end on it."""

    def twin(
        self, topo: Topology, faults: Iterable[FaultSpec] = (), *, noise: bool = True
    ) -> FleetSim:
        """The fleet twin of ``topo`` with ``faults`` planted, each checked against the
        topology (InputError for the first that cannot act in it)."""
        from glimmer.sim.twin import FleetSim, from_spec

        return FleetSim(topo, [from_spec(f) for f in faults], noise=noise)

    def fault_check(self, topo: Topology) -> FaultCheck:
        """The check of parsed faults against the simulator's mode table on ``topo``: whether
        each mode exists and accepts its target. The reach tables are built once here, so a
        fleet's many declared faults are checked against one set of them."""
        from glimmer.sim.reach import TopologyReach
        from glimmer.sim.twin import from_spec

        reach = TopologyReach(topo)

        def check(spec: FaultSpec, where: str) -> None:
            reach.check([from_spec(spec)], where)

        return check

    def parse_time(self, text: str) -> float:
        """The twin's clock reading of ``text``: RFC 3339, or an offset such as ``+2h`` from
        the twin's epoch. ValueError names what was wrong."""
        from glimmer.sim import clock

        return clock.parse_time(text)

    def rfc3339(self, t: float) -> str:
        """A twin's clock reading as RFC 3339 (``2026-10-02T00:00:00Z``)."""
        from glimmer.sim import clock

        return clock.rfc3339(t)

    def backend(
        self,
        twin: FleetSim,
        *,
        seed: int = 0,
        profiles: Mapping[str, BurnInProfile] | None = None,
        tests: Mapping[str, BurnInTestSpec] | None = None,
        sinks: SinkSet | None = None,
        state_dir: Path | None = None,
    ) -> SimBackend:
        """The simulator over ``twin``; its runs kept as files under ``state_dir`` (the one
        file-backed run store every substrate without its own uses), else in memory."""
        from glimmer.backends.sim.fleet import fleet_backend

        store = self.run_store(state_dir) if state_dir is not None else None
        return fleet_backend(
            twin, seed=seed, profiles=profiles, tests=tests, sinks=sinks, store=store
        )

    def run_store(self, root: Path) -> FileRunStore:
        """The file-backed run store under ``root`` (what ``--state-dir`` names)."""
        from glimmer.backends.common.run_store import FileRunStore

        return FileRunStore(root)

    def nodes(self, topo: Topology) -> list[NodeView]:
        from glimmer.backends.sim.fleet import fleet_nodes

        return fleet_nodes(topo)

    @property
    def drive(self) -> Callable[..., Drive]:
        from glimmer.backends.sim.driver import drive

        return drive

    @property
    def settled(self) -> Callable[[Any], bool]:
        from glimmer.backends.sim.driver import settled

        return settled

    @property
    def certify(self) -> Callable[..., Any]:
        """The certification of a fleet twin (``glimmer certify`` on the simulator)."""
        # Imported when asked for: only the certify command pays for the certify package.
        from glimmer.backends.sim.certify import certify

        return certify

    @property
    def fleet_twin(self) -> Callable[..., FleetSim]:
        """The twin of a topology with planted faults, as ``glimmer certify`` builds it."""
        from glimmer.backends.sim.certify import fleet_twin

        return fleet_twin

    def run_wakes(self, max_retries: int = 0) -> RunWakes:
        """The wake-up table of runs driven side by side on the virtual clock."""
        from glimmer.backends.common.drivers import RunWakes

        return RunWakes(max_retries=max_retries)

    @property
    def drive_virtual(self) -> Callable[..., None]:
        """The one virtual-clock loop, for commands that drive work beside runs (schedules)."""
        from glimmer.backends.common.drivers import drive_virtual

        return drive_virtual


SIM = SimEntry()


class LocalEntry:
    """This host's entry: its backend over a state directory, driven on the wall clock."""

    def backend(
        self,
        state_dir: Path,
        node_name: str | None = None,
        *,
        profiles: Mapping[str, BurnInProfile] | None = None,
        tests: Mapping[str, BurnInTestSpec] | None = None,
        sinks: SinkSet | None = None,
        runtime: str = "process",
    ) -> Any:
        """This host as a substrate, its runs, cordon and executions under ``state_dir``;
        ``runtime`` runs each execution (process, auto, docker, podman, nerdctl)."""
        from glimmer.backends.local.backend import LocalBackend

        return LocalBackend(
            state_dir, node_name, profiles=profiles, tests=tests, sinks=sinks, runtime=runtime
        )

    @property
    def runtimes(self) -> tuple[str, ...]:
        """The names ``runtime`` takes."""
        from glimmer.backends.local.runtimes import CHOICES

        return CHOICES

    @property
    def unanswered_refs(self) -> Callable[..., list[str]]:
        """The warnings for ``runner.env`` valueFrom sources this host leaves unset (§8.2),
        given (test name, spec) pairs."""
        from glimmer.backends.local.field_refs import unanswered

        return unanswered

    @property
    def halves(self) -> Callable[..., Any]:
        """The wrapper that runs this host's half of Pair and Group tests across hosts
        (:class:`glimmer.backends.local.halves.HalfBackend`)."""
        from glimmer.backends.local.halves import HalfBackend

        return HalfBackend

    @property
    def hostname(self) -> Callable[[], str]:
        """The name this host answers as a node by default."""
        from glimmer.backends.local.nodes import hostname

        return hostname

    @property
    def drive(self) -> Callable[..., Any]:
        """The wall-clock driver: passes, sleeping for the wake-up asked for, until settled."""
        from glimmer.backends.common.drivers import drive_wall_clock

        return drive_wall_clock


LOCAL = LocalEntry()


class SlurmEntry:
    """A Slurm cluster's entry: its backend over a state directory the nodes share, the orphan
    reaper, what keeps a target from starting a run, and the wall-clock driver."""

    def backend(
        self,
        state_dir: Path,
        *,
        partition: str | None = None,
        runner_command: Sequence[str] | None = None,
        profiles: Mapping[str, BurnInProfile] | None = None,
        tests: Mapping[str, BurnInTestSpec] | None = None,
        sinks: SinkSet | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Any:
        """The cluster as a substrate, its runs, cordon records and job files under
        ``state_dir``; ``partition`` limits the nodes and is where jobs go; ``runner_command``
        starts a runner on a node (default: the glimmer-runner beside this interpreter);
        ``env`` is added to every Slurm client's environment (``SLURM_CONF``)."""
        from glimmer.backends.slurm.backend import SlurmBackend
        from glimmer.backends.slurm.commands import Slurm

        return SlurmBackend(
            state_dir,
            Slurm(env=dict(env or {})),
            partition=partition,
            runner_command=runner_command,
            profiles=profiles,
            tests=tests,
            sinks=sinks,
        )

    @property
    def default_runner(self) -> str:
        """The runner a job starts by default: glimmer-runner beside this interpreter."""
        from glimmer.backends.slurm.backend import default_runner_command

        return default_runner_command()[0]

    def reap(self, backend: Any) -> list[str]:
        """Run the orphan reaper of ``backend``'s store; one line per node it changed."""
        return [done.line() for done in backend.reap()]

    def refusals(self, backend: Any, names: Sequence[str]) -> list[str]:
        """Why each of ``names`` cannot take a run now (not a node of the cluster, drained or
        down by someone else, with the reason); a drain of this store's runs is none."""
        return list(backend.nodes.refusals(names))

    @property
    def drive(self) -> Callable[..., Any]:
        """The wall-clock driver: passes, sleeping for the wake-up asked for, until settled."""
        from glimmer.backends.common.drivers import drive_wall_clock

        return drive_wall_clock


SLURM = SlurmEntry()


class KubernetesEntry:
    """A Kubernetes cluster's entry: its backend over the API server a kubeconfig names, and
    the wall-clock driver (``glimmer run --backend kubernetes`` drives one run from outside
    the cluster; the operator drives every run from inside it)."""

    def backend(
        self,
        kubeconfig: Path | None = None,
        *,
        context: str | None = None,
        profiles: Mapping[str, BurnInProfile] | None = None,
        tests: Mapping[str, BurnInTestSpec] | None = None,
        sinks: SinkSet | None = None,
    ) -> Any:
        """The cluster ``kubeconfig`` names (None: $KUBECONFIG, the in-cluster service
        account, or ~/.kube/config) as a substrate; its runs are the cluster's BurnInRuns,
        ``profiles`` and ``tests`` answer names the cluster does not hold."""
        from glimmer.backends.kubernetes.backend import KubernetesBackend
        from glimmer.backends.kubernetes.client import connect

        return KubernetesBackend(
            connect(kubeconfig, context=context), profiles=profiles, tests=tests, sinks=sinks
        )

    @property
    def drive(self) -> Callable[..., Any]:
        """The wall-clock driver: passes, sleeping for the wake-up asked for, until settled."""
        from glimmer.backends.common.drivers import drive_wall_clock

        return drive_wall_clock

    def certify_client(self, kubeconfig: Path | None = None, *, context: str | None = None) -> Any:
        """What ``glimmer certify`` reads and writes on the cluster ``kubeconfig`` names
        (:class:`glimmer.backends.kubernetes.certify_cli.CertifyCluster`): Nodes, the
        Certification, its Workflows and its report ConfigMap."""
        from glimmer.backends.kubernetes.certify_cli import open_cluster

        return open_cluster(kubeconfig, context)


KUBERNETES = KubernetesEntry()


@dataclass(frozen=True)
class Entry:
    """One ``--backend`` name: what it is, and its factory (None: not available yet)."""

    name: str
    summary: str
    factory: Callable[..., Any] | None = None

    @property
    def available(self) -> bool:
        return self.factory is not None


REGISTRY: Mapping[str, Entry] = {
    "sim": Entry("sim", "the built-in simulated fleet", SIM.backend),
    "local": Entry("local", "this host: the runner programs as processes", LOCAL.backend),
    "kubernetes": Entry(
        "kubernetes", "a Kubernetes cluster: one runner pod per execution", KUBERNETES.backend
    ),
    "slurm": Entry("slurm", "a Slurm cluster: one batch job per execution", SLURM.backend),
}


def names(available: bool | None = None) -> Sequence[str]:
    """The registered names, all or only those (not) available."""
    return [n for n, e in REGISTRY.items() if available is None or e.available == available]


def entry(name: str) -> Entry:
    """The available entry named ``name``. Raises InputError for a name not available yet or
    unknown, saying what runs today."""
    found = REGISTRY.get(name)
    if found is not None and found.available:
        return found
    if found is not None:
        return _not_yet(name)
    known = ", ".join(REGISTRY)
    raise InputError(f"--backend {name}: unknown backend (known: {known})")


def _not_yet(name: str) -> Entry:
    running = ", ".join(names(available=True))
    raise InputError(f"--backend {name}: not available yet (available: {running})")
