"""A WorkloadRun's Workflow (:func:`run_workload`): its failure reason says why the jobs failed,
and the Failed message built from it counts the groups and iterations once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from glimmer.certify.grouping import NodeInfo
from glimmer.certify.jobs import JobLog
from glimmer.certify.substrate import Fabric
from glimmer.operator.certify.workflow import failed_message
from glimmer.operator.certify.workflow_run import run_workload


class _ExitCodes:
    """A substrate whose jobs exit as told, by group name, the same every iteration."""

    def __init__(self, codes: dict[str, int]) -> None:
        self.codes = codes

    def name(self) -> str:
        return "cluster"

    def platform(self) -> str:
        return "generic"

    def taint_note(self) -> str:
        return ""

    def nodes(self) -> list[NodeInfo]:
        return []

    def fabric(self, nodes: tuple[str, ...]) -> Fabric | None:
        return None

    def run(self, job: Any) -> JobLog:
        code = self.codes[job.name]
        return JobLog("", code, error=f"{job.name} ended with {code}" if code else "")

    def run_all(self, jobs: Sequence[Any]) -> list[JobLog]:
        return [self.run(j) for j in jobs]


class _Named(_ExitCodes):
    """Every job passes: how the groups are named, whatever the partition calls them."""

    def __init__(self) -> None:
        super().__init__({})

    def run(self, job: Any) -> JobLog:
        return JobLog("", 0)


def _spec(iterations: int) -> dict[str, Any]:
    return {
        "orchestration": {"iterations": iterations},
        "jobTemplate": {"spec": {"workload": {"trainJob": {"trainer": {"numNodes": 1}}}}},
    }


def test_a_failed_workload_run_says_why_once_and_counts_groups_and_iterations_once() -> None:
    nodes = [NodeInfo(f"gpu-{i}") for i in range(2)]
    probe = run_workload(_Named(), "probe", _spec(1), nodes)
    names = [g.name for g in probe.groups]
    codes = {names[0]: 3, names[1]: 0}
    result = run_workload(_ExitCodes(codes), "wr", _spec(2), nodes)

    assert result.status == "Failed"
    assert result.failure_reason == f"{names[0]}: {names[0]} ended with 3 (and 1 more failed jobs)"
    message = failed_message(result, 2, hardware=False, iterations=2)
    assert message.count("groups failed across") == 1
    assert message.startswith("2 groups failed across 2 iterations: ")
    assert f"{names[0]} ended with 3" in message


def test_a_passing_workload_run_has_no_failure_reason() -> None:
    nodes = [NodeInfo("gpu-0")]
    result = run_workload(_Named(), "wr", _spec(3), nodes)
    assert result.status == "Succeeded"
    assert result.failure_reason == ""
    assert len(result.groups) == 3
