"""fabric-soak (§9.15, Pair, sustained load): the ib_write_bw measurement repeated in windows of
``FABRIC_SOAK_WINDOW_SECONDS`` (20; must be shorter than the duration, default 3600) for the
whole duration, with the port's error counters (under ``FABRIC_SOAK_SYSFS``, default the
runner's sysfs root) baselined before the first window and reported as a delta.

A failed window counts toward ``soakFailedIterations`` only; cumulative figures are re-printed
every 60 s, so a truncated log is a valid snapshot. Exit 1 when any window failed; 2 for no
RDMA device or Node scope; a Group rank is an Error (3) before any hardware is looked at
(Appendix C item 5: decided for the rebuild, the original skipped); 3 for machinery.
"""

from __future__ import annotations

import time

from glimmer.runners.fabric_soak_stats import counter_delta, read_counters, window_stats
from glimmer.runners.ib_write_bw_pair import (
    Client,
    Phase,
    connect,
    fit,
    rdma_ports,
    refuse_scope,
    serve,
    settle_fit,
    sysfs_root,
    tools,
)
from glimmer.runners.ib_write_bw_report import ReportError, read_bandwidth
from glimmer.runners.outcome import ConfigError, Outcome, failed, passed
from glimmer.runners.program import Context, main

KIND = "fabric-soak"
DEFAULT_DURATION_S = 3600
DEFAULT_WINDOW_S = 20
REPRINT_EVERY_S = 60.0


class _Soak:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.samples: list[float] = []
        self.windows = 0
        self.failed = 0
        self.server_restarts = 0

    def window(self, client: Client, seconds: int, size: int, qps: int) -> None:
        args = ("-D", str(seconds), "--report_gbits", "-F", "-s", str(size), "-q", str(qps))
        run = client.run(Phase("window", "ib_write_bw", args, seconds + 60.0))
        self.windows += 1
        if run.exit_code == -1 and not run.timed_out:
            self.server_restarts += 1  # the server's end did not come up for this window
        try:
            row = read_bandwidth(run.output) if run.exit_code == 0 else None
        except ReportError:
            row = None
        if row is None or row.average_gbps <= 0:
            self.failed += 1
            return
        self.samples.append(row.average_gbps)

    def print(self, link_errors: int | None, final: bool) -> None:
        report = self.ctx.report
        stats = window_stats(self.samples)
        if stats is not None:
            report.metric("minBandwidthGbps", stats.minimum)
            report.metric("p1BandwidthGbps", stats.p1)
            report.metric("meanBandwidthGbps", stats.mean)
            report.metric("peakBandwidthGbps", stats.peak)
            report.metric("bandwidthStdDevGbps", stats.std_dev, 3)
        report.metric("soakIterations", self.windows)
        report.metric("soakFailedIterations", self.failed)
        report.metric("soakServerRestarts", self.server_restarts)
        if final:
            if link_errors is None:
                report.unmeasurable("linkErrorEvents")
            else:
                report.metric("linkErrorEvents", link_errors)


def run_fabric_soak(ctx: Context) -> Outcome:
    role = refuse_scope(ctx, KIND)
    duration = ctx.settings.duration(DEFAULT_DURATION_S)
    window = ctx.settings.integer("FABRIC_SOAK_WINDOW_SECONDS", DEFAULT_WINDOW_S, minimum=1)
    if window >= duration:
        raise ConfigError(
            "FABRIC_SOAK_WINDOW_SECONDS", f"{window} is not shorter than the {duration} s duration"
        )
    ports = rdma_ports(ctx, KIND)
    binaries = tools(("ib_write_bw",))
    mine = fit(ctx)  # memlock is checked up front, before any window
    if role == "server":
        return passed(
            serve(ctx, ports, binaries, {"message_bytes": mine.message_bytes, "qps": mine.qps})
        )
    counters_root = sysfs_root(ctx, "FABRIC_SOAK_SYSFS")
    client = connect(ctx, ports, binaries)
    soak = _Soak(ctx)
    try:
        settled = settle_fit(mine, client.pushed)
        device, port = client.sel.port.device, client.sel.port.number
        before = read_counters(counters_root, device, port)
        started = time.monotonic()
        last_print = started
        while time.monotonic() - started + window <= duration:
            soak.window(client, window, settled.message_bytes, settled.qps)
            if time.monotonic() - last_print >= REPRINT_EVERY_S:
                soak.print(None, final=False)
                last_print = time.monotonic()
        after = read_counters(counters_root, device, port)
    finally:
        client.close()
    soak.print(counter_delta(before, after), final=True)
    if soak.windows == 0:
        return failed("no window completed within the duration")
    if soak.failed:
        return failed(f"{soak.failed} of {soak.windows} windows failed")
    return passed(f"{soak.windows} windows to {client.peer}")


if __name__ == "__main__":
    main(KIND, run_fabric_soak)
