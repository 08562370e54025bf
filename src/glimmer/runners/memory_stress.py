"""memory-stress (§9.7): host DRAM under stressapptest (Debian package ``stressapptest``).

The region is sized from the cgroup limit and ``MemAvailable`` (:mod:`memory_stress_sizing`),
stressapptest runs for the duration, and its log is judged in §9.7's order
(:mod:`memory_stress_output`): corruption Fails even in a killed run; anything short of a
completed clean PASS is an Error whose counters are left out.

Configuration (all optional): ``BURNIN_DURATION_SECONDS`` (600), ``BURNIN_MEMORY_MB`` (an
explicit region in MiB: no auto-sizing and no floor), ``BURNIN_MEMORY_FRACTION`` (0.70),
``BURNIN_MEMORY_MIN_MB`` (256: the smallest region worth calling a memory test),
``BURNIN_MEMORY_THREADS`` (usable CPUs clamped by the quota), ``BURNIN_MEMORY_EXTRA_ARGS``
(appended to stressapptest's command line as given; ``--force_errors`` makes a real Fail). A
malformed value is an Error.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import threading
import time

from glimmer.contract.vocab import RunnerVerdict
from glimmer.runners.memory_stress_output import judge, read_log
from glimmer.runners.memory_stress_sizing import (
    MIB,
    Sizing,
    cgroup_cpu_quota,
    read_sizing,
    threads_for,
    usable_cpus,
)
from glimmer.runners.outcome import (
    ConfigError,
    Outcome,
    Stop,
    errored,
    failed,
    passed,
    skipped,
)
from glimmer.runners.program import Context, main
from glimmer.runners.tools import find_tool

KIND = "memory-stress"
TOOL = "stressapptest"
PACKAGE = "stressapptest"
DEFAULT_DURATION_S = 600
DEFAULT_FRACTION = 0.70
DEFAULT_MIN_MB = 256
PROGRESS_EVERY_S = 60.0
# The runner's own cap on the tool (duration + this): ending a wedged run itself is what lets
# the evidence reach stdout before the dispatcher's kill at duration + 120 s.
OVERRUN_S = 60.0
# After SIGTERM stressapptest prints its summary ("User exiting early") within a second or two.
TERM_GRACE_S = 10.0


def sat_seconds(duration: int) -> int:
    """stressapptest's ``-s``: its clock starts only after the region is allocated and
    filled, so it gets a tenth less (at most 60 s less) to end inside the duration."""
    margin = min(60.0, duration * 0.1)
    return max(1, int(duration - margin))


def _fraction(ctx: Context) -> float:
    name = "BURNIN_MEMORY_FRACTION"
    raw = ctx.settings.raw(name)
    if raw is None:
        return DEFAULT_FRACTION
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(name, f"{raw!r} is not a number") from None
    # "70" meaning 70 % must fail at the first run, not test 70 times the budget.
    if not 0.0 < value <= 1.0:
        raise ConfigError(name, f"{raw} is not a fraction in (0, 1]")
    return value


class _Tool:
    """stressapptest running in its own process group, its output collected by a thread."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            start_new_session=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)

    def stop(self) -> None:
        """SIGTERM (stressapptest then prints what it found), SIGKILL after the grace."""
        if self.proc.poll() is None:
            self.signal(signal.SIGTERM)
            try:
                self.proc.wait(TERM_GRACE_S)
            except subprocess.TimeoutExpired:
                self.signal(signal.SIGKILL)
                self.proc.wait()
        self._reader.join(5.0)

    def text(self) -> str:
        return "".join(self.lines)


def _region(ctx: Context) -> tuple[int, Sizing | None]:
    """MiB to test, and the automatic sizing (None when BURNIN_MEMORY_MB set it)."""
    explicit = ctx.settings.integer("BURNIN_MEMORY_MB", 0, minimum=0)
    fraction = _fraction(ctx)
    sizing = read_sizing(ctx.paths.proc, ctx.paths.sysfs, fraction)
    if explicit:
        return explicit, sizing
    if sizing is None:
        raise Stop(errored(f"cannot read MemAvailable from {ctx.paths.proc / 'meminfo'}"))
    floor = ctx.settings.integer("BURNIN_MEMORY_MIN_MB", DEFAULT_MIN_MB, minimum=1)
    if sizing.region_mib < floor:
        if sizing.cgroup_limit is not None:
            raise Stop(
                errored(
                    f"the cgroup memory limit ({sizing.cgroup_limit // MIB} MiB) leaves a "
                    f"{sizing.region_mib} MiB region, under the {floor} MiB floor: raise "
                    "spec.resources.limits.memory or set BURNIN_MEMORY_MB"
                )
            )
        available = (sizing.mem_available or 0) // MIB
        raise Stop(
            skipped(
                f"this machine has {available} MiB available: {sizing.region_mib} MiB is "
                f"under the {floor} MiB floor of a memory test"
            )
        )
    return sizing.region_mib, sizing


def run_memory_stress(ctx: Context) -> Outcome:
    report = ctx.report
    duration = ctx.settings.duration(DEFAULT_DURATION_S)
    quota = cgroup_cpu_quota(ctx.paths.proc, ctx.paths.sysfs)
    threads = ctx.settings.integer(
        "BURNIN_MEMORY_THREADS", threads_for(usable_cpus(), quota), minimum=1
    )
    region_mib, sizing = _region(ctx)
    binary = find_tool(TOOL, PACKAGE)
    report.metric("durationRequestedS", duration)
    report.metric("threads", threads)
    report.metric("tool", TOOL)
    total = sizing.mem_total if sizing else None
    if total:
        report.metric("memoryCoveredPct", 100.0 * region_mib * MIB / total, 1)
    if sizing is not None:
        limit = f"{sizing.cgroup_limit // MIB} MiB" if sizing.cgroup_limit else "none"
        report.note(
            f"sizing: {region_mib} MiB region, {threads} copy threads (MemAvailable "
            f"{(sizing.mem_available or 0) // MIB} MiB, cgroup limit {limit})"
        )
    argv = [binary, "-s", str(sat_seconds(duration)), "-M", str(region_mib), "-m", str(threads)]
    try:
        argv += shlex.split(ctx.settings.raw("BURNIN_MEMORY_EXTRA_ARGS") or "")
    except ValueError as exc:
        raise ConfigError("BURNIN_MEMORY_EXTRA_ARGS", str(exc)) from None
    report.note("running: " + " ".join(argv[1:]))
    started = time.monotonic()
    tool = _Tool(argv)
    interrupted = ""
    try:
        next_progress = PROGRESS_EVERY_S
        while tool.proc.poll() is None:
            elapsed = time.monotonic() - started
            if elapsed > duration + OVERRUN_S:
                interrupted = (
                    f"stressapptest overran its {duration} s duration by {OVERRUN_S:.0f} s"
                )
                break
            if elapsed >= next_progress:
                report.metric("elapsed_s", int(elapsed))  # a truncated log stays a snapshot
                next_progress += PROGRESS_EVERY_S
            with contextlib.suppress(subprocess.TimeoutExpired):
                tool.proc.wait(1.0)
    except Stop as stop:  # SIGTERM: the tool's findings so far still decide a Fail
        interrupted = stop.outcome.reason
    finally:
        tool.stop()
    elapsed = time.monotonic() - started
    log = read_log(tool.text())
    verdict = judge(log, tool.proc.returncode, interrupted)
    if log.revision:
        report.metric("toolVersion", log.revision)
    if verdict.counters and log.incidents is not None:
        report.metric("hardware_incidents", log.incidents)
    if verdict.counters or verdict.verdict is RunnerVerdict.FAIL:
        # Lines the tool logged are observations even in a run that was stopped.
        report.metric("miscompares", log.miscompares)
        report.metric("sdc_count", len(log.hardware_errors))
    if verdict.counters:
        report.metric("read_bandwidth_mbs", log.read_mbs())
        report.metric("write_bandwidth_mbs", log.write_mbs())
        report.metric("satRunS", log.run_seconds, 1)
    report.metric("satStatus", verdict.sat_status)
    report.metric("elapsed_s", elapsed, 1)
    for line in log.hardware_errors[:5]:
        report.note(f"stressapptest| {line}")
    for line in log.process_errors[:5]:
        report.note(f"stressapptest| Process Error: {line}")
    if verdict.verdict is RunnerVerdict.FAIL:
        return failed(verdict.reason)
    if verdict.verdict is RunnerVerdict.ERROR:
        return errored(verdict.reason)
    return passed(f"{region_mib} MiB clean for {log.run_seconds or 0:.0f} s")


if __name__ == "__main__":
    main(KIND, run_memory_stress)
