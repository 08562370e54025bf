"""host-health (§9.8): passive fault counters over a short observation window, no load.

Sources, each reported with its own status so an unread source is told apart from a clean one:
NVML (when ``nvidia-ml-py`` and a GPU are present), amdgpu RAS counters, the kernel log
(``/dev/kmsg``, else the text logs), sysfs PCIe AER, NIC link state and link-down counters,
InfiniBand/RoCE ports.

Window = ``BURNIN_DURATION_SECONDS`` clamped to 30 s (unset or 0: 15 s); own deadline 55 s;
8 s per external probe. A ``host_health_stage`` breadcrumb is printed (and flushed) as each
stage starts, so a runner killed halfway shows how far it got; a crash prints
``host_health_panic`` and its trace before the marker.

Gated by the runner (exit 1, ``HOST_HEALTH_FAULT: k=v ...``): Xids in the window, uncorrected
ECC (lifetime), remapped rows (lifetime), PCIe replays in the window, NIC link-down events in
the window. Nothing readable at all: ``HOST_HEALTH_ERROR``, exit 3. host-health never skips.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from types import FrameType

from glimmer.runners.amd_ras import read_ras
from glimmer.runners.deadline import Deadline
from glimmer.runners.kernel_log import open_kernel_log
from glimmer.runners.net_links import link_down_events, read_ib, read_nics, saturated
from glimmer.runners.nvml_probe import (
    Nvml,
    NvmlReading,
    open_nvml,
    read_static,
    replay_counters,
)
from glimmer.runners.outcome import Outcome, Stop, errored, failed, passed
from glimmer.runners.pcie_aer import read_aer
from glimmer.runners.program import Context, main, print_trace
from glimmer.runners.report import MarkerWords, Report

KIND = "host-health"
HOST_HEALTH_VERSION = 1  # the schema of this output; bump when a key changes meaning
WORDS = MarkerWords(passed="OK", failed="FAULT")
OWN_DEADLINE_S = 55.0
MAX_WINDOW_S = 30
DEFAULT_WINDOW_S = 15
READ_MARGIN_S = 10.0  # what the reads after the window may take (NVML: one 8 s probe)


def window_seconds(ctx: Context) -> int:
    return min(ctx.settings.duration(DEFAULT_WINDOW_S), MAX_WINDOW_S)


def nic_absent_reason(proc: Path) -> str:
    """Why no physical NIC was seen: told apart by comparing this process's network namespace
    with init's (both readable only as root; otherwise the reason says it could not tell)."""
    try:
        mine, init = os.readlink(proc / "self/ns/net"), os.readlink(proc / "1/ns/net")
    except OSError:
        return "no physical NIC in this network namespace (run with host networking)"
    if mine != init:
        return f"not the host network namespace ({mine}): run with host networking"
    return "no physical NIC in the host network namespace"


class _Run:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.r: Report = ctx.report
        self.gated: dict[str, int] = {}
        self.sources: list[str] = []  # the sources that answered

    def stage(self, name: str) -> None:
        self.r.metric("host_health_stage", name)

    def nvml_reading(self) -> tuple[Nvml | None, list[int] | None]:
        self.stage("nvml")
        nvml, status, why = open_nvml()
        self.r.metric("nvml_status", status)
        if nvml is None:
            self.r.note(f"nvml: {why}")
            return None, None
        self.sources.append("nvml")
        reading: NvmlReading = read_static(nvml)
        if nvml.wedged:
            self.r.note(f"nvml: stopped asking after a probe hung ({nvml.wedged})")
        for key, value in reading.values.items():
            self.r.metric(key, value, 1)
        for key in reading.na:
            self.r.unmeasurable(key)
        self.gated.update(reading.gated)
        return nvml, replay_counters(nvml)

    def amd_ras(self) -> None:
        """amdgpu RAS counters; NVML's ECC, when it answered, wins (first vendor wins)."""
        self.stage("amdgpu-ras")
        ras = read_ras(self.ctx.paths.sysfs)
        if not ras.gpus:
            return
        self.sources.append("amdgpu-ras")
        if "ecc_errors" in self.gated:
            self.r.metric("eccVendorConflict", "nvidia,amd: NVML's ECC kept")
            return
        self.r.metric("eccSource", "amdgpu-sysfs")
        self.r.metric("devicesVisible", ras.gpus)
        if ras.unreadable:
            self.r.metric("amdRasUnreadableFiles", ",".join(ras.unreadable))
            return  # a total over the counters that answered would understate
        self.r.metric("eccMode", "enabled")
        self.r.metric("ecc_errors", ras.uncorrectable)
        self.r.metric("eccDbeTotal", ras.uncorrectable)
        self.r.metric("eccSbeTotal", ras.correctable)
        self.gated["ecc_errors"] = ras.uncorrectable

    def check(self) -> Outcome:
        ctx, r = self.ctx, self.r
        deadline = Deadline(OWN_DEADLINE_S)
        window = window_seconds(ctx)
        started = time.monotonic()
        r.metric("host_health_version", HOST_HEALTH_VERSION)
        self.stage("start")
        nvml, replays_before = self.nvml_reading()
        self.amd_ras()

        self.stage("kernel-log")
        log, why = open_kernel_log(ctx.paths.kmsg, ctx.paths.kern_logs)
        before = None
        if log is None:
            r.metric("xid_source", "none")
            r.metric("xid_source_detail", why)
        else:
            r.metric("xid_source", log.source)
            before = log.drain(count_boots=log.source == "kernlog")
            self.sources.append("kernel-log")
            if not before.dropped:  # printed now: a runner killed in the window keeps them
                r.metric("xid_preexisting", before.xids)
                r.metric("kernel_hw_errors_preexisting", before.hw_errors)

        self.stage("pcie-aer")
        aer = read_aer(ctx.paths.sysfs)
        r.metric("aer_status", aer.status)
        if aer.status == "ok":
            self.sources.append("pcie-aer")
            for kind, total in aer.totals.items():
                r.metric(f"pcie_aer_{kind}", total)

        self.stage("nic")
        nics_before, ib_before = read_nics(ctx.paths.sysfs), read_ib(ctx.paths.sysfs)
        if nics_before.names:
            self.sources.append("nic")
            r.metric("nic_status", "ok")
            r.metric("nic_count", len(nics_before.names))
            totals = list(nics_before.carrier_down.values())
            if all(t is not None for t in totals):
                r.metric("nic_link_down_total", sum(t for t in totals if t is not None))
        else:
            r.metric("nic_status", "absent")
            r.metric("nic_absent_reason", nic_absent_reason(ctx.paths.proc))
        if ib_before.present:
            self.sources.append("infiniband")
            r.metric("ib_ports", len(ib_before.ports))
            r.metric("ib_ports_active", sum(1 for p in ib_before.ports if p.active))
        if ib_before.ports and any(p.counters for p in ib_before.ports):
            pegged = saturated(ib_before.ports)
            r.metric("ib_counter_status", "ok")
            r.metric("ib_counters_saturated", len(pegged))
            if pegged:
                r.metric("ib_saturated_counters", ",".join(pegged))
        else:
            r.metric("ib_counter_status", "absent")

        if not self.sources:
            return errored(f"nothing could be read: no NVML, no kernel log ({why}), no AER, no NIC")

        self.stage("window")
        # The window ends in time for the second reads to finish before the deadline.
        time.sleep(max(0.0, min(float(window), deadline.remaining() - READ_MARGIN_S)))

        self.stage("window-end")
        if log is not None and before is not None:
            during = log.drain()
            log.close()
            if before.dropped or during.dropped:
                r.metric("xid_log_dropped", 1)  # and no counts: a partial zero is no zero
            else:
                r.metric("xid_count", during.xids)
                r.metric("kernel_hw_errors", during.hw_errors)
                self.gated["xid_count"] = during.xids
        if nics_before.names or ib_before.ports:
            nics_after, ib_after = read_nics(ctx.paths.sysfs), read_ib(ctx.paths.sysfs)
            if nics_before.names:
                r.metric("nic_up", nics_after.up)
            events = link_down_events(nics_before, nics_after, ib_before, ib_after)
            r.metric("nic_link_down", events)
            if events is not None:
                self.gated["nic_link_down"] = events
        if nvml is not None and replays_before is not None:
            replays_after = replay_counters(nvml)
            if replays_after is not None and len(replays_after) == len(replays_before):
                deltas = [a - b for a, b in zip(replays_after, replays_before, strict=True)]
                if all(d >= 0 for d in deltas):
                    r.metric("pcie_replay_count", sum(deltas))
                    r.metric("pcie_replay_source", "nvml")
                    self.gated["pcie_replay_count"] = sum(deltas)

        elapsed = time.monotonic() - started
        r.metric("observation_window_s", float(window), 1)
        r.metric("elapsed_s", elapsed, 1)
        bad = {k: v for k, v in self.gated.items() if v > 0}
        r.metric("node_ready", not bad)
        self.stage("done")
        if bad:
            return failed(" ".join(f"{k}={v}" for k, v in bad.items()))
        return passed()


def _on_deadline(signum: int, frame: FrameType | None) -> None:
    raise Stop(errored(f"host-health's own {OWN_DEADLINE_S:g} s deadline passed"))


def check(ctx: Context) -> Outcome:
    run = _Run(ctx)
    # The deadline is enforced, not just planned for: a sysfs or log read that blocks on a
    # wedged device still ends in a marker (and the breadcrumbs say where it stuck).
    armed = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGALRM, _on_deadline) if armed else None
    if armed:
        signal.setitimer(signal.ITIMER_REAL, OWN_DEADLINE_S)
    try:
        return run.check()
    except Stop:
        raise  # a decided ending (a bad variable, SIGTERM), not a crash
    except Exception as exc:  # a recovered panic: its summary and trace, then Error
        ctx.report.metric("host_health_panic", f"{type(exc).__name__}: {exc}")
        print_trace(ctx.report, exc)
        return errored(f"host-health crashed: {type(exc).__name__}: {exc}")
    finally:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


if __name__ == "__main__":
    main(KIND, check, words=WORDS)
