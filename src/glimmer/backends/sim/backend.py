"""The simulator backend: a fleet's nodes, executions as discrete events on a virtual clock.

Time moves only when the driver says so (:meth:`SimBackend.advance_to`), straight to the next
event, so a four-hour soak on a thousand nodes settles in seconds — deterministically for a
seed. An execution is created, scheduled and started about a second later, Ready shortly after,
and terminates after its test's duration with seeded jitter (burst kinds in well under two
minutes); its log and exit code then come from the runner the backend was given (on a fleet,
the simulated runners over the fleet's state). Machinery faults (:mod:`.faults`) delete,
evict, hang or never schedule executions, or make their logs unreadable.

Rendezvous: a Pair server serves until its client has ended; a Group's rank 0 ends after the
last worker. Executions that outlive their deadline are killed with
``DeadlineExceeded``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import heapq
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import NamedTuple, TypeVar

from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.base import apply_annotations, selector_matches
from glimmer.backends.common.delivery import SinkDelivery
from glimmer.backends.common.run_store import MemoryRunStore, RunKey, RunsInStore, StoredRuns
from glimmer.backends.sim.faults import (
    EVICTED_MESSAGE,
    INSUFFICIENT_GPU,
    ExecutionFault,
    first_fault,
)
from glimmer.contract.kinds import burst_only
from glimmer.engine.backend import (
    Delivery,
    ExecPhase,
    Execution,
    ExecutionSpec,
    LogUnavailable,
    NodeView,
    NotFound,
    Rendezvous,
)
from glimmer.sinks.sinkset import SinkSet

START_LATENCY = (0.3, 1.2)  # seconds from creation to a started container (image cached)
READY_LATENCY = (0.2, 0.8)  # seconds from start to Ready (rendezvous roles)
JITTER = 0.01  # an execution runs its duration plus up to 1 %
MAX_OVERRUN = 60.0  # ... but never more than a minute past it
BURST_SECONDS = (20.0, 90.0)  # burst-only kinds finish quickly whatever the duration says
DEADLINE_EXIT = 143  # SIGTERM at activeDeadlineSeconds
EVICTED_EXIT = 137
ROLE_TAIL = 0.0  # a server / root ends with its last peer (same instant)
QUIET_EVENTS = frozenset({"start"})
# How long the simulated controller takes to look once something woke it: whatever else happens
# within this many virtual seconds of the first change is seen in the same pass. A real one
# gathers changes the same way (a watch's batching, the reconcile's own API round trips, the
# wall-clock driver's poll of at most 10 s); looking at every finish at its exact instant made a
# 16,384-node run 133,661 passes, one per unit, and half its CPU. A 1,024-node acceptance run
# lasts 0.3 % longer in virtual time for it.
REACTION_WINDOW = 5.0


@dataclass(frozen=True)
class RunnerRequest:
    """What a simulated runner is asked: which execution, from when, for how long."""

    spec: ExecutionSpec
    started: datetime
    elapsed: float
    seed: int


@dataclass(frozen=True)
class RunnerReply:
    stdout: str
    exit_code: int


Runner = Callable[[RunnerRequest], RunnerReply]


def quiet_runner(request: RunnerRequest) -> RunnerReply:
    """A runner that passes without printing: for tests that only exercise the machinery."""
    return RunnerReply("", 0)


@dataclass
class _Exec:
    """The simulator's own mutable record of one execution."""

    view: Execution
    log: str = ""
    log_unreadable: bool = False
    hung: bool = False
    finish_at: float | None = None


class SimExecutions:
    """The executions of one run: every one by name, the live ones by name, and the names of
    those that changed, in order (the engine's change feed,
    :class:`~glimmer.engine.backend.ExecutionChanges`: a mark is a position in it)."""

    def __init__(self) -> None:
        self.by_name: dict[str, _Exec] = {}
        self.live_names: dict[str, None] = {}
        self.changes: list[str] = []

    def changed_since(self, mark: int | None) -> tuple[int, Sequence[str]]:
        end = len(self.changes)
        return end, () if mark is None or mark >= end else self.changes[mark:]

    def get(self, name: str) -> Execution | None:
        record = self.by_name.get(name)
        return record.view if record is not None else None

    def live(self) -> Sequence[Execution]:
        return [self.by_name[n].view for n in self.live_names]

    def __iter__(self) -> Iterator[Execution]:
        return (r.view for r in self.by_name.values())


class _Event(NamedTuple):
    """One event on the clock. Ordered as a tuple, by time and then by when it was pushed
    (``seq`` is unique, so the rest is never compared): the heap compares in C, where a
    dataclass's generated ``__lt__`` was called a dozen times per event."""

    at: float
    seq: int
    kind: str
    uid: str
    name: str


_Plain = TypeVar("_Plain", Execution, NodeView)


def _changed(view: _Plain, changes: Mapping[str, object]) -> _Plain:
    """``view`` with ``changes``: what :func:`dataclasses.replace` makes (a new object, the same
    fields), without its walk over every field's definition — three changes per execution and
    two per cordoned node, a few per cent of a fleet's run. ``Execution`` and ``NodeView`` are
    plain frozen dataclasses (no ``__post_init__``, no slots): their fields are their
    ``__dict__``."""
    new = object.__new__(type(view))
    fields = new.__dict__
    fields.update(view.__dict__)
    fields.update(changes)
    return new


def _seed_of(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("\0".join(map(str, parts)).encode()).digest()[:8], "big")


class SimBackend(RunsInStore):
    """A :class:`~glimmer.engine.backend.Backend` over simulated nodes and a virtual clock."""

    def __init__(
        self,
        nodes: Sequence[NodeView],
        *,
        runner: Runner = quiet_runner,
        seed: int = 0,
        start: datetime = datetime(2026, 10, 2, tzinfo=UTC),
        faults: Sequence[ExecutionFault] = (),
        profiles: Mapping[str, BurnInProfile] | None = None,
        tests: Mapping[str, BurnInTestSpec] | None = None,
        sinks: SinkSet | None = None,
        store: StoredRuns | None = None,
        reaction_window: float = REACTION_WINDOW,
    ) -> None:
        self.nodes: dict[str, NodeView] = {n.name: n for n in nodes}
        self.reaction_window = reaction_window  # 0: every change seen at its own instant
        self.runner = runner
        self.seed = seed
        self.epoch = start
        self.t = 0.0
        self._now_t, self._now_epoch, self._now = 0.0, start, start
        self._rng = random.Random()
        self.faults = tuple(faults)
        self.profiles: dict[str, BurnInProfile] = dict(profiles or {})
        self.tests: dict[str, BurnInTestSpec] = dict(tests or {})
        # Runs in memory unless a store is given (files: they outlive the process); on the
        # simulator's clock either way, so creation and deletion timestamps are virtual.
        self.store: StoredRuns = store if store is not None else MemoryRunStore()
        self.store.now = self.now
        self.delivery = SinkDelivery(sinks)
        self.services: dict[str, Rendezvous] = {}
        self.log_unavailable: set[str] = set()  # execution names whose log cannot be read
        self.events_processed = 0
        self.touched: set[str] = set()  # run uids whose executions changed (cleared by drivers)
        self._submitted = 0
        self._seq = 0
        self._events: list[_Event] = []
        self._runs_exec: dict[str, SimExecutions] = {}
        self._owner: dict[str, str] = {}  # execution name -> run uid

    def _seeded(self, seed: int) -> random.Random:
        """The backend's one generator, seeded with ``seed``: the stream ``random.Random(seed)``
        gives, without making a generator (4 against 11 us, twice per execution). Every caller
        draws what it needs at once, before the next seeding."""
        self._rng.seed(seed)
        return self._rng

    # -- the clock ----------------------------------------------------------------------------
    def now(self) -> datetime:
        # Asked a dozen times per instant (every pass, every created or ended execution): the
        # instant is made once per clock reading and epoch (a datetime is immutable).
        t, epoch = self.t, self.epoch
        if t != self._now_t or epoch is not self._now_epoch:
            self._now = epoch + timedelta(seconds=t)
            self._now_t, self._now_epoch = t, epoch
        return self._now

    def at(self, seconds: float) -> datetime:
        return self.epoch + timedelta(seconds=seconds)

    # -- nodes --------------------------------------------------------------------------------
    def get_node(self, name: str) -> NodeView | None:
        return self.nodes.get(name)

    def list_nodes(self, selector: Mapping[str, str] | None = None) -> list[NodeView]:
        return [n for n in self.nodes.values() if selector_matches(n.labels, selector)]

    def update_node(
        self,
        name: str,
        *,
        unschedulable: bool | None = None,
        annotations: Mapping[str, str | None] | None = None,
    ) -> NodeView:
        node = self.nodes.get(name)
        if node is None:
            raise NotFound(f"node {name} not found")
        # updated_node's change, copied as _changed copies (a cordon and a release per unit).
        node = _changed(
            node,
            {
                "unschedulable": node.unschedulable if unschedulable is None else unschedulable,
                "annotations": apply_annotations(node.annotations, annotations),
            },
        )
        self.nodes[name] = node
        return node

    # -- executions ---------------------------------------------------------------------------
    def executions(self, namespace: str, run: str, run_uid: str) -> SimExecutions:
        return self._runs_exec.setdefault(run_uid, SimExecutions())

    def _push(self, at: float, kind: str, uid: str, name: str) -> None:
        self._seq += 1
        heapq.heappush(self._events, _Event(at, self._seq, kind, uid, name))

    def create_execution(self, spec: ExecutionSpec) -> None:
        table = self.executions(spec.namespace, spec.run, spec.run_uid)
        if spec.name in table.by_name:
            return
        view = Execution(spec=spec, phase=ExecPhase.PENDING, created_at=self.now())
        record = _Exec(view)
        table.by_name[spec.name] = record
        table.live_names[spec.name] = None
        self._runs_exec[spec.run_uid].changes.append(spec.name)  # the table itself
        self._owner[spec.name] = spec.run_uid
        rng = self._seeded(_seed_of(self.seed, spec.name))
        if first_fault(self.faults, spec, ("log-unreadable",)) is not None:
            record.log_unreadable = True
        blocked = first_fault(self.faults, spec, ("unschedulable", "image-pull"))
        if spec.node not in self.nodes or (blocked is not None and blocked.mode == "unschedulable"):
            message = (blocked.message if blocked else "") or INSUFFICIENT_GPU
            record.view = dataclasses.replace(view, scheduler_message=message)
            return
        if blocked is not None:
            reason = "ImagePullBackOff"
            message = blocked.message or f'Back-off pulling image "{spec.image}"'
            record.view = dataclasses.replace(view, waiting_reason=reason, waiting_message=message)
            return
        self._push(self.t + rng.uniform(*START_LATENCY), "start", spec.run_uid, spec.name)

    def _record(self, uid: str, name: str) -> _Exec | None:
        table = self._runs_exec.get(uid)
        return table.by_name.get(name) if table is not None else None

    def delete_execution(self, namespace: str, name: str) -> None:
        self._remove(name)

    def _remove(self, name: str) -> None:
        uid = self._owner.get(name)
        if uid is None:
            return
        table = self._runs_exec[uid]
        record = table.by_name.pop(name, None)
        table.live_names.pop(name, None)
        if record is not None:
            table.changes.append(name)
            self._release_peers(uid, record.view.spec)

    def read_log(self, namespace: str, name: str) -> str:
        uid = self._owner.get(name)
        record = self._record(uid, name) if uid is not None else None
        if record is None:
            raise LogUnavailable(f'pods "{name}" not found')
        if record.log_unreadable or name in self.log_unavailable:
            raise LogUnavailable(f"the log of {name} could not be read (kubelet unreachable)")
        view = record.view
        if view.live and view.started_at is not None:
            # Mid-run: what the runner has printed so far (its reply for the time elapsed).
            elapsed = (self.now() - view.started_at).total_seconds()
            seed = _seed_of(self.seed, name, "runner")
            return self.runner(RunnerRequest(view.spec, view.started_at, elapsed, seed)).stdout
        return record.log

    def ensure_rendezvous(self, service: Rendezvous) -> None:
        self.services.setdefault(service.name, service)

    def rendezvous_address(self, namespace: str, rendezvous: str, role: str) -> str:
        # The twin resolves a role by its name within the rendezvous; no DNS is pretended.
        return f"{role}.{rendezvous}"

    # -- events -------------------------------------------------------------------------------
    def next_event_time(self) -> float | None:
        return self._events[0].at if self._events else None

    def _apply(self, event: _Event) -> bool:
        self.t = max(self.t, event.at)
        record = self._record(event.uid, event.name)
        if record is None or not record.view.live:
            return False
        getattr(self, f"_on_{event.kind}")(event.uid, record)
        self._runs_exec[event.uid].changes.append(event.name)  # its view changed (or it went)
        self.events_processed += 1
        if event.kind not in QUIET_EVENTS:
            self.touched.add(event.uid)
        return True

    def advance_to(self, t: float) -> int:
        """Move the clock to ``t``, applying every event due by then; returns how many."""
        applied = 0
        while self._events and self._events[0].at <= t:
            applied += self._apply(heapq.heappop(self._events))
        self.t = max(self.t, t)
        return applied

    def advance(self, until: float) -> bool:
        """Apply events in time order until one the engine would be woken by (a termination,
        Ready, a deletion) has happened, then every event within :attr:`reaction_window` of it,
        or until the clock reaches ``until``. A container starting wakes nobody: the engine
        reads the start time off the execution when it next looks. False when nothing is left
        to happen before ``until``."""
        while self._events and self._events[0].at <= until:
            event = heapq.heappop(self._events)
            if self._apply(event) and event.kind not in QUIET_EVENTS:
                # One observation per window: whatever else happens by its end goes with it.
                # The window never runs past ``until``, the engine's own next wake-up.
                horizon = min(event.at + self.reaction_window, until)
                while self._events and self._events[0].at <= horizon:
                    self._apply(heapq.heappop(self._events))
                return True
        if until == float("inf"):
            return False
        self.t = max(self.t, until)
        return True

    def _set(self, record: _Exec, **changes: object) -> None:
        record.view = _changed(record.view, changes)

    def _run_seconds(self, spec: ExecutionSpec, rng: random.Random) -> float:
        if burst_only(spec.kind):
            return rng.uniform(*BURST_SECONDS)
        duration = float(spec.duration_seconds)
        return min(duration * (1.0 + rng.uniform(0.0, JITTER)), duration + MAX_OVERRUN)

    def _on_start(self, uid: str, record: _Exec) -> None:
        spec = record.view.spec
        rng = self._seeded(_seed_of(self.seed, spec.name, "run"))
        rendezvous = spec.role in ("server", "rank-0")
        self._set(record, phase=ExecPhase.RUNNING, started_at=self.now(), ready=not rendezvous)
        if rendezvous:
            self._push(self.t + rng.uniform(*READY_LATENCY), "ready", uid, spec.name)
        self._push(self.t + spec.deadline_seconds, "deadline", uid, spec.name)
        fault = first_fault(self.faults, spec, ("deleted", "evicted", "hang", "early-exit"))
        if fault is not None and fault.mode == "hang":
            record.hung = True
        elif fault is not None and fault.mode == "early-exit":
            record.finish_at = self.t + fault.after
            self._push(record.finish_at, "finish", uid, spec.name)
            return
        elif fault is not None:
            self._push(self.t + fault.after, fault.mode, uid, spec.name)
        if rendezvous or record.hung:
            return  # a server / root ends after its peers; a hung runner never ends
        record.finish_at = self.t + self._run_seconds(spec, rng)
        self._push(record.finish_at, "finish", uid, spec.name)

    def _on_ready(self, uid: str, record: _Exec) -> None:
        self._set(record, ready=True)

    def _terminate(self, uid: str, record: _Exec, exit_code: int, **changes: object) -> None:
        phase = ExecPhase.SUCCEEDED if exit_code == 0 and not changes.get("reason") else None
        self._set(
            record,
            phase=phase or ExecPhase.FAILED,
            exit_code=exit_code,
            finished_at=self.now(),
            ready=False,
            **changes,
        )
        self._runs_exec[uid].live_names.pop(record.view.name, None)
        self._release_peers(uid, record.view.spec)

    def _on_finish(self, uid: str, record: _Exec) -> None:
        spec = record.view.spec
        started = record.view.started_at or self.now()
        elapsed = (self.now() - started).total_seconds()
        reply = self.runner(
            RunnerRequest(spec, started, elapsed, _seed_of(self.seed, spec.name, "runner"))
        )
        record.log = reply.stdout
        reason = "Completed" if reply.exit_code == 0 else "Error"
        self._terminate(uid, record, reply.exit_code, container_reason=reason)

    def _on_deadline(self, uid: str, record: _Exec) -> None:
        self._terminate(
            uid,
            record,
            DEADLINE_EXIT,
            reason="DeadlineExceeded",
            message="Pod was active on the node longer than the specified deadline",
        )

    def _on_deleted(self, uid: str, record: _Exec) -> None:
        self._remove(record.view.name)  # deleted behind the engine's back

    def _on_evicted(self, uid: str, record: _Exec) -> None:
        self._terminate(uid, record, EVICTED_EXIT, reason="Evicted", message=EVICTED_MESSAGE)

    def _release_peers(self, uid: str, spec: ExecutionSpec) -> None:
        """A client's end lets its server finish; the last worker's end lets rank 0 finish."""
        table = self._runs_exec[uid]
        waiting_role = {"client": "server"}.get(spec.role)
        if spec.role.startswith("rank-") and spec.role != "rank-0":
            waiting_role = "rank-0"
        if waiting_role is None:
            return
        for name in list(table.live_names):
            other = table.by_name[name]
            o = other.view.spec
            if o.role != waiting_role or o.test != spec.test or o.attempt != spec.attempt:
                continue
            if waiting_role == "rank-0" and any(
                table.by_name[n].view.spec.role.startswith("rank-")
                and table.by_name[n].view.spec.role != "rank-0"
                and table.by_name[n].view.spec.test == spec.test
                and table.by_name[n].view.spec.attempt == spec.attempt
                for n in table.live_names
            ):
                continue  # another worker is still running
            if other.hung or other.finish_at is not None or not other.view.started:
                continue
            other.finish_at = self.t + ROLE_TAIL
            self._push(other.finish_at, "finish", uid, name)

    # -- the resources ------------------------------------------------------------------------
    def submit(self, run: BurnInRun) -> BurnInRun:
        """Create a run (uid, creationTimestamp and generation filled when missing); a run of
        that name already stored is replaced by it, as a user's edit replaces the object."""
        meta = run.metadata
        update: dict[str, object] = {}
        if not meta.uid:
            self._submitted += 1
            digest = _seed_of(self.seed, meta.name, self._submitted) % 10**12
            update["uid"] = f"uid-{digest:012d}"
        if meta.creation_timestamp is None:
            update["creation_timestamp"] = self.now()
        if meta.generation is None:
            update["generation"] = 1
        if not meta.namespace:
            update["namespace"] = "default"
        run = run.model_copy(update={"metadata": meta.model_copy(update=update)})
        if self.store.get_run(run.metadata.namespace or "default", run.name) is not None:
            return self.store.put_run(run)  # an edit of a stored run, as `kubectl apply` makes
        return self.store.create_run(run)

    @property
    def runs(self) -> dict[RunKey, BurnInRun]:
        """The runs held in memory, by (namespace, name); a backend over files holds none."""
        return self.store.runs if isinstance(self.store, MemoryRunStore) else {}

    def _forget(self, run: BurnInRun) -> None:
        self.delivery.forget_run(run.metadata.uid or "")
        self._runs_exec.pop(run.metadata.uid or "", None)  # owned executions go with it

    def get_profile(self, namespace: str, name: str) -> BurnInProfile | None:
        return self.profiles.get(name)

    def get_tests(self, namespace: str) -> Mapping[str, BurnInTestSpec]:
        return self.tests

    # -- delivery: the common component over sinks/ -------------------------------------------
    @property
    def sink_set(self) -> SinkSet | None:
        """The sinks deliveries go to (None: recorded only)."""
        return self.delivery.sinks

    @sink_set.setter
    def sink_set(self, sinks: SinkSet | None) -> None:
        self.delivery.sinks = sinks

    @property
    def deliveries(self) -> list[Delivery]:
        """Every delivery so far, without its view."""
        return self.delivery.recorded

    @property
    def sinks_ok(self) -> bool:
        """False makes every delivery report a failed sink."""
        return self.delivery.ok

    @sinks_ok.setter
    def sinks_ok(self, ok: bool) -> None:
        self.delivery.ok = ok

    @property
    def describes_runs(self) -> bool:
        return self.delivery.describes_runs

    def deliver(self, delivery: Delivery) -> bool:
        return self.delivery.deliver(delivery)
