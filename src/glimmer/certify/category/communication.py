"""A communication category: nccl-tests over the groups its test scale
asks for (one per node, one per NVLink domain or rack, or the whole target), judged by the NCCL
oracle, which reads the figures with the LogProfile the catalog entry's bandwidthMeasurement
names (the built-in ``nccl-bandwidth`` recipe when it names none); a failed multi-node run, or
``testScale: diagnose``, is narrowed down to nodes by adaptive isolation (specs/certify.md
§6.1, §7.3–7.4)."""

from __future__ import annotations

from glimmer.certify.catalog.entries import log_profile
from glimmer.certify.category.nccl_oracle import NcclOracle
from glimmer.certify.grouping import (
    CLIQUE_LABEL,
    PRODUCT_LABEL,
    Group,
    NodeInfo,
    domain_key,
    mnnvl_on,
    partition,
)
from glimmer.certify.isolate import DEFAULT_MIN_GROUP_SIZE, isolate
from glimmer.certify.isolate_types import Diagnosis
from glimmer.certify.measure.bandwidth import NCCL_BANDWIDTH, BandwidthRow, bandwidth_parser, merge
from glimmer.certify.result import (
    WORKLOAD,
    CategoryResult,
    FailedNode,
    dedupe,
    diagnosis_reasons,
    isolation_of,
)
from glimmer.certify.spec import Category
from glimmer.certify.substrate import Substrate


def _groups(cat: Category, nodes: list[NodeInfo]) -> list[Group]:
    o = cat.options
    npj = min(o.nodes_per_job or len(nodes), len(nodes))
    if o.test_scale == "intra-node":
        return partition(nodes, 1)
    if o.test_scale == "intra-rack":
        return partition(nodes, npj, domain_key(nodes), strict_domain=True)
    return partition(nodes, npj)


def run_communication(
    substrate: Substrate, cat: Category, nodes: list[NodeInfo], seed: int
) -> CategoryResult:
    """Run the collective over the groups of the test scale; isolate what fails."""
    o = cat.options
    mnnvl = mnnvl_on(o.enable_mnnvl, nodes)
    products = {n.name: n.labels.get(PRODUCT_LABEL, "") for n in nodes}
    parser = bandwidth_parser(log_profile(cat.log_profile)) if cat.log_profile else NCCL_BANDWIDTH
    oracle = NcclOracle(
        substrate, cat.collective, products, o.thresholds, o.max_bytes, seed, parser=parser
    )
    diagnose = o.test_scale == "diagnose"
    groups = [] if diagnose else _groups(cat, nodes)
    # The groups are independent: a substrate may run them side by side.
    runs = tuple(oracle.judge_all([(g.name, g.nodes) for g in groups], mnnvl))
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
            nodes,
            oracle,
            topology_key=CLIQUE_LABEL,
            min_group_size=o.min_group_size or DEFAULT_MIN_GROUP_SIZE,
            nvlink=mnnvl,
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
            parts += diagnosis_reasons(diag)
        reason = "; ".join(parts)
    bandwidth = merge([], [row for g in groups for row in _group_rows(oracle, g.name)])
    isolation = isolation_of(diag)
    return CategoryResult(
        cat.domain,
        cat.variant,
        "Failed" if status_bad else "Succeeded",
        o.test_scale,
        max((len(g.nodes) for g in groups), default=len(nodes)),
        runtime,
        mnnvl,
        runs,
        tuple(dedupe(failed)),
        reason,
        tuple(bandwidth),
        {},
        isolation,
    )


def _group_rows(oracle: NcclOracle, name: str) -> list[BandwidthRow]:
    """A group's per-size figures, as rows to fold into the category's running averages."""
    return [BandwidthRow(r.size, r.alg_bw, r.bus_bw) for r in oracle.rows.get(name, [])]
