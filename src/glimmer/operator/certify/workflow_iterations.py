"""A Workflow's iterations as its status shows them (specs/certify.md §2.3, §3.2
handleIterationComplete): ``currentIteration``, ``completedIterations``, the current
iteration's ``groups`` and, once an iteration is done and more remain, its groups kept in
``iterationHistory`` (the final iteration stays in ``groups``).

The core runs the iterations (:func:`glimmer.certify.run.run_category`); a replay tells
:class:`Progress` which one it reached, and the substrate says which iteration asked for each
Job (:attr:`~glimmer.certify.replay.ReplaySubstrate.iteration_of`). Unlike §3.2, an iteration's
Jobs are not deleted when the next starts: they are the replay's ledger, and the next replay
reads their outcomes again (they go with the Workflow, as every Job does). Their own
dependency copies do go before the next iteration's Jobs (:mod:`.workflow_iteration_deps`).
A diagnosis runs once; its status counts stages instead (:mod:`.workflow_diagnose`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from glimmer.certify.platform.vocab import GROUP
from glimmer.certify.platform.walk import get_path
from glimmer.certify.replay import ReplaySubstrate
from glimmer.certify.result import CategoryResult
from glimmer.certify.run import iterations_of
from glimmer.certify.spec import Category
from glimmer.operator.certify.certification_conditions import FAILED, SUCCEEDED, is_true
from glimmer.operator.certify.job_status import HARDWARE_FAILED
from glimmer.operator.certify.workflow_cluster import Obj, meta


def total_iterations(spec: Mapping[str, Any], category: Category | None) -> int:
    """How many iterations the Workflow runs: its category's (a diagnosis once), else its
    ``orchestration.iterations``."""
    if category is not None:
        return iterations_of(category)
    return max(1, int(get_path(spec, "orchestration", "iterations") or 1))


def current_iteration(status: Mapping[str, Any]) -> int:
    """The iteration the status last said was running (0 before any)."""
    return int((status.get("orchestration") or {}).get("currentIteration") or 0)


class Progress:
    """Where one replay of the core got: the iteration it reached and the results of those
    before it (``begin`` is the core's ``on_iteration``)."""

    def __init__(self, substrate: ReplaySubstrate, total: int) -> None:
        self.substrate = substrate
        self.total = total
        self.current = 1
        self.done: tuple[CategoryResult, ...] = ()

    def begin(self, number: int, done: Sequence[CategoryResult]) -> None:
        self.substrate.begin_iteration(number)
        self.current = number
        self.done = tuple(done)

    def jobs_of(self, jobs: Mapping[str, Obj], iteration: int) -> list[Obj]:
        """The Jobs ``iteration`` asked for, in creation order (a Job this replay did not ask
        for is the current iteration's)."""
        asked = self.substrate.iteration_of
        return [j for name, j in jobs.items() if asked.get(name, self.current) == iteration]

    def status(
        self, status: Mapping[str, Any], jobs: Mapping[str, Obj], *, done: bool = False
    ) -> Obj:
        """``status.orchestration`` with the iterations and groups as the Jobs show them;
        ``done``: the last iteration finished."""
        orch: Obj = {
            **(status.get("orchestration") or {}),
            "currentIteration": self.current,
            "completedIterations": self.current if done else self.current - 1,
            "groups": groups_of(self.jobs_of(jobs, self.current)),
        }
        if self.current > 1:
            orch["iterationHistory"] = [
                {"iteration": i, "groups": history_of(self.jobs_of(jobs, i))}
                for i in range(1, self.current)
            ]
        return orch

    def failed_groups(self, last: CategoryResult) -> int:
        """The groups that failed in every iteration run (§3.2 setFinalStatus's F)."""
        return sum(not g.passed for r in (*self.done, last) for g in r.groups)


def _phase(job: Mapping[str, Any]) -> str:
    conds = (job.get("status") or {}).get("conditions") or ()
    if is_true(conds, SUCCEEDED):
        return "Succeeded"
    if is_true(conds, FAILED) or is_true(conds, HARDWARE_FAILED):
        return "Failed"  # §7.1: a health-failed Job's group has failed, though the Job drains
    return "Running"


def _group_name(job: Mapping[str, Any]) -> str:
    m = meta(job)
    return str((m.get("labels") or {}).get(f"{GROUP}/group") or m.get("name"))


def groups_of(jobs: Sequence[Mapping[str, Any]]) -> list[Obj]:
    """The groups as the Jobs show them, in creation order (GroupStatus)."""
    return [
        {"name": _group_name(j), "phase": _phase(j), "jobRef": str(meta(j).get("name"))}
        for j in jobs
    ]


def history_of(jobs: Sequence[Mapping[str, Any]]) -> list[Obj]:
    """A finished iteration's groups as history keeps them (GroupRecord)."""
    return [
        {"name": _group_name(j), "phase": _phase(j), "jobName": str(meta(j).get("name"))}
        for j in jobs
    ]
