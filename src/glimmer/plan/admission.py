"""Admission across runs (§2.2): two burn-ins never load one node at once.

Runner pods tolerate the cordon taint (they must land on the node their own run cordoned), so
``maxConcurrentNodes`` and cordons bound nothing across runs: a second run's pods would schedule
onto the first run's cordoned node and the two soaks would measure each other. So a run whose
targets overlap a run that still *holds* is refused at start (terminal Error, nothing queued),
unless ``spec.force`` accepts the contention on the record.

Which of two contending runs wins is a strict total order, so two runs created in the same
instant resolve the same way whichever is reconciled first: a started run beats one not
started, then the older ``creationTimestamp``, then the smaller UID.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

from glimmer.api.k8s import Condition
from glimmer.api.pinned import PLAN_ANNOTATION, PlanError, decode_plan
from glimmer.api.run import BurnInRun
from glimmer.contract.vocab import TERMINAL_PHASES, Phase
from glimmer.plan.conditions import (
    ADMITTED_BY_FORCE,
    TARGETS_AVAILABLE,
    TARGETS_BUSY,
    condition,
)
from glimmer.plan.nodes import NodeInfo
from glimmer.plan.targets import resolve_quietly
from glimmer.verdict.text import name_some, plural

CORDON_FINALIZER = "burnin.glimmer.ai/cordon-cleanup"
DEFAULT_NAMESPACE = "default"
# Contested nodes named in a message before "and N more"; the rest are counted.
MAX_NAMED_NODES = 10
# A run with no creationTimestamp (never the case for a stored object) sorts as the newest.
_NEVER = datetime.max.replace(tzinfo=UTC)


def run_ref(run: BurnInRun) -> str:
    """``<namespace>/<name>`` of a run, the way messages name it."""
    return f"{run.metadata.namespace or DEFAULT_NAMESPACE}/{run.name}"


def holds(run: BurnInRun) -> bool:
    """True while ``run`` may still have load or cordons on its targets: it carries the
    cordon-cleanup finalizer, or its phase is not terminal."""
    if CORDON_FINALIZER in (run.metadata.finalizers or ()):
        return True
    phase = run.status.phase if run.status is not None else Phase.PENDING
    return phase not in TERMINAL_PHASES


def precedence_key(run: BurnInRun) -> tuple[int, datetime, str]:
    """Sort key of the admission order: started first, then older, then smaller UID."""
    started = run.status is not None and run.status.started_at is not None
    created = run.metadata.creation_timestamp or _NEVER
    return (0 if started else 1, created, run.metadata.uid or "")


def precedes(a: BurnInRun, b: BurnInRun) -> bool:
    """True when ``a`` wins a contention with ``b``."""
    return precedence_key(a) < precedence_key(b)


@lru_cache(maxsize=4096)
def _pinned_targets(annotation: str) -> frozenset[str]:
    # Admission reads every other run's pinned plan each time a run starts; a plan never
    # changes once pinned, so its targets are decoded once per annotation value, as a set:
    # a sweep of thousands of runs asks each start whether it shares a node with every other.
    return frozenset(decode_plan(annotation).targets)


def known_targets(run: BurnInRun) -> frozenset[str] | None:
    """What :func:`held_targets` answers for ``run`` when no node list is needed to tell: its
    readable pinned plan's targets, else its ``nodeNames`` (taken verbatim); None when only
    its selector can say."""
    pinned = (run.metadata.annotations or {}).get(PLAN_ANNOTATION)
    if pinned is not None:
        try:
            return _pinned_targets(pinned)
        except PlanError:
            pass
    names = run.spec.target.node_names
    return frozenset(names) if names else None


def held_targets(run: BurnInRun, nodes: Sequence[NodeInfo]) -> list[str]:
    """The nodes ``run`` holds or will hold: its pinned plan's targets if it has a readable
    plan, else its selector re-resolved over ``nodes`` (selecting nothing overlaps nothing)."""
    pinned = (run.metadata.annotations or {}).get(PLAN_ANNOTATION)
    if pinned is not None:
        try:
            return list(decode_plan(pinned).targets)
        except PlanError:
            # An unreadable plan will settle that run Error on its next pass; until then its
            # selector is the best account of where it may hold.
            pass
    return resolve_quietly(run.spec.target, nodes)


def _same_run(a: BurnInRun, b: BurnInRun) -> bool:
    if a.metadata.uid and b.metadata.uid:
        return a.metadata.uid == b.metadata.uid
    return run_ref(a) == run_ref(b)


@dataclass(frozen=True)
class Holder:
    """The run reported as holding this run's targets, and the nodes they share."""

    run: BurnInRun
    nodes: tuple[str, ...]

    @property
    def ref(self) -> str:
        return run_ref(self.run)

    def named_nodes(self) -> str:
        return name_some(list(self.nodes), MAX_NAMED_NODES)


@dataclass(frozen=True)
class Admission:
    """The outcome of admission: the condition to set, and the holder if there was one."""

    admitted: bool
    condition: Condition
    holder: Holder | None
    # The synthetic ``admission`` result's message when refused; "" when admitted.
    refusal: str = ""


def find_holder(
    run: BurnInRun,
    targets: Sequence[str],
    other_runs: Sequence[BurnInRun],
    nodes: Sequence[NodeInfo],
) -> Holder | None:
    """Among the holding runs that precede ``run`` and share a target, the one that itself
    sorts first; None when the targets are free. A run whose known targets miss every one of
    ours is passed over first, at the cost of one set test (most runs of a sweep)."""
    wanted = list(dict.fromkeys(targets))
    mine = frozenset(wanted)
    conflicts: list[Holder] = []
    for other in other_runs:
        known = known_targets(other)
        if known is not None and known.isdisjoint(mine):
            continue
        if _same_run(other, run) or not holds(other) or not precedes(other, run):
            continue
        theirs = known if known is not None else set(held_targets(other, nodes))
        shared = tuple(node for node in wanted if node in theirs)
        if shared:
            conflicts.append(Holder(other, shared))
    if not conflicts:
        return None
    return min(conflicts, key=lambda h: precedence_key(h.run))


def refusal_message(holder: Holder) -> str:
    """The synthetic ``admission`` result's message (and the TargetsBusy condition's)."""
    return (
        f"refused: BurnInRun {holder.ref} is already testing {holder.named_nodes()}. "
        "Two burn-ins on one node load it twice and each measures the other's load, so this "
        "run was not started and no node was touched; nothing is queued.  "
        f"Re-create this run once {holder.run.name} finishes, or set spec.force: true to run "
        "it anyway, accepting that its results are measured under contention."
    )


def forced_message(holder: Holder) -> str:
    return (
        f"admitted by spec.force although BurnInRun {holder.ref} is already testing "
        f"{holder.named_nodes()}: results measured under this contention are not comparable "
        "with those of an uncontended run"
    )


def available_message(targets: Sequence[str]) -> str:
    count = len(dict.fromkeys(targets))
    return f"no other active run holds any of the {count} target {plural(count, 'node')}"


def admit(
    run: BurnInRun,
    targets: Sequence[str],
    other_runs: Sequence[BurnInRun],
    nodes: Sequence[NodeInfo],
    now: datetime,
) -> Admission:
    """Admit ``run`` onto ``targets`` or refuse it. ``other_runs`` must be a fresh (uncached)
    list of every run in every namespace; a run never waits in a queue."""
    generation = run.metadata.generation
    holder = find_holder(run, targets, other_runs, nodes)
    if holder is None:
        return Admission(
            True, condition(TARGETS_AVAILABLE, available_message(targets), now, generation), None
        )
    if run.spec.force:
        return Admission(
            True, condition(ADMITTED_BY_FORCE, forced_message(holder), now, generation), holder
        )
    message = refusal_message(holder)
    return Admission(False, condition(TARGETS_BUSY, message, now, generation), holder, message)
