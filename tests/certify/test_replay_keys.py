"""The replay substrate's keys and submissions (issue 17, decision 2): §1.3 Job names, one job
per key even where two cut names share a hash, jobs sharing a node never submitted together,
and what JobsPending carries."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from glimmer.certify.catalog.naming import JOB_MAX
from glimmer.certify.grouping import NodeInfo
from glimmer.certify.jobs import DcgmJob, Job, JobLog, NcclJob
from glimmer.certify.replay import JobsPending, ReplaySubstrate, group_of, job_key, nodes_of
from glimmer.certify.substrate import Fabric, run_jobs

WF = "t-diagnostics-dcgm-level2-abcde"  # 31 characters: every job key of it is cut


@dataclass
class Ledger:
    done: dict[str, JobLog] = field(default_factory=dict)
    submitted: dict[str, Job] = field(default_factory=dict)

    def outcome(self, key: str) -> JobLog | None:
        return self.done.get(key)

    def submit(self, key: str, job: Job, nodes: tuple[str, ...]) -> None:
        self.submitted[key] = job

    def finish(self) -> None:
        for key, job in self.submitted.items():
            self.done[key] = JobLog(f"ran {group_of(job)}\n", 0)
        self.submitted.clear()


def _substrate(ledger: Ledger, workflow: str = WF) -> ReplaySubstrate:
    def no_fabric(nodes: tuple[str, ...]) -> Fabric | None:
        return None

    nodes = [NodeInfo("a"), NodeInfo("b")]
    return ReplaySubstrate(nodes, no_fabric, ledger, "lab", "kubernetes", workflow=workflow)


def test_a_key_is_the_jobs_name_of_section_1_3() -> None:
    assert job_key("wf", "screen-0", 1) == "wf-screen-0-iter-1"
    cut = job_key(WF, "nvl-node-0001", 2)
    assert len(cut) == JOB_MAX and cut.startswith(WF[:29])


def test_the_same_group_asked_twice_is_its_next_iteration() -> None:
    sub = _substrate(Ledger(), "wf")
    job = NcclJob("screen-0", "all_reduce", ("a", "b"))
    assert [sub.key_for(job), sub.key_for(job)] == ["wf-screen-0-iter-1", "wf-screen-0-iter-2"]
    assert sub.key_for(DcgmJob("a", 1)) == "wf-a-iter-1"  # a DCGM job's group is its node


def _colliding() -> tuple[str, str]:
    """Two node names whose cut job keys share their hash (they do within a few hundred)."""
    seen: dict[str, str] = {}
    for i in range(100_000):
        name = f"node-{i:05d}"
        key = job_key(WF, name, 1)
        if key in seen:
            return seen[key], name
        seen[key] = name
    raise AssertionError("no collision found")


def test_two_jobs_whose_cut_names_collide_get_two_keys_the_same_in_every_replay() -> None:
    first, second = _colliding()
    assert job_key(WF, first, 1) == job_key(WF, second, 1)
    ledger = Ledger()
    jobs = [DcgmJob(first, 2), DcgmJob(second, 2)]
    with pytest.raises(JobsPending) as waiting:
        _substrate(ledger).run_all(jobs)
    keys = [s.key for s in waiting.value.submitted]
    assert len(set(keys)) == 2 and keys[0] == job_key(WF, first, 1)
    assert all(len(k) == JOB_MAX for k in keys)
    ledger.finish()
    logs = _substrate(ledger).run_all(jobs)  # the next replay finds each job under its key
    assert [log.text for log in logs] == [f"ran {first}\n", f"ran {second}\n"]


def test_jobs_sharing_a_node_are_submitted_one_after_the_other() -> None:
    ledger = Ledger()
    full = NcclJob("group-0", "all_reduce", ("a", "b"))
    overflow = NcclJob("group-1-overflow", "all_reduce", ("b", "c"))
    apart = NcclJob("group-2", "all_reduce", ("d", "e"))
    jobs = [full, overflow, apart]
    with pytest.raises(JobsPending) as waiting:
        _substrate(ledger, "wf").run_all(jobs)
    assert [s.job for s in waiting.value.submitted] == [full, apart]
    assert waiting.value.held == ("wf-group-1-overflow-iter-1",)
    assert waiting.value.submitted[0].nodes == nodes_of(full) == ("a", "b")
    ledger.finish()
    with pytest.raises(JobsPending) as again:
        _substrate(ledger, "wf").run_all(jobs)
    assert [s.job for s in again.value.submitted] == [overflow] and not again.value.held
    ledger.finish()
    sub = _substrate(ledger, "wf")
    assert len(run_jobs(sub, jobs)) == 3 and sub.finished == 3


def test_a_waiting_replay_says_what_it_waits_for_and_counts_what_finished() -> None:
    ledger = Ledger()
    ledger.done["wf-a-iter-1"] = JobLog("ok\n", 0)
    sub = _substrate(ledger, "wf")
    with pytest.raises(JobsPending, match=r"waiting for 1 job\(s\): wf-b-iter-1"):
        sub.run_all([DcgmJob("a", 1), DcgmJob("b", 1)])
    assert sub.finished == 1
    assert [n.name for n in sub.nodes()] == ["a", "b"] and sub.fabric(("a",)) is None
    assert (sub.name, sub.platform, sub.taint_note) == ("lab", "kubernetes", "")
