"""Where a diagnose Workflow's isolation is, as its status shows it while it runs
(specs/certify.md §2.3 ``orchestration.diagnose``, §7.4): the stage, the completed rounds and
the current stage's groups, ``currentIteration`` bumped on each stage change.

The isolation (:mod:`glimmer.certify.isolate`) keeps its verdicts to itself and a replay unwinds
it at the first job without an outcome, so the status reads where it got from what the replay
asked for (:attr:`~glimmer.certify.replay.ReplaySubstrate.asked`): the group names say the
stage (``screen-*``, ``screen-no-nvl-*``, ``inter-domain``, ``bisect-<round>-*``,
``cross-*-mix*``, ``confirm-*``), and the rounds follow from the isolation's own rule — the jobs
of one call run in waves of node-disjoint jobs, a job that shares a node with one of the
current wave opening the next. Every replay asks for the same jobs in the same order, so a
restart writes the same figures. Healthy and suspect nodes are not known before the end: only
the core's oracle judges a job's log, and its verdicts die with the replay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from glimmer.certify.isolate_types import Stage
from glimmer.certify.jobs import Job
from glimmer.certify.replay import group_of, nodes_of
from glimmer.operator.certify.workflow_cluster import Obj
from glimmer.operator.certify.workflow_iterations import groups_of

# Longest prefix first: a no-NVLink retest's name starts like a screen's.
_PREFIXES = (
    ("screen-no-nvl-", Stage.RETEST),
    ("screen-", Stage.SCREEN),
    ("inter-domain", Stage.CROSS_RACK),
    ("bisect-", Stage.BISECT),
    ("cross-", Stage.PROBE),
    ("confirm-", Stage.CONFIRM),
)
COMPLETE = "complete"


def stage_of(group: str) -> Stage | None:
    """The §7.4 stage a probe's group name belongs to; None for a group isolation never names."""
    return next((stage for prefix, stage in _PREFIXES if group.startswith(prefix)), None)


def _call_of(group: str, stage: Stage) -> tuple[Stage, str]:
    # Each bisection round is one call of its own (``bisect-<round>-<i>a|b``).
    return stage, group.split("-")[1] if stage is Stage.BISECT else ""


@dataclass(frozen=True)
class StageRun:
    """Consecutive probes of one stage, by key, in the order asked."""

    stage: Stage
    keys: tuple[str, ...]


@dataclass(frozen=True)
class Stages:
    """Where a replay of a diagnosis got: its stage runs in order and the rounds it started."""

    runs: tuple[StageRun, ...]
    rounds: int


def stages_of(asked: Sequence[tuple[str, Job]]) -> Stages:
    """The stage runs and rounds of the probes ``asked`` (key, job), in the order asked."""
    runs: list[StageRun] = []
    rounds = 0
    call: tuple[Stage, str] | None = None
    busy: set[str] = set()  # the nodes of the current wave
    for key, job in asked:
        group = group_of(job)
        stage = stage_of(group)
        if stage is None:
            continue
        if runs and runs[-1].stage is stage:
            runs[-1] = StageRun(stage, (*runs[-1].keys, key))
        else:
            runs.append(StageRun(stage, (key,)))
        nodes = set(nodes_of(job))
        # A new call (a stage, a bisection round) always opens a wave; within a call a shared
        # node does (a boundary probe's next round narrows the last one's nodes, so it shares).
        this = _call_of(group, stage)
        if this != call:
            call, busy = this, set()
            rounds += 1
        elif not busy.isdisjoint(nodes):
            busy = set()
            rounds += 1
        busy |= nodes
    return Stages(tuple(runs), rounds)


def _current_groups(stages: Stages, jobs: Mapping[str, Obj]) -> list[Obj]:
    last = stages.runs[-1].keys if stages.runs else ()
    return groups_of([jobs[k] for k in last if k in jobs])  # a held probe has no Job yet


def running(asked: Sequence[tuple[str, Job]], jobs: Mapping[str, Obj]) -> Obj:
    """The orchestration fields of a diagnosis still running: its last asked probe has no
    outcome, so the round it opened is not complete."""
    stages = stages_of(asked)
    n = max(len(stages.runs), 1)
    diagnose: Obj = {"round": max(stages.rounds - 1, 0)}
    if stages.runs:
        diagnose = {"stage": str(stages.runs[-1].stage), **diagnose}
    return {
        "currentIteration": n,
        "completedIterations": n - 1,
        "groups": _current_groups(stages, jobs),
        "diagnose": diagnose,
    }


def finished(asked: Sequence[tuple[str, Job]], jobs: Mapping[str, Obj]) -> Obj:
    """The orchestration fields of a finished diagnosis but its ``diagnose`` verdicts: every
    stage it ran complete, the last one's groups kept."""
    stages = stages_of(asked)
    n = max(len(stages.runs), 1)
    return {
        "currentIteration": n,
        "completedIterations": n,
        "groups": _current_groups(stages, jobs),
    }
