"""A training category on the simulated fleet: a Megatron-style job per group, goodput and step
figures read from its log by the LogProfile parser, judged by the category's thresholds or the
goodput floor. A failed job is attributed to the node its failure log names, else to the whole
group (§7.2); a missed threshold to the group."""

from __future__ import annotations

from glimmer.certify.grouping import CLIQUE_LABEL, NodeInfo, partition
from glimmer.certify.measure_expect import GOODPUT_MIN
from glimmer.certify.measure_goodput import parse_training
from glimmer.certify.measure_threshold import ThresholdError, holds
from glimmer.certify.sim_result import (
    THRESHOLD,
    WORKLOAD,
    CategoryResult,
    FailedNode,
    GroupRun,
    dedupe,
)
from glimmer.certify.sim_spec import Category
from glimmer.certify.sim_training import TrainingJob, run_training
from glimmer.sim.twin import FleetSim


def run_training_category(
    twin: FleetSim, cat: Category, nodes: list[NodeInfo], seed: int
) -> CategoryResult:
    """Run the training category over its groups and judge each run."""
    o = cat.options
    mnnvl = (
        o.enable_mnnvl
        if o.enable_mnnvl is not None
        else any(CLIQUE_LABEL in n.labels for n in nodes)
    )
    npj = min(o.nodes_per_job or len(nodes), len(nodes))
    groups = partition(nodes, npj)
    runs: list[GroupRun] = []
    failed: list[FailedNode] = []
    figures: dict[str, float] = {}
    runtime = 0.0
    gates = dict(o.thresholds) or {"goodputRatio": f"value >= {GOODPUT_MIN.value}"}
    for g in groups:
        job = TrainingJob(
            g.name,
            g.nodes,
            o.max_steps,
            o.enable_checkpoint,
            o.save_interval,
            o.max_restarts,
            nvlink=mnnvl,
            seed=seed,
        )
        log = run_training(twin, job)
        got = parse_training(log.text)
        if got is not None:
            runtime = max(runtime, got.training_time)
        if log.exit_code:
            blamed = log.crashed_on or g.nodes  # the failure log's node, else the group (§7.2)
            runs.append(
                GroupRun(
                    g.name,
                    g.nodes,
                    "goodputRatio",
                    False,
                    path="node",
                    reason=f"training job failed: {log.error}",
                    failure=WORKLOAD,
                )
            )
            failed += [
                FailedNode(n, WORKLOAD, f"training job {g.name} failed: {log.error}")
                for n in blamed
                if n in g.nodes
            ]
            continue
        if got is None:
            runs.append(
                GroupRun(
                    g.name,
                    g.nodes,
                    "goodputRatio",
                    False,
                    reason="no training step was parsed from the log",
                    failure=WORKLOAD,
                )
            )
            continue
        measured = {
            "goodputRatio": got.ratio,
            "avgTFLOPsPerGPU": got.avg_tflops_per_gpu or 0.0,
            "avgStepTimeSec": got.avg_step_time or 0.0,
        }
        figures = {
            "goodput": round(got.ratio, 4),
            "tflops": round(measured["avgTFLOPsPerGPU"], 1),
            "stepTime": round(measured["avgStepTimeSec"], 4),
            "trainTime": round(got.training_time, 1),
        }
        reason = ""
        for key in sorted(k for k in gates if k in measured):
            try:
                ok = holds(gates[key], measured[key])
            except ThresholdError as e:
                ok, reason = False, f"threshold {key} is invalid: {e}"
            if not ok:
                reason = reason or (
                    f'Threshold "{key}" violated: measured {measured[key]:.4f}, '
                    f"expression: {gates[key]}"
                )
                break
        runs.append(
            GroupRun(
                g.name,
                g.nodes,
                "goodputRatio",
                not reason,
                got.ratio,
                floor=GOODPUT_MIN.value if "goodputRatio" not in o.thresholds else None,
                path="nvlink" if mnnvl else "network",
                reason=reason,
                source=GOODPUT_MIN.source,
                failure=THRESHOLD if reason else "",
            )
        )
        if reason:
            failed += [FailedNode(n, THRESHOLD, reason) for n in g.nodes]
    bad = [r for r in runs if not r.passed]
    return CategoryResult(
        cat.domain,
        cat.variant,
        "Failed" if bad else "Succeeded",
        o.test_scale,
        npj,
        runtime,
        mnnvl,
        tuple(runs),
        tuple(dedupe(failed)),
        f"{len(bad)} of {len(runs)} training jobs failed" if bad else "",
        (),
        figures,
    )
