"""The status's reading of a diagnosis from the probes a replay asked for agrees with the
isolation itself: the stage runs are its history's stages in order, and the rounds counted
from the asked jobs alone are its own ``Diagnosis.rounds`` — across bisection, a boundary
probe's repeated rounds, the no-NVLink retest and confirmation."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from glimmer.certify.grouping import CLIQUE_LABEL, NodeInfo
from glimmer.certify.isolate import isolate
from glimmer.certify.isolate_types import Outcome, Probe
from glimmer.certify.jobs import Job, NcclJob
from glimmer.certify.replay import group_of
from glimmer.operator.certify.workflow_diagnose import stage_of, stages_of

Fails = Callable[[Probe], bool]


def _nodes(count: int, cliques: int = 0) -> list[NodeInfo]:
    return [
        NodeInfo(f"n-{i:02d}", {CLIQUE_LABEL: f"c{i % cliques}"} if cliques else {})
        for i in range(count)
    ]


def _bad_node(name: str) -> Fails:
    return lambda p: name in p.nodes


def _no_nvl_bad(name: str) -> Fails:
    return lambda p: name in p.nodes and not p.nvlink  # a NIC fault MNNVL hides


def _between(a: str, b: str) -> Fails:
    return lambda p: a in p.nodes and b in p.nodes  # a link, not a node


def _asked_by(
    nodes: list[NodeInfo], fails: Fails, *, nvlink: bool
) -> tuple[list[tuple[str, Job]], int, list[str]]:
    asked: list[tuple[str, Job]] = []

    def oracle(p: Probe) -> Outcome:
        asked.append((f"key-{len(asked)}", NcclJob(p.name, "all_reduce", p.nodes, p.nvlink)))
        return Outcome(not fails(p), reason="" if not fails(p) else "busbw low")

    diag = isolate(nodes, oracle, topology_key=CLIQUE_LABEL, nvlink=nvlink)
    stages: list[str] = []
    for t in diag.history:
        if not stages or stages[-1] != str(t.probe.stage):
            stages.append(str(t.probe.stage))
    return asked, diag.rounds, stages


@pytest.mark.parametrize(
    ("nodes", "fails", "nvlink"),
    [
        (_nodes(16), _bad_node("n-05"), False),
        (_nodes(16), _between("n-00", "n-08"), False),
        (_nodes(12, cliques=3), _no_nvl_bad("n-04"), True),
        (_nodes(12, cliques=3), _bad_node("n-07"), True),
        (_nodes(24, cliques=4), lambda p: "n-03" in p.nodes or "n-17" in p.nodes, False),
        (_nodes(9), lambda p: False, False),
    ],
    ids=["one-bad-node", "infrastructure", "hidden-by-mnnvl", "cliques", "two-bad", "healthy"],
)
def test_the_status_reads_the_isolations_own_stages_and_rounds(
    nodes: list[NodeInfo], fails: Fails, nvlink: bool
) -> None:
    asked, rounds, stages = _asked_by(nodes, fails, nvlink=nvlink)
    read = stages_of(asked)
    assert read.rounds == rounds
    assert [str(r.stage) for r in read.runs] == stages
    assert [k for r in read.runs for k in r.keys] == [k for k, _ in asked]
    for run in read.runs:
        names = [group_of(j) for k, j in asked if k in run.keys]
        assert {stage_of(n) for n in names} == {run.stage}, names


def test_the_infrastructure_case_runs_boundary_probes_in_rounds_of_repeated_names() -> None:
    asked, _, stages = _asked_by(_nodes(16), _between("n-00", "n-08"), nvlink=False)
    names = [group_of(j) for _, j in asked]
    assert "cross-boundary" in stages
    assert len([n for n in names if n == "cross-0-mix0"]) >= 2  # the case the count must split
