"""The Backend protocol: everything the reconciler reads from and asks of a substrate.

The engine is written once (DESIGN.md, "One reconciler, four substrates"). A substrate — the
simulator, this host, Kubernetes, Slurm — implements this protocol; the engine never imports a
substrate. What a Kubernetes operator calls a pod, the protocol calls an *execution*: one runner
process on one node, with a deterministic name, a phase and an exit code.

Rules a backend keeps so the engine can keep its own:

* node reads (:meth:`Backend.get_node`, :meth:`Backend.list_nodes`) and the run list used by
  admission (:meth:`Backend.list_runs`) are fresh, never served from a cache;
* :meth:`Backend.update_node` applies schedulability and annotations in ONE update;
* :meth:`Backend.write_metadata` applies annotations and finalizers in ONE update;
* :meth:`Backend.create_execution` of a name that already exists is not an error;
* objects handed to the engine are never mutated afterwards by the backend, and the engine never
  mutates what it was handed (it writes new objects).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from glimmer.api.profile import BurnInProfile
from glimmer.api.result import ArtifactRef, TestResult
from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.api.test import BurnInTestSpec
from glimmer.contract.vocab import Artifact
from glimmer.errors import GlimmerError


class BackendError(GlimmerError):
    """A substrate call failed transiently; the pass stops and is retried later."""


class NotFound(BackendError):
    """The object named does not exist (a node, an execution, a run)."""


class Conflict(BackendError):
    """A write lost a race with another writer (Kubernetes: a stale resourceVersion)."""


class LogUnavailable(BackendError):
    """An execution's log could not be read; the message says why."""


@dataclass(frozen=True)
class NodeView:
    """A node as read fresh from the substrate."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    unschedulable: bool = False
    annotations: Mapping[str, str] = field(default_factory=dict)
    kernel: str = ""
    os_image: str = ""
    arch: str = ""


class ExecPhase(StrEnum):
    """Phase of one execution (a Kubernetes pod's phase)."""

    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"

    @property
    def terminated(self) -> bool:
        # By identity: asked of every execution a pass looks at (``live``), and a tuple's ``in``
        # compares the strings of a live one with each terminal phase.
        return self is ExecPhase.SUCCEEDED or self is ExecPhase.FAILED


@dataclass(frozen=True)
class Rendezvous:
    """The rendezvous of a Pair or Group attempt: the name its executions meet under, so each
    can reach the others by role (Kubernetes: a headless service publishing not-ready
    addresses; elsewhere whatever the substrate resolves role names with)."""

    name: str
    namespace: str
    run: str
    run_uid: str
    test: str
    attempt: int


@dataclass(frozen=True)
class Mount:
    """A host path the execution sees at ``path``; ``host_type`` is the kind of thing the host
    path must be (``Directory``, ``CharDevice``...; empty: not checked)."""

    host_path: str
    path: str
    read_only: bool = True
    host_type: str = ""


@dataclass(frozen=True)
class Privileges:
    """What the runner process may do on its node beyond an ordinary process."""

    privileged: bool = False
    run_as_user: int | None = None
    host_network: bool = False


@dataclass(frozen=True)
class Resources:
    """Devices and resources the execution needs, as ``(name, quantity)`` pairs in the test's
    order (``nvidia.com/gpu`` = 8, ``memory`` = 16Gi)."""

    limits: tuple[tuple[str, str], ...] = ()
    requests: tuple[tuple[str, str], ...] = ()

    @property
    def gpus(self) -> int:
        """GPUs asked for (the ``*/gpu`` limit, else request), 0 when none."""
        for name, quantity in self.limits or self.requests:
            if name.endswith("/gpu") and quantity.isdigit():
                return int(quantity)
        return 0


@dataclass(frozen=True)
class Seat:
    """An execution's place in its rendezvous: the rendezvous's name, the role whose address
    it is given (a Pair end's peer, a Group rank's rank 0) and the environment variable that
    receives that address ("" when the test's own environment sets it)."""

    rendezvous: str
    peer_role: str
    address_env: str = ""


@dataclass(frozen=True)
class ExecutionSpec:
    """What the engine asks a substrate to run, built in one place for every scope (§2.16).

    The request is neutral: where (``node``), what (``image``, ``command``, ``args``, ``env``),
    what it may touch (``mounts``, ``resources``, ``privileges``), for how long at most
    (``deadline_seconds``) and what it is in its unit (``role``, ``rank``, ``seat``). How a
    substrate realises it — a Pod, a Slurm step, a process on this host — is the substrate's.
    ``role`` is ``""`` (Node), ``server``/``client`` (Pair) or ``rank-<i>`` (Group). ``env`` is
    the ordered environment after duplicates were resolved (later wins); the rendezvous
    address in it is the substrate's answer (:meth:`Backend.rendezvous_address`).
    ``labels`` identify the execution (run, test, node, attempt, role) on any substrate.
    """

    name: str
    namespace: str
    run: str
    run_uid: str
    test: str
    test_index: int
    kind: str
    scope: str
    node: str
    unit_nodes: tuple[str, ...]
    attempt: int
    role: str
    rank: int | None
    nranks: int | None
    image: str
    env: tuple[tuple[str, str], ...]
    duration_seconds: int
    deadline_seconds: int
    labels: Mapping[str, str]
    test_spec: BurnInTestSpec
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    mounts: tuple[Mount, ...] = ()
    resources: Resources = field(default_factory=Resources)
    privileges: Privileges = field(default_factory=Privileges)
    seat: Seat | None = None

    @property
    def service(self) -> str:
        """The name of the rendezvous this execution belongs to ("" for a Node execution)."""
        return self.seat.rendezvous if self.seat is not None else ""

    def env_value(self, name: str) -> str | None:
        """The value of one environment variable, or None when it is not set."""
        for key, value in self.env:
            if key == name:
                return value
        return None


@dataclass(frozen=True)
class Execution:
    """One execution as observed now.

    ``exit_code`` is the runner container's exit code when it terminated (None otherwise);
    ``reason``/``message`` are the pod-level account (``DeadlineExceeded``, ``Evicted``),
    ``container_reason``/``container_message`` the runner container's terminated account
    (``OOMKilled``), ``waiting_reason``/``waiting_message`` its waiting state
    (``ImagePullBackOff``), and ``scheduler_message`` the reason it is not scheduled.
    """

    spec: ExecutionSpec
    phase: ExecPhase
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    ready: bool = False
    exit_code: int | None = None
    reason: str = ""
    message: str = ""
    container_reason: str = ""
    container_message: str = ""
    waiting_reason: str = ""
    waiting_message: str = ""
    scheduler_message: str = ""

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def node(self) -> str:
        return self.spec.node

    @property
    def live(self) -> bool:
        return not self.phase.terminated

    @property
    def started(self) -> bool:
        return self.started_at is not None or self.phase is not ExecPhase.PENDING


class ExecutionSet(Protocol):
    """The executions of one run: every one by name, and the live ones."""

    def get(self, name: str) -> Execution | None: ...

    def live(self) -> Sequence[Execution]: ...

    def __iter__(self) -> Iterator[Execution]: ...


class ExecutionChanges(Protocol):
    """What an :class:`ExecutionSet` may offer besides (optional; the engine asks for it by
    name and reads every live execution when it is absent): which executions changed."""

    def changed_since(self, mark: int | None) -> tuple[int, Sequence[str]]:
        """A new mark, and the names of the executions that were created, changed or removed
        after ``mark`` was handed out (with None: none, only the mark to ask with next)."""
        ...


class ImageFree(Protocol):
    """What a backend may say besides (optional; the engine asks for it by name and takes True
    when it is absent): whether its executions run an image. A substrate that runs the runner
    installed on the host (the local backend's processes) needs none, so a test whose image
    cannot be resolved is no Error there; every substrate that pulls images says True."""

    @property
    def runs_images(self) -> bool: ...


def runs_images(backend: object) -> bool:
    """Whether ``backend``'s executions run an image (:class:`ImageFree`; True unless it says)."""
    return bool(getattr(backend, "runs_images", True))


class ArtifactStore(Protocol):
    """What a backend may offer besides (optional; the engine asks for it by name and stores
    nothing when it is absent, so the result's ``artifacts`` stays unset): a place to keep the
    artifacts a runner fenced on stdout (§3.6, "Operator storage"; the rules are
    :mod:`glimmer.verdict.artifact_refs`). The engine calls it once per harvested execution
    that fenced any, after the attempt is decided and before the status write, so the
    execution is never deleted before its evidence is kept."""

    def store_artifacts(
        self, run: BurnInRun, test: str, pod_name: str, artifacts: Sequence[Artifact]
    ) -> list[ArtifactRef]:
        """Keep what can be kept of ``artifacts`` (one execution's) and return one ref per
        artifact, in order: where it is, or (``dropped``) why it is not. A refusal or a failed
        write is a dropped ref, never an exception: evidence lost never changes a phase."""
        ...


class ExecutionIndex:
    """An :class:`ExecutionSet` over a list, for backends that list and filter."""

    def __init__(self, executions: Sequence[Execution]) -> None:
        self._by_name = {e.name: e for e in executions}
        self._live = [e for e in executions if e.live]

    def get(self, name: str) -> Execution | None:
        return self._by_name.get(name)

    def live(self) -> Sequence[Execution]:
        return self._live

    def __iter__(self) -> Iterator[Execution]:
        return iter(self._by_name.values())


@dataclass(frozen=True)
class Delivery:
    """What the engine hands to the run's sinks; the envelope itself is built from it by
    :mod:`glimmer.sinks.envelope` (one assembler for every substrate).

    ``reason`` is ``RunPhaseChanged``, ``TestCompleted`` or ``Checkpoint``; ``key`` the
    idempotency key part (the phase, ``<test>/<node1>[+<node2>…]``, or the checkpoint
    sequence); ``phase`` the transition's phase (the result's for TestCompleted);
    ``result`` the settled result for TestCompleted. ``view`` is the run as the envelope
    describes it: the pass's results and counters (the stored status lags the pass until its
    write) and, for RunPhaseChanged, the phase being entered. ``sinks`` and ``baseline`` come
    from the pinned plan (the spec's baseline before a plan was pinned).
    """

    reason: str
    namespace: str
    run: str
    run_uid: str
    key: str
    phase: str
    sinks: tuple[str, ...] = ()
    baseline: bool = False
    sequence: int | None = None
    result: TestResult | None = None
    at: datetime | None = None
    view: BurnInRun | None = field(default=None, compare=False, repr=False)


class Clock(Protocol):
    """The substrate's time."""

    def now(self) -> datetime:
        """The substrate's current time (timezone-aware UTC; virtual on the simulator)."""
        ...


class Nodes(Protocol):
    """The nodes, always read fresh; a cordon and its stamps are one update."""

    def get_node(self, name: str) -> NodeView | None:
        """The node, or None when it does not exist."""
        ...

    def list_nodes(self, selector: Mapping[str, str] | None = None) -> list[NodeView]:
        """Every node whose labels include all of ``selector`` (all nodes for None)."""
        ...

    def update_node(
        self,
        name: str,
        *,
        unschedulable: bool | None = None,
        annotations: Mapping[str, str | None] | None = None,
    ) -> NodeView:
        """Set schedulability and annotations (None deletes a key) in one update.
        Raises :class:`NotFound`."""
        ...


class Executions(Protocol):
    """Runner executions ("pods") and the rendezvous they meet in."""

    def executions(self, namespace: str, run: str, run_uid: str) -> ExecutionSet:
        """Every execution owned by this run (matched by run name AND uid)."""
        ...

    def create_execution(self, spec: ExecutionSpec) -> None:
        """Start an execution; an existing one of the same name is left as it is."""
        ...

    def delete_execution(self, namespace: str, name: str) -> None:
        """Stop and delete an execution; a missing one is not an error."""
        ...

    def read_log(self, namespace: str, name: str) -> str:
        """stdout and stderr of an execution so far. Raises :class:`LogUnavailable`."""
        ...

    def ensure_rendezvous(self, service: Rendezvous) -> None:
        """Make the rendezvous of a Pair/Group attempt exist (idempotent)."""
        ...

    def rendezvous_address(self, namespace: str, rendezvous: str, role: str) -> str:
        """The address the execution of ``role`` in ``rendezvous`` is reached at (a DNS name on
        Kubernetes, a hostname on Slurm, an address on this host). Pure: no call made."""
        ...


class RunStore(Protocol):
    """Where BurnInRuns live, and the profiles and tests they name."""

    def get_run(self, namespace: str, name: str) -> BurnInRun | None:
        """The run as stored, or None."""
        ...

    def list_runs(self) -> list[BurnInRun]:
        """Every run in every namespace, read fresh (admission decides from this)."""
        ...

    def write_status(self, run: BurnInRun, status: BurnInRunStatus) -> BurnInRun:
        """Store ``status`` on the run; returns the stored run. Raises :class:`Conflict`."""
        ...

    def write_metadata(
        self,
        run: BurnInRun,
        *,
        annotations: Mapping[str, str | None] | None = None,
        finalizers: Sequence[str] | None = None,
    ) -> BurnInRun:
        """Set annotations (None deletes) and replace finalizers in one update; the status is
        kept as stored. Returns the stored run."""
        ...

    def delete_run(self, namespace: str, name: str) -> None:
        """Delete the run (its executions go with it)."""
        ...

    def get_profile(self, namespace: str, name: str) -> BurnInProfile | None:
        """A profile by name (built-in profiles resolve where the substrate offers them)."""
        ...

    def get_tests(self, namespace: str) -> Mapping[str, BurnInTestSpec]:
        """Every BurnInTest of the namespace, by name."""
        ...


class Deliverer(Protocol):
    """Hands the engine's deliveries to the run's sinks (one component over ``sinks/`` that
    every substrate uses: :mod:`glimmer.backends.common.delivery`)."""

    @property
    def describes_runs(self) -> bool:
        """Whether deliveries should carry ``view`` (True when envelopes go to sinks); a backend
        that only records deliveries says False and saves a copy of the results per delivery."""
        ...

    def deliver(self, delivery: Delivery) -> bool:
        """Hand an envelope to the sinks; False when some sink failed."""
        ...


class Backend(Clock, Nodes, Executions, RunStore, Deliverer, Protocol):
    """A substrate the reconciler drives: its clock, nodes, executions, run store and
    delivery. A substrate may build itself from separate parts (a file run store, the common
    delivery) as long as the whole answers every member."""
