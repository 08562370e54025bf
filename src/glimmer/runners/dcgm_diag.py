"""dcgm-diag (§9.9): runs ``dcgmi diag -r <level|tests> -j`` against the site's DCGM and maps
the document to a verdict (:mod:`glimmer.runners.dcgm_verdict`).

Level: ``BURNIN_DCGM_LEVEL`` (1-4 or short/medium/long/xlong; honoured as given, never
downgraded) or the deepest level whose budget (60 s, 120 s, 900 s, 3600 s) fits
``BURNIN_DURATION_SECONDS`` (default 600), floor 1. ``BURNIN_DCGM_TESTS`` names tests instead
(exclusive with a level). ``BURNIN_DCGM_ALLOW`` adds ``<name>.is_allowed=true`` parameters,
``BURNIN_DCGM_PARAMS`` raw ``-p`` parameters (a key set by both is an error).
``BURNIN_DCGM_TIMEOUT_SECONDS`` bounds dcgmi (default duration − 15 s). Unless
``BURNIN_DCGM_HOSTENGINE_ADDRESS`` is given, a loopback-bound ``nv-hostengine`` is started on
port 5555 (or one already listening there is used). Fields are sampled every 5 s.

A missing ``dcgmi`` or ``nv-hostengine`` is Error naming it, never Fail.
"""

from __future__ import annotations

import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass

from glimmer.runners.dcgm_fields import FIELDS, Sample, fold, parse_dmon
from glimmer.runners.dcgm_verdict import decide, read_document
from glimmer.runners.outcome import ConfigError, Outcome, Stop, errored
from glimmer.runners.program import Context, main
from glimmer.runners.settings import Settings
from glimmer.runners.tools import find_tool, kill_group, run_tool

KIND = "dcgm-diag"
LEVEL = "BURNIN_DCGM_LEVEL"
TESTS = "BURNIN_DCGM_TESTS"
ALLOW = "BURNIN_DCGM_ALLOW"
PARAMS = "BURNIN_DCGM_PARAMS"
TIMEOUT = "BURNIN_DCGM_TIMEOUT_SECONDS"
HOSTENGINE = "BURNIN_DCGM_HOSTENGINE_ADDRESS"
LEVEL_BUDGET_S = {1: 60, 2: 120, 3: 900, 4: 3600}
LEVEL_NAMES = {"short": 1, "medium": 2, "long": 3, "xlong": 4}
DEFAULT_DURATION_S = 600
PORT = 5555
SAMPLE_INTERVAL_S = 5.0
# The sample mounts the site's DCGM here (§9.9).
DCGM_DIRS = ("/usr/local/dcgm/bin", "/usr/bin", "/usr/sbin")
DCGM_PACKAGE = "datacenter-gpu-manager-4-core"
DCGM_SOURCE = "NVIDIA CUDA repository"
DCGM_HINT = "or mount the site's DCGM at /usr/local/dcgm"


@dataclass(frozen=True)
class Plan:
    run: str  # the -r argument
    level: int | None
    level_source: str  # env | derived | tests
    params: str  # the -p argument, "" for none
    timeout_s: int
    duration_s: int


def level_for(duration_s: int) -> int:
    """The deepest level whose budget fits the duration, floor 1."""
    fitting = [lv for lv, budget in LEVEL_BUDGET_S.items() if budget <= duration_s]
    return max(fitting) if fitting else 1


def _params(settings: Settings) -> str:
    allowed = [f"{name}.is_allowed=true" for name in settings.names(ALLOW)]
    raw = [p.strip() for p in (settings.raw(PARAMS) or "").split(";") if p.strip()]
    keys = {p.split("=", 1)[0].strip() for p in allowed}
    for item in raw:
        if "=" not in item:
            raise ConfigError(PARAMS, f"{item!r} is not key=value")
        if item.split("=", 1)[0].strip() in keys:
            raise ConfigError(PARAMS, f"{item.split('=', 1)[0]!r} is also set by {ALLOW}")
    return ";".join(allowed + raw)


def read_plan(settings: Settings) -> Plan:
    duration = settings.duration(DEFAULT_DURATION_S)
    raw_level, tests = settings.raw(LEVEL), settings.names(TESTS)
    if raw_level and tests:
        raise ConfigError(TESTS, f"names tests while {LEVEL} sets a level: set one of them")
    level: int | None
    if tests:
        run, level, source = ",".join(tests), None, "tests"
    elif raw_level:
        level = LEVEL_NAMES.get(raw_level.lower())
        if level is None and raw_level.isdigit():
            level = int(raw_level)
        if level not in LEVEL_BUDGET_S:
            raise ConfigError(LEVEL, f"{raw_level!r} is not 1-4 or short|medium|long|xlong")
        run, source = str(level), "env"
    else:
        level = level_for(duration)
        run, source = str(level), "derived"
    timeout = settings.integer(TIMEOUT, max(duration - 15, 1), minimum=1)
    return Plan(run, level, source, _params(settings), timeout, duration)


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def start_hostengine(deadline_s: float = 15.0) -> subprocess.Popen[bytes] | None:
    """A loopback-bound nv-hostengine; None when one already listens on the port."""
    if _listening(PORT):
        return None
    path = find_tool("nv-hostengine", DCGM_PACKAGE, DCGM_DIRS, DCGM_SOURCE, DCGM_HINT)
    # Its words go to a file, not a pipe nobody drains (a full pipe would stall it).
    with tempfile.TemporaryFile("w+") as said:
        proc = subprocess.Popen(
            [path, "-n", "-b", "127.0.0.1", "-p", str(PORT)],
            stdout=said,
            stderr=said,
            start_new_session=True,
        )
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            if _listening(PORT):
                return proc
            if proc.poll() is not None:
                said.seek(0)
                words = " ".join(said.read(300).split())
                raise Stop(errored(f"nv-hostengine exited {proc.returncode}: {words}"))
            time.sleep(0.2)
    kill_group(proc)
    raise Stop(errored(f"nv-hostengine did not listen on 127.0.0.1:{PORT} in {deadline_s:g} s"))


class Sampler:
    """``dcgmi dmon`` samples every 5 s on a thread while the diagnostic runs."""

    def __init__(self, dcgmi: str, host: str) -> None:
        self.argv = [dcgmi, "dmon", "--host", host, "-e", ",".join(map(str, FIELDS)), "-c", "1"]
        self.samples: list[Sample] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def sample(self) -> None:
        result = run_tool(self.argv, timeout=8.0)
        if result.exit_code == 0:
            parsed = parse_dmon(result.stdout)
            if parsed:
                self.samples.append(parsed)

    def _loop(self) -> None:
        while not self._stop.wait(SAMPLE_INTERVAL_S):
            self.sample()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10.0)


def diagnose(ctx: Context) -> Outcome:
    plan = read_plan(ctx.settings)
    dcgmi = find_tool("dcgmi", DCGM_PACKAGE, DCGM_DIRS, DCGM_SOURCE, DCGM_HINT)
    host = ctx.settings.raw(HOSTENGINE)
    engine = None
    if host is None:
        engine = start_hostengine()
        host = f"127.0.0.1:{PORT}"
    try:
        return _run(ctx, plan, dcgmi, host)
    finally:
        if engine is not None:
            kill_group(engine)
            engine.wait()


def _run(ctx: Context, plan: Plan, dcgmi: str, host: str) -> Outcome:
    r = ctx.report
    if plan.level is not None:
        r.metric("diagLevel", plan.level)
        if plan.level_source == "env" and LEVEL_BUDGET_S[plan.level] > plan.duration_s:
            r.note(f"level {plan.level} needs about {LEVEL_BUDGET_S[plan.level]} s: kept as asked")
    r.metric("diagLevelSource", plan.level_source)
    r.metric("diagParams", plan.params or "none")
    r.metric("diagTimeoutS", plan.timeout_s)
    argv = [dcgmi, "diag", "--host", host, "-r", plan.run, "-j"]
    if plan.params:
        argv += ["-p", plan.params]
    sampler = Sampler(dcgmi, host)
    sampler.sample()
    sampler.start()
    started = time.monotonic()
    try:
        result = run_tool(argv, timeout=plan.timeout_s)
    finally:
        sampler.stop()
    elapsed = time.monotonic() - started
    sampler.sample()
    document = read_document(result.stdout)
    subs = document.subtests
    r.metric("diagTests", plan.run if plan.level is None else ",".join(s.name for s in subs))
    r.metric("dcgmVersion", document.dcgm_version)
    r.metric("driverVersion", document.driver_version)
    r.metric("devicesVisible", document.devices)
    r.metric("dcgmiExitCode", result.exit_code)
    r.metric("testsRun", sum(1 for s in subs if s.status in ("pass", "warn", "fail")))
    r.metric("tests_failed", sum(1 for s in subs if s.status == "fail"))
    r.metric("testsWarned", sum(1 for s in subs if s.status == "warn"))
    r.metric("testsNotRun", sum(1 for s in subs if s.status == "not_run"))
    r.metric("testsSkipped", sum(1 for s in subs if s.status == "skip"))
    fields = fold(sampler.samples)
    r.metric("sampleCount", len(sampler.samples))
    for key, value in fields.values.items():
        r.metric(key, value)
    for key in fields.na:
        r.unmeasurable(key)
    r.metric("counterBaselineReset", fields.baseline_reset)
    r.metric("elapsedS", elapsed, 1)
    return decide(document, result.stdout + "\n" + result.stderr, result.exit_code,
                  result.timed_out)  # fmt: skip


if __name__ == "__main__":
    main(KIND, diagnose)
