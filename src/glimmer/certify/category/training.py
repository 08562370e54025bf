"""A training category: a Megatron-style job per group, goodput and step figures read from its
log by the LogProfile parser, judged by the category's thresholds and the glimmer defaults for
the keys it leaves out (goodput, throughput per GPU by product: :mod:`training_gates`).

Who a failed job blames (§7.2): the nodes its failure log names (a process that died on a
node); a one-node job its node; otherwise nobody yet — synchronous training runs at the pace of
its slowest GPU, so "the job was slow" says nothing about which of its nodes was. Such a job is
narrowed down by adaptive isolation (§7.4) with training jobs as the probes, and only the nodes
it confirms are named, as a failed collective's are."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from glimmer.certify.grouping import (
    CLIQUE_LABEL,
    PRODUCT_LABEL,
    Group,
    NodeInfo,
    mnnvl_on,
    partition,
)
from glimmer.certify.isolate import isolate
from glimmer.certify.isolate_types import Diagnosis, Outcome, Probe
from glimmer.certify.jobs import JobLog, TrainingJob
from glimmer.certify.measure.goodput import parse_training
from glimmer.certify.result import (
    THRESHOLD,
    WORKLOAD,
    CategoryResult,
    FailedNode,
    GroupRun,
    dedupe,
    diagnosis_reasons,
    isolation_of,
)
from glimmer.certify.spec import Category
from glimmer.certify.substrate import Substrate, run_jobs
from glimmer.certify.training_gates import GOODPUT, STEP_TIME, TFLOPS, judge, training_gates

# Isolation may bisect a training job down to one node (unless the category asks for more): a
# one-node job runs every GPU of its node and measures the throughput per GPU the gate reads,
# where a one-node collective would test no fabric (the collectives' default of 2).
TRAINING_MIN_GROUP_SIZE = 1
# The category's figures, averaged over its jobs, rounded as the report prints them.
_FIGURE_DIGITS = {"goodput": 4, "tflops": 1, "stepTime": 4, "trainTime": 1}


class _Trainer:
    """Runs one training job over a set of nodes and judges it; also the isolation oracle."""

    def __init__(
        self, substrate: Substrate, cat: Category, products: Mapping[str, str], seed: int
    ) -> None:
        self.substrate = substrate
        self.options = cat.options
        self.products = products
        self.seed = seed
        self.seconds: dict[str, float] = {}  # job name -> training time, for the runtime
        # job name -> the nodes its log blames for the failure, with the evidence
        self.blamed: dict[str, list[FailedNode]] = {}

    def job(self, name: str, nodes: tuple[str, ...], nvlink: bool) -> TrainingJob:
        o = self.options
        return TrainingJob(
            name,
            nodes,
            o.max_steps,
            o.enable_checkpoint,
            o.save_interval,
            o.max_restarts,
            nvlink=nvlink,
            seed=self.seed,
        )

    def run(self, name: str, nodes: tuple[str, ...], nvlink: bool) -> GroupRun:
        job = self.job(name, nodes, nvlink)
        return self._judge(job, self.substrate.run(job))

    def run_all(self, groups: Sequence[Group], nvlink: bool) -> list[GroupRun]:
        """Run independent groups side by side; judge each as :meth:`run`."""
        jobs = [self.job(g.name, g.nodes, nvlink) for g in groups]
        logs = run_jobs(self.substrate, jobs)
        return [self._judge(j, log) for j, log in zip(jobs, logs, strict=True)]

    def _judge(self, job: TrainingJob, log: JobLog) -> GroupRun:
        o = self.options
        name, nodes, nvlink = job.name, job.nodes, job.nvlink
        got = parse_training(log.text)
        if got is not None:
            self.seconds[name] = got.training_time
        if log.exit_code:
            self.blamed[name] = [
                FailedNode(n, WORKLOAD, f"training job {name} failed: {log.error}")
                for n in log.crashed_on
                if n in nodes
            ]
            return GroupRun(
                name,
                nodes,
                GOODPUT,
                False,
                path="node",
                reason=f"training job failed: {log.error}",
                failure=WORKLOAD,
            )
        if got is None:
            return GroupRun(
                name,
                nodes,
                GOODPUT,
                False,
                reason="no training step was parsed from the log",
                failure=WORKLOAD,
            )
        measured = {
            GOODPUT: got.ratio,
            TFLOPS: got.avg_tflops_per_gpu or 0.0,
            STEP_TIME: got.avg_step_time or 0.0,
        }
        figures = {
            "goodput": measured[GOODPUT],
            "tflops": measured[TFLOPS],
            "stepTime": measured[STEP_TIME],
            "trainTime": got.training_time,
        }
        gates = training_gates(o.thresholds, (self.products.get(n, "") for n in nodes))
        v = judge(gates, measured)
        if not v.passed and v.gate is not None and v.gate.key == GOODPUT:
            # Goodput lost to restarts: the log names the node whose process was lost each time.
            self.blamed[name] = [
                FailedNode(n, THRESHOLD, f"{v.reason}; the job's log names {n} as the peer lost")
                for n in log.crashed_on
                if n in nodes
            ]
        return GroupRun(
            name,
            nodes,
            v.gate.key if v.gate else GOODPUT,
            v.passed,
            v.measured,
            floor=v.gate.floor if v.gate else None,
            path="nvlink" if nvlink else "network",
            reason=v.reason,
            source=v.gate.source if v.gate else "",
            failure="" if v.passed else THRESHOLD,
            figures={k: round(x, _FIGURE_DIGITS[k]) for k, x in figures.items()},
        )

    def probe(self, p: Probe) -> Outcome:
        r = self.run(p.name, p.nodes, p.nvlink)
        return Outcome(r.passed, r.measured, r.reason)


def _averages(runs: Sequence[GroupRun]) -> dict[str, float]:
    """The category's Avg figures: the mean of every job that measured them."""
    measured = [r.figures for r in runs if r.figures]
    return {
        k: round(sum(f[k] for f in measured) / len(measured), d)
        for k, d in _FIGURE_DIGITS.items()
        if measured
    }


def run_training_category(
    substrate: Substrate, cat: Category, nodes: list[NodeInfo], seed: int
) -> CategoryResult:
    """Run the training category over its groups, judge each job, isolate what fails."""
    o = cat.options
    mnnvl = mnnvl_on(o.enable_mnnvl, nodes)
    npj = min(o.nodes_per_job or len(nodes), len(nodes))
    groups = partition(nodes, npj)
    trainer = _Trainer(
        substrate, cat, {n.name: n.labels.get(PRODUCT_LABEL, "") for n in nodes}, seed
    )
    runs = trainer.run_all(groups, mnnvl)
    group_s = max(trainer.seconds.values(), default=0.0)
    failed: list[FailedNode] = []
    unexplained: dict[str, None] = {}  # nodes of failed jobs that named nobody, in order
    for r in (r for r in runs if not r.passed):
        named = trainer.blamed.get(r.name) or [
            FailedNode(n, r.failure or WORKLOAD, r.reason) for n in r.nodes if len(r.nodes) == 1
        ]
        if named:
            failed += named
        else:
            unexplained.update(dict.fromkeys(r.nodes))
    diag: Diagnosis | None = None
    if unexplained:
        diag = isolate(
            [n for n in nodes if n.name in unexplained],
            trainer.probe,
            topology_key=CLIQUE_LABEL,
            min_group_size=o.min_group_size or TRAINING_MIN_GROUP_SIZE,
            nvlink=mnnvl,
        )
        # §7.2: diagnosis names its confirmed nodes with WorkloadFailed.
        failed += [FailedNode(a.node, WORKLOAD, a.reason) for a in diag.faulty]
        # Jobs of one round run side by side: a round lasts as long as its longest job.
        longest: dict[int, float] = {}
        for t in diag.history:
            took = trainer.seconds.get(t.probe.name, 0.0)
            longest[t.round] = max(longest.get(t.round, 0.0), took)
        group_s += sum(longest.values())
    bad = [r for r in runs if not r.passed]
    reason = ""
    if bad:
        parts = [f"{len(bad)} of {len(runs)} training jobs failed"]
        if diag:
            parts += diagnosis_reasons(diag)
        reason = "; ".join(parts)
    isolation = isolation_of(diag)
    return CategoryResult(
        cat.domain,
        cat.variant,
        "Failed" if bad else "Succeeded",
        o.test_scale,
        npj,
        group_s,
        mnnvl,
        tuple(runs),
        tuple(dedupe(failed)),
        reason,
        (),
        _averages(runs),
        isolation,
    )
