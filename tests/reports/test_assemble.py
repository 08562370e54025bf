"""The assembled model every format reads (§6.1)."""

from __future__ import annotations

from conftest import STAMP, load_run
from glimmer.fleet.load import load_topology
from glimmer.reports import assemble
from glimmer.reports.assemble import BASELINE_LABEL, INCOMPLETE_LABEL
from glimmer.reports.racks import prefix_of


def test_link_results_are_never_a_nodes_result_but_both_endpoints_are_nodes() -> None:
    report = assemble(load_run("pair-failed"), stamp=STAMP)
    assert [u.name for u in report.links] == [
        "rdma-write-bandwidth",
        "gpudirect-rdma-bandwidth",
        "nccl-allreduce-pair",
    ]
    assert [n.name for n in report.nodes] == ["nvl-node-0004", "nvl-node-0005"]
    assert all(n.results == () and len(n.links) == 3 for n in report.nodes)
    assert all(n.word is None for n in report.nodes)
    assert report.links[0].endpoints == "nvl-node-0005 <-> nvl-node-0004"


def test_node_less_results_are_kept_apart_as_unassigned() -> None:
    report = assemble(load_run("mixed-outcomes"), stamp=STAMP)
    assert [u.name for u in report.unassigned] == ["resolve"]
    assert all(u.synthetic for u in report.unassigned)
    assert "resolve" not in report.tests
    assert report.word == "ERROR"


def test_gates_come_from_the_pinned_plan() -> None:
    report = assemble(load_run("acceptance-failed"), stamp=STAMP)
    clock = next(u for u in report.units if u.name == "sustained-clock")
    assert [g.describe() for g in clock.gates] == ["sustainedClockPct ≥ 70", "throttleEvents = 0"]
    assert report.tests == (
        "host-fault-counters",
        "sustained-clock",
        "gpu-stress",
        "memory-bandwidth",
        "dcgm-diagnostics",
    )


def test_the_window_runs_from_the_first_result_start_to_the_last_finish() -> None:
    run = load_run("acceptance-failed")
    report = assemble(run, stamp=STAMP)
    results = run.status.results if run.status else None
    assert results
    assert report.started_at == min(r.started_at for r in results if r.started_at)
    assert report.finished_at == max(r.finished_at for r in results if r.finished_at)


def test_an_unfinished_run_is_labelled_progress_and_a_baseline_says_so() -> None:
    progress = assemble(load_run("soak-in-progress"), stamp=STAMP)
    assert not progress.final and progress.labels == (INCOMPLETE_LABEL,)
    assert any("had not finished" in w for w in progress.warnings)
    baseline = assemble(load_run("baseline"), stamp=STAMP)
    assert baseline.final and baseline.labels == (BASELINE_LABEL,)


def test_racks_come_from_the_fleet_when_it_knows_the_nodes_else_from_name_prefixes() -> None:
    run = load_run("acceptance-failed")
    placed = assemble(run, load_topology("ai-factory"), stamp=STAMP)
    assert [(r.name, r.from_fleet) for r in placed.racks] == [
        ("hgx-a", True),
        ("nvl-a", True),
        ("pcie-a", True),
    ]
    grouped = assemble(run, stamp=STAMP)
    assert [r.name for r in grouped.racks] == ["hgx-node", "nvl-node", "pcie-node"]
    assert prefix_of("gpu-a-01") == "gpu-a" and prefix_of("42") == "42"


def test_fleet_gpus_bind_counts_and_the_driver_needs_every_runner_to_agree() -> None:
    report = assemble(load_run("acceptance-failed"), load_topology("ai-factory"), stamp=STAMP)
    hgx = report.node("hgx-node-0001")
    assert hgx is not None and hgx.gpu_count == 8 and hgx.gpus is not None
    assert hgx.driver == "570.133.20"


def test_every_gated_metric_has_a_distribution_with_the_failing_unit_marked() -> None:
    report = assemble(load_run("acceptance-failed"), stamp=STAMP)
    gated = sum(len({g.metric for g in u.gates}) for u in report.units if u.node == "hgx-node-0001")
    assert len(report.distributions) == gated
    clock = next(d for d in report.distributions if d.gate.metric == "sustainedClockPct")
    outside = [p.label for p in clock.points if p.outside]
    assert outside == ["hgx-node-0001"]
    assert len(clock.points) == 10


def test_soak_series_sum_metrics_as_running_totals_and_keep_checkpoints() -> None:
    done = assemble(load_run("soak-segmented"), stamp=STAMP)
    elapsed = next(s for s in done.series if s.gate.metric == "elapsedS")
    assert elapsed.cumulative
    passing = next(s for s in elapsed.series if s.label == "hgx-node-0001")
    assert len(passing.samples) == 16
    values = [s.value for s in passing.samples]
    assert values == sorted(values) and values[-1] >= 13680
    clock = next(s for s in done.series if s.gate.metric == "sustainedClockPct")
    assert not clock.cumulative
    progress = assemble(load_run("soak-in-progress"), stamp=STAMP)
    running = next(s for s in progress.series[0].series if s.word == "RUNNING")
    assert running.samples[-1].checkpoint
