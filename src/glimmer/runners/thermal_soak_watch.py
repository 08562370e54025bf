"""What watches a soak while it runs: the progress printer that re-prints the figures so far
(§9: a truncated soak log is still a valid snapshot) and the in-process Xid watch over the kernel
log, positioned at its tail at the start and read again at the end."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from glimmer.runners import devices as dv
from glimmer.runners.kernel_log import open_kernel_log
from glimmer.runners.program import Context
from glimmer.runners.report import Report

if TYPE_CHECKING:
    from glimmer.runners.thermal_soak_engine import Soak


def print_snapshot(report: Report, results: list[dv.DeviceResult]) -> None:
    """The figures so far, folded to the worst device, without the fold's account (that comes
    once, at the end)."""
    names: list[str] = []
    for r in results:
        names.extend(k for k in r.values if k not in names)
    for name in names:
        present = [r.values[name] for r in results if r.values.get(name) is not None]
        if present:
            decimals = next(r.decimals.get(name, 2) for r in results if name in r.values)
            report.metric(name, dv.fold_value(name, present), decimals)


class Progress:
    """Re-prints the soak's figures every progress interval while the devices run."""

    def __init__(self, report: Report, soak: Soak, interval_s: float) -> None:
        self.report, self.soak, self.interval_s = report, soak, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            lives = self.soak.lives_now()
            if lives:
                print_snapshot(self.report, [self.soak.figures_of(live) for live in lives])

    def __enter__(self) -> Progress:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30.0)


class XidWatch:
    """The kernel log read at start (positioned at its tail) and again at the end."""

    def __init__(self, ctx: Context) -> None:
        self.report = ctx.report
        self.log, self.why = open_kernel_log(ctx.paths.kmsg, ())
        self.dropped = False
        if self.log is not None:
            self.dropped = self.log.drain().dropped

    def finish(self) -> None:
        r = self.report
        if self.log is None:
            r.metric("xidSource", "none")
            r.metric("xidSourceDetail", self.why)
            return
        r.metric("xidSource", self.log.source)
        during = self.log.drain()
        self.log.close()
        if self.dropped or during.dropped:
            r.metric("xidLogDropped", 1)  # and no count: a partial zero is no zero
            return
        r.metric("xidEvents", during.xids)
        r.metric("lastXidCode", during.last_xid)
        r.metric("xidWindowsWatched", 1)
