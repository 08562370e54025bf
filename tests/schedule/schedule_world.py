"""A small in-memory world for scheduler tests: a schedule, the runs it can see, and a store
that applies a decision's actions in order and records them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.api.schedule import BurnInSchedule, BurnInScheduleStatus
from glimmer.contract.vocab import Phase
from glimmer.schedule.actions import apply
from glimmer.schedule.decide import Decision, decide

T0 = datetime(2026, 10, 1, tzinfo=UTC)


def schedule_object(**spec: Any) -> BurnInSchedule:
    """A schedule with ``spec`` fields over a nightly default. ``schedule`` and ``timeZone``
    are set past the schema, as a cluster may hold them (the reconciler must judge those)."""
    body: dict[str, Any] = {
        "profileRef": "acceptance",
        "target": {"nodeNames": ["gpu-01", "gpu-02"]},
    }
    unchecked = {"schedule": spec.pop("schedule", "0 3 * * *")}
    if "timeZone" in spec:
        unchecked["time_zone"] = spec.pop("timeZone")
    body.update(spec)
    valid = _validated({**body, "schedule": "0 3 * * *"})
    return valid.model_copy(update={"spec": valid.spec.model_copy(update=unchecked)})


def _validated(body: dict[str, Any]) -> BurnInSchedule:
    return BurnInSchedule.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInSchedule",
            "metadata": {
                "name": "nightly",
                "namespace": "lab",
                "uid": "sched-uid",
                "generation": 1,
                "creationTimestamp": T0.isoformat(),
            },
            "spec": body,
        }
    )


@dataclass
class World:
    """The API server as the scheduler sees it; ``log`` records each applied action."""

    schedule: BurnInSchedule
    runs: dict[str, BurnInRun] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    fail_create: bool = False

    # ScheduleStore
    def write_schedule_status(self, status: BurnInScheduleStatus) -> None:
        self.log.append(f"status cursor={status.last_schedule_time}")
        self.schedule = self.schedule.model_copy(update={"status": status})

    def create_run(self, run: BurnInRun) -> None:
        self.log.append(f"create {run.name}")
        if self.fail_create:
            raise RuntimeError("API server unavailable")
        if run.name in self.runs:
            raise RuntimeError(f"{run.name} already exists")
        meta = run.metadata.model_copy(update={"uid": f"uid-{run.name}"})
        self.runs[run.name] = run.model_copy(update={"metadata": meta})

    def delete_run(self, namespace: str, name: str) -> None:
        self.log.append(f"delete {name}")
        del self.runs[name]

    # driving
    def step(self, now: datetime) -> Decision:
        decision = decide(self.schedule, list(self.runs.values()), now)
        apply(decision.actions, self)
        return decision

    def finish(self, name: str, phase: Phase, at: datetime) -> None:
        run = self.runs[name]
        status = BurnInRunStatus(phase=phase, finished_at=at)
        self.runs[name] = run.model_copy(update={"status": status})

    @property
    def status(self) -> BurnInScheduleStatus:
        assert self.schedule.status is not None
        return self.schedule.status


def world(**spec: Any) -> World:
    return World(schedule_object(**spec))
