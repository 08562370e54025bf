"""A certification on the simulated fleet: every category over topology-aware groups, the
logs read by the real parsers, the verdicts of §7.5, and isolation of failing groups.

Order of work (specs/certify.md §3.1–3.2, §7): select the target nodes, keep the majority GPU
architecture (others are excluded and the result is at best INCOMPLETE), then run the
categories in list order, continuing after a failure. Communication categories isolate the
nodes of a failed run (§7.4) so a report names nodes, not groups; diagnostics run one job per
node; training judges goodput and attributes a failed job to the node its failure log names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from glimmer.certify.catalog.gpu import parse_product
from glimmer.certify.grouping import (
    CLIQUE_LABEL,
    PRODUCT_LABEL,
    RACK_LABEL,
    Group,
    NodeInfo,
    domain_key,
    fleet_nodes,
    partition,
)
from glimmer.certify.isolate import isolate
from glimmer.certify.isolate_types import Diagnosis
from glimmer.certify.measure import BandwidthRow, merge
from glimmer.certify.measure_expect import GOODPUT_MIN
from glimmer.certify.measure_goodput import parse_training
from glimmer.certify.measure_threshold import ThresholdError, holds
from glimmer.certify.sim_dcgm import run_dcgm
from glimmer.certify.sim_oracle import NcclOracle
from glimmer.certify.sim_result import (
    THRESHOLD,
    WORKLOAD,
    CategoryResult,
    CertResult,
    FailedNode,
    GroupRun,
    Isolation,
)
from glimmer.certify.sim_spec import Category, CertSpec
from glimmer.certify.sim_training import TrainingJob, run_training
from glimmer.errors import InputError
from glimmer.sim.twin import FleetSim


def select(nodes: Sequence[NodeInfo], spec: CertSpec) -> list[NodeInfo]:
    """Nodes matching the target: every nodeSelector label and every matchExpression (AND),
    then the nodeNames filter (§2.1)."""
    out = [
        n
        for n in nodes
        if all(n.labels.get(k) == v for k, v in spec.node_selector.items())
        and all(r.matches(n.labels) for r in spec.match_expressions)
    ]
    if spec.node_names:
        names = set(spec.node_names)
        out = [n for n in out if n.name in names]
    return sorted(out, key=lambda n: n.name)


def arch_of(node: NodeInfo) -> str:
    """The GPU architecture of a node's product label (h100, gb200 …); "" when unlabelled."""
    return parse_product(node.labels.get(PRODUCT_LABEL, ""))


def majority_arch(nodes: Sequence[NodeInfo]) -> str:
    """The architecture most nodes carry; a tie keeps the earliest node's; unlabelled nodes do
    not vote (§9.2 scenario 31)."""
    counts = Counter(a for a in map(arch_of, nodes) if a)
    if not counts:
        return ""
    best = max(counts.values())
    return next(a for a in map(arch_of, nodes) if a and counts[a] == best)


def certify(
    twin: FleetSim, spec: CertSpec, *, seed: int = 0, faults: Sequence[str] = ()
) -> CertResult:
    """Run ``spec`` on ``twin``; the result document."""
    every = fleet_nodes(twin.topo)
    targeted = select(every, spec)
    if not targeted:
        raise InputError(
            f"no node of fleet {twin.topo.name!r} matches the target of Certification/{spec.name}"
        )
    arch = majority_arch(targeted)
    nodes = [n for n in targeted if arch_of(n) == arch]
    excluded = tuple(n.name for n in targeted if n not in nodes)
    reason = (
        f"target set has more than one GPU architecture; certified {arch} only" if excluded else ""
    )
    cats = tuple(_category(twin, c, nodes, seed) for c in spec.categories)
    return CertResult(
        name=spec.name,
        fleet=twin.topo.name,
        gpu=arch,
        total_nodes=len(nodes),
        excluded_nodes=excluded,
        exclusion_reason=reason,
        categories=cats,
        node_racks={n.name: n.labels.get(RACK_LABEL, "") for n in nodes},
        faults=tuple(faults),
        seed=seed,
    )


def _category(twin: FleetSim, cat: Category, nodes: list[NodeInfo], seed: int) -> CategoryResult:
    if cat.kind == "nccl":
        return _communication(twin, cat, nodes, seed)
    if cat.kind == "dcgm":
        return _diagnostics(twin, cat, nodes, seed)
    return _training(twin, cat, nodes, seed)


# ---- communication ---------------------------------------------------------------------------


def _groups(cat: Category, nodes: list[NodeInfo]) -> list[Group]:
    o = cat.options
    npj = min(o.nodes_per_job or len(nodes), len(nodes))
    if o.test_scale == "intra-node":
        return partition(nodes, 1)
    if o.test_scale == "intra-rack":
        return partition(nodes, npj, domain_key(nodes), strict_domain=True)
    return partition(nodes, npj)


def _communication(
    twin: FleetSim, cat: Category, nodes: list[NodeInfo], seed: int
) -> CategoryResult:
    o = cat.options
    mnnvl = (
        o.enable_mnnvl
        if o.enable_mnnvl is not None
        else any(CLIQUE_LABEL in n.labels for n in nodes)
    )
    products = {n.name: n.labels.get(PRODUCT_LABEL, "") for n in nodes}
    oracle = NcclOracle(twin, cat.collective, products, o.thresholds, o.max_bytes, seed)
    diagnose = o.test_scale == "diagnose"
    groups = [] if diagnose else _groups(cat, nodes)
    runs = tuple(oracle.judge(g.name, g.nodes, mnnvl) for g in groups)
    job_s = max(oracle.seconds.values(), default=0.0)
    failed: list[FailedNode] = []
    bad_runs = [r for r in runs if not r.passed]
    # A one-node job's failure already names its node; a wider one is narrowed down.
    for r in bad_runs:
        if len(r.nodes) == 1:
            failed.append(FailedNode(r.nodes[0], r.failure or WORKLOAD, r.reason))
    diag: Diagnosis | None = None
    if diagnose or any(len(r.nodes) > 1 for r in bad_runs):
        # The catalog's diagnose key is the NVLink clique (§5.3); nodes without one share the
        # domain "unknown", so a fleet of HGX boards screens as one group and bisects from there.
        diag = isolate(
            nodes, oracle, topology_key=CLIQUE_LABEL, min_group_size=o.min_group_size, nvlink=mnnvl
        )
        # §7.2: diagnosis names its confirmed nodes with WorkloadFailed.
        failed += [FailedNode(a.node, WORKLOAD, a.reason) for a in diag.faulty]
    rounds = diag.rounds if diag else 0
    runtime = (1 if groups else 0) * job_s + rounds * max(oracle.seconds.values(), default=0.0)
    status_bad = bool(bad_runs) or bool(diag and (diag.faulty or diag.infrastructure))
    reason = ""
    if status_bad:
        parts = [f"{len(bad_runs)} of {len(runs)} groups failed"] if runs else []
        if diag:
            parts.append(diag.message)
            parts += [
                f"infrastructure fault between {', '.join(f.group_a)} and {', '.join(f.group_b)}"
                for f in diag.infrastructure
            ]
        reason = "; ".join(parts)
    bandwidth = merge([], [row for g in groups for row in _group_rows(oracle, g.name)])
    isolation = None
    if diag:
        isolation = Isolation(
            diag.rounds,
            diag.tests,
            diag.message,
            tuple(
                f"{', '.join(f.group_a)} <-> {', '.join(f.group_b)}" for f in diag.infrastructure
            ),
        )
    return CategoryResult(
        cat.domain,
        cat.variant,
        "Failed" if status_bad else "Succeeded",
        o.test_scale,
        max((len(g.nodes) for g in groups), default=len(nodes)),
        runtime,
        mnnvl,
        runs,
        tuple(_dedupe(failed)),
        reason,
        tuple(bandwidth),
        {},
        isolation,
    )


def _group_rows(oracle: NcclOracle, name: str) -> list[BandwidthRow]:
    """A group's per-size figures, as rows to fold into the category's running averages."""
    return [BandwidthRow(r.size, r.alg_bw, r.bus_bw) for r in oracle.rows.get(name, [])]


def _dedupe(nodes: list[FailedNode]) -> list[FailedNode]:
    """Keyed by (name, reason) and sorted, as FailedNode lists are (§2.1)."""
    seen: dict[tuple[str, str], FailedNode] = {}
    for f in nodes:
        seen.setdefault((f.name, f.reason), f)
    return [seen[k] for k in sorted(seen)]


# ---- diagnostics -----------------------------------------------------------------------------


def _diagnostics(twin: FleetSim, cat: Category, nodes: list[NodeInfo], seed: int) -> CategoryResult:
    level = cat.level
    runs: list[GroupRun] = []
    failed: list[FailedNode] = []
    longest = 0.0
    for n in nodes:
        r = run_dcgm(twin, n.name, level, seed)
        longest = max(longest, r.elapsed_s)
        runs.append(
            GroupRun(
                f"dcgm-{n.name}",
                (n.name,),
                "dcgmLevel",
                r.passed,
                float(level),
                path="node",
                reason=r.reason,
                failure="" if r.passed else WORKLOAD,
            )
        )
        if not r.passed:
            failed.append(FailedNode(n.name, WORKLOAD, f"dcgmi diag --run {level}: {r.reason}"))
    bad = [r for r in runs if not r.passed]
    return CategoryResult(
        cat.domain,
        cat.variant,
        "Failed" if bad else "Succeeded",
        "intra-node",
        1,
        longest,
        None,
        tuple(runs),
        tuple(_dedupe(failed)),
        f"{len(bad)} of {len(runs)} nodes failed DCGM level {level}" if bad else "",
    )


# ---- training --------------------------------------------------------------------------------


def _training(twin: FleetSim, cat: Category, nodes: list[NodeInfo], seed: int) -> CategoryResult:
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
        tuple(_dedupe(failed)),
        f"{len(bad)} of {len(runs)} training jobs failed" if bad else "",
        (),
        figures,
    )
