"""The certification core in replay: a substrate whose jobs live in a ledger (issue 17,
decision 2).

A controller cannot block inside a reconcile while a job runs for an hour, so it runs the
*unchanged* core over a :class:`ReplaySubstrate`: a job that has finished returns its frozen
log from the ledger at once; the first job that has not is submitted to the ledger and
:class:`JobsPending` unwinds the core. The next reconcile replays the core from the start and
gets one job further. The core is deterministic (its nodes, fabric and seed are fixed for the
Workflow), so every replay asks for the same jobs in the same order and the ledger's keys name
the same jobs every time: a replay after a crash or a restart submits nothing new twice
(create-if-absent by key) and loses nothing finished.

Independent jobs (one DCGM job per node, the groups of a communication or training category)
come through :meth:`ReplaySubstrate.run_all`, which submits every missing one at once so they
run side by side; isolation's probes come one :meth:`~ReplaySubstrate.run` at a time, since
each round depends on the last.

Keys follow §1.3's Job name ``<workflow>-<group>-iter-<n>`` (truncated to 35 with the hash of
the whole name): the group is the core job's name (``screen-0``, ``bisect-2-0a``, a node for a
DCGM job), ``n`` counts the requests of that group name in this replay, so a name the core uses
twice (a group screened, then probed again under the same name) is two jobs. A replay must
therefore start from a fresh substrate: construct one :class:`ReplaySubstrate` per reconcile.
A category's iterations (repeatCount) ask for each group again, so a group's ``n``-th request
is its ``n``-th iteration where nothing probes it twice; :meth:`ReplaySubstrate.begin_iteration`
tells the substrate which iteration the core is in, and :attr:`ReplaySubstrate.iteration_of`
says which iteration asked for each key (a Workflow's status groups its Jobs by it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from glimmer.certify.catalog.naming import JOB_MAX, truncate
from glimmer.certify.grouping import NodeInfo
from glimmer.certify.jobs import DcgmJob, Job, JobLog
from glimmer.certify.substrate import Fabric

# A truncated key keeps 5 hex characters of hash: two of a thousand DCGM jobs share one with
# odds near 40 %. A later key that lands on an earlier one of this replay is salted with "-<i>"
# before the hash, deterministically, since every replay meets the keys in the same order.
_MAX_SALT = 64


def job_key(workflow: str, group: str, n: int) -> str:
    """The ledger key and Job name of the ``n``-th (1-based) job of ``group`` (§1.3)."""
    return truncate(f"{workflow}-{group}-iter-{n}", JOB_MAX)


def group_of(job: Job) -> str:
    """The group a core job runs for: a DCGM job's node, else the job's own name."""
    return job.node if isinstance(job, DcgmJob) else job.name


def nodes_of(job: Job) -> tuple[str, ...]:
    """The nodes a job runs on."""
    return (job.node,) if isinstance(job, DcgmJob) else job.nodes


@dataclass(frozen=True)
class Submission:
    """One job the core asked for that the ledger has no outcome for yet."""

    key: str
    job: Job
    nodes: tuple[str, ...]


class JobsPending(Exception):
    """The core needs outcomes the ledger does not have yet; the reconcile ends here and the
    next one replays the core. ``submitted`` holds what this replay handed to the ledger (again,
    when it was there already: submitting is idempotent); ``held`` the keys of jobs asked for
    but not submitted, because they share a node with an earlier unfinished one."""

    def __init__(self, submitted: Sequence[Submission], held: Sequence[str] = ()) -> None:
        self.submitted = tuple(submitted)
        self.held = tuple(held)
        keys = ", ".join(s.key for s in self.submitted)
        super().__init__(f"waiting for {len(self.submitted)} job(s): {keys}")


class Ledger(Protocol):
    """Where a replay's jobs are kept: on a cluster the Job objects of a Workflow."""

    def outcome(self, key: str) -> JobLog | None:
        """The frozen log of the finished job ``key``; None while it runs or was never asked."""
        ...

    def submit(self, key: str, job: Job, nodes: tuple[str, ...]) -> None:
        """Start ``job`` under ``key`` on ``nodes`` unless a job of that key exists already."""
        ...


class ReplaySubstrate:
    """A :class:`~glimmer.certify.substrate.Substrate` over a ledger, for one replay of one
    Workflow's category. ``nodes`` and ``fabric_of`` must answer the same in every replay (the
    Workflow's discovered nodes, not a fresh Node list), or the core asks for other jobs."""

    def __init__(
        self,
        nodes: Sequence[NodeInfo],
        fabric_of: Callable[[tuple[str, ...]], Fabric | None],
        ledger: Ledger,
        name: str,
        platform: str,
        taint_note: str = "",
        *,
        workflow: str,
    ) -> None:
        self._nodes = list(nodes)
        self._fabric_of = fabric_of
        self._ledger = ledger
        self._name = name
        self._platform = platform
        self._taint_note = taint_note
        self.workflow = workflow
        self._asked: dict[str, int] = {}  # group -> jobs of it asked for in this replay
        self._keys: dict[str, Job] = {}  # key -> the job it names, in this replay
        self.finished = 0  # jobs this replay read back from the ledger
        self.iteration = 1  # the core's iteration (begin_iteration)
        self.iteration_of: dict[str, int] = {}  # key -> the iteration that asked for it

    def begin_iteration(self, number: int) -> None:
        """The core starts its iteration ``number`` (1-based): keys asked for from now on
        belong to it."""
        self.iteration = number

    @property
    def asked(self) -> list[tuple[str, Job]]:
        """The keys and jobs this replay asked for, in the order the core asked (a Workflow's
        status reads a diagnosis's stages and rounds from it)."""
        return list(self._keys.items())

    @property
    def name(self) -> str:
        return self._name

    @property
    def platform(self) -> str:
        return self._platform

    @property
    def taint_note(self) -> str:
        return self._taint_note

    def nodes(self) -> list[NodeInfo]:
        return list(self._nodes)

    def fabric(self, nodes: tuple[str, ...]) -> Fabric | None:
        return self._fabric_of(nodes)

    def key_for(self, job: Job) -> str:
        """The next key of ``job``'s group in this replay, reserved for ``job``."""
        group = group_of(job)
        n = self._asked.get(group, 0) + 1
        self._asked[group] = n
        key = job_key(self.workflow, group, n)
        salt = 0
        while key in self._keys:
            salt += 1
            if salt > _MAX_SALT:
                raise RuntimeError(f"no free job key for {group} iteration {n}")
            key = truncate(f"{self.workflow}-{group}-iter-{n}-{salt}", JOB_MAX)
        self._keys[key] = job
        self.iteration_of[key] = self.iteration
        return key

    def run(self, job: Job) -> JobLog:
        (log,) = self.run_all([job])
        return log

    def run_all(self, jobs: Sequence[Job]) -> list[JobLog]:
        keyed = [(self.key_for(j), j) for j in jobs]
        logs: list[JobLog | None] = [self._ledger.outcome(k) for k, _ in keyed]
        self.finished += sum(log is not None for log in logs)
        if all(log is not None for log in logs):
            return [log for log in logs if log is not None]
        # Jobs sharing a node must not run at once (an overflow group borrows nodes): the first
        # unfinished one of a node is submitted, a later one waits for a later replay.
        busy: set[str] = set()
        submitted: list[Submission] = []
        held: list[str] = []
        for (key, job), log in zip(keyed, logs, strict=True):
            if log is not None:
                continue
            on = nodes_of(job)
            if busy.isdisjoint(on):
                self._ledger.submit(key, job, on)
                submitted.append(Submission(key, job, on))
            else:
                held.append(key)
            busy.update(on)
        raise JobsPending(submitted, held)
