"""``glimmer run --pairs``: a link sweep, one BurnInRun per pair, one summary that names the node
or the link the failures point at, and one exit code."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from glimmer.api.run import BurnInRun
from glimmer.cli.app import main
from glimmer.cli.pair_sweep import blame, sweep_exit
from glimmer.contract.vocab import Phase

NVL = ["nvl-node-0003", "nvl-node-0004", "nvl-node-0005", "nvl-node-0006"]


def _runs(out: str) -> list[BurnInRun]:
    data = json.loads(out)
    return [BurnInRun.model_validate(d) for d in (data if isinstance(data, list) else [data])]


def test_a_ring_sweep_names_the_node_whose_every_pair_failed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes = ",".join(NVL)
    fault = "nic_degraded@nic:nvl-node-0004/eth1"
    assert main(["run", "--pairs", "ring", "--nodes", nodes, "--fault", fault]) == 1
    out = capsys.readouterr().out
    assert "4 pair(s), profile pair-network" in out and "2 Failed, 2 Passed" in out
    assert "node nvl-node-0004: every one of its 2 pairs failed" in out
    assert "link(s)" not in out


def test_each_pair_is_its_own_run_on_exactly_two_nodes_and_json_lists_them_all(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        ["run", "--pairs", "all-pairs", "--nodes", ",".join(NVL), "--no-faults", "-o", "json"]
    )
    runs = _runs(capsys.readouterr().out)
    assert code == 0 and len(runs) == 6
    assert {r.name for r in runs} == {f"pair-network-{i}" for i in range(1, 7)}
    pairs = {frozenset(r.spec.target.node_names or ()) for r in runs}
    assert len(pairs) == 6 and all(len(p) == 2 for p in pairs)
    assert all(r.status is not None and r.status.phase is Phase.PASSED for r in runs)
    assert all(r.spec.max_concurrent_nodes == 2 for r in runs)


def test_a_sweep_under_a_node_cap_never_loads_more_nodes_than_the_cap(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        ["run", "--pairs", "all-pairs", "--nodes", ",".join(NVL), "--no-faults",
         "--max-concurrent", "2", "-o", "json"]
    )  # fmt: skip
    runs = _runs(capsys.readouterr().out)
    assert code == 0
    spans = sorted(
        (r.status.started_at, r.status.finished_at)
        for r in runs
        if r.status is not None and r.status.started_at and r.status.finished_at
    )
    assert len(spans) == 6
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert start >= end  # one pair (two nodes) at a time


def test_a_dry_sweep_lists_the_runs_and_starts_none(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    state = tmp_path / "state"
    assert main(["run", "--pairs", "ring", "--nodes", ",".join(NVL[:3]), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would start 3 run(s)" in out
    assert "pair-network-1  nvl-node-0003 <-> nvl-node-0004" in out
    assert not state.exists()


def test_a_sweep_of_one_node_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--pairs", "ring", "--nodes", "nvl-node-0003"]) == 2
    err = capsys.readouterr().err
    assert "--pairs ring: a ring sweep needs at least two nodes; 1 given" in err
    assert "Traceback" not in err


def _run(name: str, a: str, b: str, phase: Phase, scope: str = "Pair") -> BurnInRun:
    failed = phase is Phase.FAILED
    results = [{"name": "link", "kind": "tcp-baseline", "scope": scope, "phase": phase.value,
                "nodes": [a, b] if scope == "Pair" else [b]}] if failed else []  # fmt: skip
    return BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": name},
            "spec": {"profileRef": "p", "target": {"nodeNames": [a, b]}},
            "status": {"phase": phase.value, "results": results},
        }
    )


def test_a_failed_pair_whose_nodes_passed_with_other_peers_blames_the_link() -> None:
    runs = [
        _run("r1", "a", "b", Phase.FAILED),
        _run("r2", "b", "c", Phase.PASSED),
        _run("r3", "c", "d", Phase.PASSED),
        _run("r4", "d", "a", Phase.PASSED),
    ]
    found = blame(runs)
    assert found.links == [("a", "b")] and not found.nodes and not found.inconclusive
    assert sweep_exit(runs) == 1


def test_a_node_scope_failure_blames_its_node_and_a_lone_pair_is_inconclusive() -> None:
    node_fault = [_run("r1", "a", "b", Phase.FAILED, scope="Node")]
    assert blame(node_fault).nodes == {"b": "link failed on it"}
    lone = [_run("r1", "a", "b", Phase.FAILED), _run("r2", "c", "d", Phase.PASSED)]
    assert blame(lone).inconclusive == [("a", "b")]


def test_an_unjudged_pair_makes_the_sweep_an_error_unless_one_failed() -> None:
    error = [_run("r1", "a", "b", Phase.ERROR), _run("r2", "b", "c", Phase.PASSED)]
    assert sweep_exit(error) == 3
    assert sweep_exit([*error, _run("r3", "c", "a", Phase.FAILED)]) == 1
    assert sweep_exit([_run("r1", "a", "b", Phase.PASSED)]) == 0
