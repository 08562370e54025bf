"""ib-write-bw (§9.10, Pair): RDMA write bandwidth (``ib_write_bw -D --report_gbits``) and
latency (``ib_write_lat``) with perftest (Debian package ``perftest``), over the control
connection, device selection and memlock fit of :mod:`ib_write_bw_pair`.

Exit: 0 on any completed measurement (the profile decides); 1 only for RDMA hardware with no
ACTIVE port, or a run that completed carrying no traffic; 2 for no RDMA device or Node scope;
3 for a Group rank (before any hardware is looked at), a peer that never appeared, perftest
failures, a wrong unit, a memlock that fits nothing, an unknown measurand.

Configuration: ``BURNIN_VARIANT_MEASURAND`` (bandwidth | latency | unset: both),
``BURNIN_DURATION_SECONDS`` (60; the bandwidth phase is 20 s shorter), ``BURNIN_MESSAGE_BYTES``
(1048576), ``BURNIN_QPS`` (4), ``BURNIN_LATENCY_ITERATIONS`` (5000), ``BURNIN_HEALTH_PORT``
(18510), ``BURNIN_PERFTEST_PORT`` (18515; latency on the next port).
"""

from __future__ import annotations

from glimmer.runners.ib_write_bw_pair import (
    Client,
    Phase,
    PhaseRun,
    connect,
    fit,
    rdma_ports,
    refuse_scope,
    serve,
    settle_fit,
    tools,
)
from glimmer.runners.ib_write_bw_report import (
    ReportError,
    failure_lines,
    read_bandwidth,
    read_latency,
)
from glimmer.runners.outcome import ConfigError, Outcome, Stop, errored, failed, passed
from glimmer.runners.program import Context, main

KIND = "ib-write-bw"
DEFAULT_DURATION_S = 60
SETUP_S = 20  # connection set-up and the latency phase come out of the duration
MEASURANDS = ("", "bandwidth", "latency")


def measurand_of(ctx: Context) -> str:
    value = ctx.settings.raw("BURNIN_VARIANT_MEASURAND") or ""
    if value not in MEASURANDS:
        raise ConfigError("BURNIN_VARIANT_MEASURAND", f"{value!r} is not bandwidth or latency")
    return value


def perftest_failed(tool: str, run: PhaseRun) -> Stop:
    if run.timed_out:
        return Stop(errored(f"{tool} did not finish in time"))
    said = "; ".join(failure_lines(run.output)[:3]) or run.output.strip()[-200:]
    return Stop(errored(f"{tool} exited {run.exit_code}: {said}"))


def bandwidth_phase(
    ctx: Context,
    client: Client,
    size: int,
    qps: int,
    extra: tuple[str, ...] = (),
    message_rate: bool = True,
) -> float:
    """Run the bandwidth phase; print its figures; return the mean Gb/s."""
    seconds = max(5, ctx.settings.duration(DEFAULT_DURATION_S) - SETUP_S)
    args = ("-D", str(seconds), "--report_gbits", "-F", "-s", str(size), "-q", str(qps), *extra)
    run = client.run(Phase("bandwidth", "ib_write_bw", args, seconds + 60.0))
    if run.exit_code != 0 or run.timed_out:
        raise perftest_failed("ib_write_bw", run)
    try:
        row = read_bandwidth(run.output)
    except ReportError as exc:
        raise Stop(errored(str(exc))) from None
    ctx.report.metric("bw_average", row.average_gbps)
    # Duration mode prints a peak of 0.00: it is never reported (§9.10).
    if message_rate:  # gpudirect-rdma reports bandwidth and latency only (§9.12)
        ctx.report.metric("msg_rate_mpps", row.msg_rate_mpps, 6)
    return row.average_gbps


def latency_phase(
    ctx: Context, client: Client, extra: tuple[str, ...], mean_key: str = "latency_us"
) -> None:
    iterations = ctx.settings.integer("BURNIN_LATENCY_ITERATIONS", 5000, minimum=5)
    args = ("-n", str(iterations), "-F", *extra)
    run = client.run(Phase("latency", "ib_write_lat", args, 300.0), port_offset=1)
    if run.exit_code != 0 or run.timed_out:
        raise perftest_failed("ib_write_lat", run)
    try:
        row = read_latency(run.output)
    except ReportError as exc:
        raise Stop(errored(str(exc))) from None
    ctx.report.metric(mean_key, row.avg_us)
    if mean_key == "latency_us":
        ctx.report.metric("latency_min_us", row.min_us)
        ctx.report.metric("latency_max_us", row.max_us)
        ctx.report.metric("latency_p99_us", row.p99_us)  # absent on builds without the column


def run_ib_write_bw(ctx: Context) -> Outcome:
    role = refuse_scope(ctx, KIND)
    measurand = measurand_of(ctx)
    names = {"bandwidth": ("ib_write_bw",), "latency": ("ib_write_lat",)}.get(
        measurand, ("ib_write_bw", "ib_write_lat")
    )
    ports = rdma_ports(ctx, KIND)  # no device is a Skip even where perftest is not installed
    binaries = tools(names)
    mine = fit(ctx)
    if role == "server":
        pushed = {"message_bytes": mine.message_bytes, "qps": mine.qps, "measurand": measurand}
        return passed(serve(ctx, ports, binaries, pushed))
    client = connect(ctx, ports, binaries)
    try:
        settled = settle_fit(mine, client.pushed)
        if measurand in ("", "bandwidth"):
            gbps = bandwidth_phase(ctx, client, settled.message_bytes, settled.qps)
            if gbps <= 0:
                return failed(f"ib_write_bw to {client.peer} completed carrying no traffic")
        if measurand in ("", "latency"):
            latency_phase(ctx, client, ())
    finally:
        client.close()
    return passed(f"measured the link to {client.peer}")


if __name__ == "__main__":
    main(KIND, run_ib_write_bw)
