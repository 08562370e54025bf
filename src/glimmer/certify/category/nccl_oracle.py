"""The NCCL test oracle: run a collective over a group on the substrate, read its log with the
LogProfile recipe the category names (the bandwidth figures) and the nccl-tests table parser
(``#wrong`` and job time, which no recipe captures), and judge the peak bus bandwidth
(specs/certify.md §6.1, §7.5).

A certification's own ``busBandwidthGBps`` / ``algBandwidthGBps`` thresholds win; without them
the group must reach :data:`~glimmer.certify.measure.expect.PASS_FRACTION` of what its path
should carry (the architecture's NVLink figure, or its NICs). The same oracle screens groups
and drives isolation, so a verdict means the same thing at every stage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from glimmer.certify.isolate_types import Outcome, Probe
from glimmer.certify.jobs import GIB, JobLog, NcclJob
from glimmer.certify.measure.bandwidth import (
    NCCL_BANDWIDTH,
    BandwidthParser,
    SizeResult,
    merge,
    parse_table,
    peak_alg_bw,
    peak_bus_bw,
)
from glimmer.certify.measure.expect import (
    PASS_FRACTION,
    Figure,
    floor,
    network_expectation,
    nvlink_expectation,
)
from glimmer.certify.measure.threshold import ThresholdError, holds
from glimmer.certify.result import THRESHOLD, WORKLOAD, GroupRun
from glimmer.certify.substrate import Substrate, run_jobs

ITERS = 100  # nccl-tests -n (§2.2 numIterations default)
JOB_OVERHEAD_S = 60.0  # pods scheduled, MPI launched, NCCL initialised


@dataclass
class NcclOracle:
    substrate: Substrate
    collective: str
    products: Mapping[str, str]  # node -> nvidia.com/gpu.product
    thresholds: Mapping[str, str] = field(default_factory=dict)
    max_bytes: int = 16 * GIB
    seed: int = 0
    parser: BandwidthParser = NCCL_BANDWIDTH  # the LogProfile's bandwidthResult recipe
    runs: dict[str, GroupRun] = field(default_factory=dict)
    rows: dict[str, list[SizeResult]] = field(default_factory=dict)
    seconds: dict[tuple[str, tuple[str, ...]], float] = field(default_factory=dict)

    def expectation(self, nodes: tuple[str, ...], path: str) -> Figure | None:
        if path == "nvlink":
            return nvlink_expectation(self.products.get(nodes[0], ""), self.collective)
        fabric = self.substrate.fabric(nodes)
        if fabric is None:
            return None
        return network_expectation(fabric.rails, fabric.speed_gbps)

    def job(self, name: str, nodes: tuple[str, ...], nvlink: bool) -> NcclJob:
        """The nccl-tests job of one group."""
        return NcclJob(name, self.collective, nodes, nvlink, self.max_bytes, seed=self.seed)

    def judge(self, name: str, nodes: tuple[str, ...], nvlink: bool) -> GroupRun:
        """Run and judge one group; the verdict is also kept under ``name``."""
        job = self.job(name, nodes, nvlink)
        return self._record(job, self.substrate.run(job))

    def judge_all(
        self, groups: Sequence[tuple[str, tuple[str, ...]]], nvlink: bool
    ) -> list[GroupRun]:
        """Run independent groups (``(name, nodes)``) side by side; judge each as :meth:`judge`."""
        jobs = [self.job(name, nodes, nvlink) for name, nodes in groups]
        return [
            self._record(j, log)
            for j, log in zip(jobs, run_jobs(self.substrate, jobs), strict=True)
        ]

    def _record(self, job: NcclJob, log: JobLog) -> GroupRun:
        name, nodes, nvlink = job.name, job.nodes, job.nvlink
        rows = merge([], self.parser.parse(log.text))
        run = self._judge(name, nodes, nvlink, log, rows)
        self.runs[name] = run
        table = parse_table(log.text)
        self.rows[name] = rows
        self.seconds[(name, nodes)] = JOB_OVERHEAD_S + sum(
            (r.out_of_place.time_us + r.in_place.time_us) * ITERS / 1e6 for r in table.rows
        )
        return run

    def _judge(
        self,
        name: str,
        nodes: tuple[str, ...],
        nvlink: bool,
        log: JobLog,
        rows: list[SizeResult],
    ) -> GroupRun:
        where = f"{log.path}, MNNVL {'on' if nvlink else 'off'}"
        table = parse_table(log.text)
        # The figures are what the LogProfile read (§6.1), as a BandwidthMeasurement holds them.
        peak, alg = peak_bus_bw(rows), peak_alg_bw(rows)
        # Until a gate is evaluated, a failure is the workload's (it did not run, or wrongly).
        base = GroupRun(
            name, nodes, "busBandwidthGBps", False, peak, path=log.path, failure=WORKLOAD
        )
        if log.exit_code and not table.rows:
            return _with(base, reason=f"{self.collective} did not run: {log.error}")
        if table.wrong:
            return _with(
                base, reason=f"{table.wrong} incorrect elements (#wrong) in {self.collective}"
            )
        if peak is None:
            return _with(base, reason="no bandwidth data was parsed from the log")
        expected = self.expectation(nodes, log.path)
        exp_value = expected.value if expected else None
        source = expected.source if expected else ""
        base = _with(base, failure=THRESHOLD)
        measured = {"busBandwidthGBps": peak, "algBandwidthGBps": alg or 0.0}
        gates = {k: v for k, v in self.thresholds.items() if k in measured}
        if gates:
            for key in sorted(gates):
                try:
                    ok = holds(gates[key], measured[key])
                except ThresholdError as e:
                    return _with(
                        base,
                        expected=exp_value,
                        source=source,
                        reason=f"threshold {key} is invalid: {e}",
                    )
                if not ok:
                    return _with(
                        base,
                        expected=exp_value,
                        source=source,
                        reason=f'Threshold "{key}" violated: measured '
                        f"{measured[key]:.4f}, expression: {gates[key]} ({where})",
                    )
            return _with(base, passed=True, failure="", expected=exp_value, source=source)
        if expected is None:
            # No sourced figure for this part and path, and no threshold: completion and
            # correctness are all that can be judged.
            return _with(
                base, passed=True, failure="", reason="no expectation for this part and path"
            )
        line = floor(expected)
        if peak < line:
            return _with(
                base,
                expected=exp_value,
                floor=line,
                source=source,
                reason=f"{self.collective} busbw {peak:.2f} GB/s < floor {line:.2f} "
                f"GB/s ({PASS_FRACTION.value:g} x {exp_value:.1f} expected; {where})",
            )
        return _with(base, passed=True, failure="", expected=exp_value, floor=line, source=source)

    def __call__(self, probe: Probe) -> Outcome:
        run = self.judge(probe.name, probe.nodes, probe.nvlink)
        return Outcome(run.passed, run.measured, run.reason)


def _with(base: GroupRun, **changes: object) -> GroupRun:
    return replace(base, **changes)  # type: ignore[arg-type]
