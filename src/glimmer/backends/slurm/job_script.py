"""The batch script of one execution, and the ``sbatch`` options that pin it to its node.

An execution on Slurm is one batch job. Its script (``<name>.sh`` beside the execution's
record, on a filesystem the nodes share) runs the runner exactly as the local substrate does —
the test's command when it names one, else ``<runner command> <kind>``, the test's args after
either — in an environment holding only the spec's variables plus PATH and HOME, and records
what Slurm cannot tell us:

* ``<name>.exit``: the RUNNER's exit code, written atomically when it ends (a rename, so a
  reader sees no file or the whole number). The contract's exit code is the runner's; Slurm's
  own ExitCode is the script's, and the script never gets to report anything when it is
  cancelled, timed out or its node fails.
* ``<name>.deadline``: present when the script's own watchdog stopped the runner at the spec's
  deadline (SIGTERM, then SIGKILL after the stop grace). That deadline is the engine's active
  deadline — the duration + 120 s, + the 300 s rendezvous grace of §2.9 at Group scope, since
  ranks wait for peers not created yet. Slurm's ``--time`` counts whole minutes, so it is only
  the backstop, set a little beyond the watchdog.
* ``<name>.ready``: present once the test's readiness probe passed ON THE NODE (an ``exec``
  command, run in the runner's environment, or a ``tcpSocket`` connect). Without a probe the
  script writes nothing: ready is running, as a pod without a readiness probe is Ready once its
  containers run. A probe is tried until it passes or the runner ends; once passed it is not
  taken back (Kubernetes keeps probing; a burn-in's rendezvous needs only the first pass).

Every value that reaches the script is quoted for bash (:func:`shlex.quote`: single quotes,
so spaces, quotes, ``$`` and newlines arrive verbatim), and the runner is started through
``env -i`` with its variables as arguments, so a name that is no shell identifier still reaches
it. Standard library only; nothing here calls Slurm.
"""

from __future__ import annotations

import dataclasses
import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from glimmer.backends.slurm.job_files import JobFiles

STOP_GRACE = 5  # seconds between the watchdog's SIGTERM and its SIGKILL
TIME_SLACK = 30  # seconds Slurm's --time gives beyond the watchdog, before it steps in
PROBE_PERIOD = 10  # Kubernetes' defaults for a probe that does not say
PROBE_TIMEOUT = 1
PROBE_KINDS = ("exec", "tcpSocket")


class ProbeUnsupported(ValueError):
    """The test's readiness probe is of a kind the slurm substrate does not run."""


@dataclass(frozen=True)
class Probe:
    """A readiness probe as the script runs it: ``command`` (exec) or ``host``/``port``
    (tcpSocket, host "" meaning this node's own hostname)."""

    command: tuple[str, ...] = ()
    host: str = ""
    port: int = 0
    initial_delay: int = 0
    period: int = PROBE_PERIOD
    timeout: int = PROBE_TIMEOUT


def probe_of(passthrough: Mapping[str, Any] | None) -> Probe | None:
    """The probe a test's ``runner.readinessProbe`` asks for (None: no probe). Raises
    :class:`ProbeUnsupported` for httpGet, grpc, a named port, or a probe of no known kind."""
    if not passthrough:
        return None
    timing = Probe(
        initial_delay=_seconds(passthrough, "initialDelaySeconds", 0),
        period=_seconds(passthrough, "periodSeconds", PROBE_PERIOD) or PROBE_PERIOD,
        timeout=_seconds(passthrough, "timeoutSeconds", PROBE_TIMEOUT) or PROBE_TIMEOUT,
    )
    if "exec" in passthrough:
        command = (passthrough.get("exec") or {}).get("command") or []
        if not command or not all(isinstance(word, str) for word in command):
            raise ProbeUnsupported("readinessProbe.exec needs a command (a list of strings)")
        return dataclasses.replace(timing, command=tuple(command))
    if "tcpSocket" in passthrough:
        socket = passthrough.get("tcpSocket") or {}
        port = socket.get("port")
        if isinstance(port, str) and port.isdigit():
            port = int(port)
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            raise ProbeUnsupported(
                f"readinessProbe.tcpSocket.port must be a port number on Slurm (no container "
                f"ports to name), not {port!r}"
            )
        return dataclasses.replace(timing, host=str(socket.get("host") or ""), port=port)
    kinds = ", ".join(sorted(k for k in passthrough if not k.endswith("Seconds")))
    raise ProbeUnsupported(
        f"readinessProbe of kind {kinds or '(none)'} is not run on Slurm; use "
        f"{' or '.join(PROBE_KINDS)}"
    )


def _seconds(probe: Mapping[str, Any], key: str, default: int) -> int:
    value = probe.get(key, default)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


@dataclass(frozen=True)
class Job:
    """Everything the script and its ``sbatch`` options are made of."""

    name: str
    node: str
    run_uid: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    deadline_seconds: int
    files: JobFiles
    partition: str | None = None
    reservation: str | None = None
    gpus: int = 0
    probe: Probe | None = None
    header: str = ""


def time_limit_minutes(deadline_seconds: int) -> int:
    """Slurm's ``--time`` for a deadline: whole minutes, past the watchdog's kill."""
    return max(1, math.ceil((deadline_seconds + STOP_GRACE + TIME_SLACK) / 60))


def sbatch_argv(job: Job) -> list[str]:
    """``sbatch`` and its options for ``job`` (the script's path last)."""
    argv = [
        "sbatch",
        "--parsable",
        f"--job-name={job.name}",
        f"--nodelist={job.node}",
        "--nodes=1",
        "--ntasks=1",
        f"--comment={job.run_uid}",
        f"--output={job.files.log}",
        f"--time={time_limit_minutes(job.deadline_seconds)}",
        "--no-requeue",
        "--export=NONE",
        f"--chdir={job.files.record.parent}",
    ]
    if job.partition:
        argv.append(f"--partition={job.partition}")
    if job.reservation:
        argv.append(f"--reservation={job.reservation}")
    if job.gpus > 0:
        argv.append(f"--gres=gpu:{job.gpus}")
    argv.append(str(job.files.script))
    return argv


def _q(value: object) -> str:
    return shlex.quote(str(value))


def _array(name: str, words: Sequence[str]) -> str:
    if not words:
        return f"{name}=()"
    return "\n".join([f"{name}=(", *(f"  {_q(w)}" for w in words), ")"])


def _probe_lines(probe: Probe | None) -> list[str]:
    if probe is None:
        return ["# No readiness probe: ready is running (nothing to write)."]
    if probe.command:
        check = [
            _array("probe", probe.command),
            'probe_once() { timeout "$probe_timeout" env -i "${runner_env[@]}" "${probe[@]}"; }',
        ]
    else:
        host = _q(probe.host) if probe.host else '"$(hostname)"'
        check = [
            f"probe_host={host}",
            f"probe_port={probe.port}",
            # bash's own /dev/tcp: nothing to install on the nodes.
            "probe_once() {",
            '  timeout "$probe_timeout" bash -c \': < "/dev/tcp/$0/$1"\' '
            '"$probe_host" "$probe_port" 2>/dev/null',
            "}",
        ]
    return [
        "# Readiness: the test's probe, run here on the node until it passes once.",
        f"probe_timeout={probe.timeout}",
        *check,
        "(",
        f"  sleep {probe.initial_delay}",
        '  while kill -0 "$runner" 2>/dev/null; do',
        '    if probe_once; then : > "$ready_file"; exit 0; fi',
        f"    sleep {probe.period}",
        "  done",
        ") </dev/null >/dev/null 2>&1 &",
        "prober=$!",
    ]


def render(job: Job) -> str:
    """The batch script of ``job``."""
    files = job.files
    lines = [
        "#!/bin/bash",
        f"# glimmer execution {job.name} on {job.node}{job.header}.",
        "# Written by glimmer's slurm substrate: <name>.exit receives the runner's exit code.",
        "set -u",
        f"exit_file={_q(files.exit)}",
        f"ready_file={_q(files.ready)}",
        f"deadline_file={_q(files.deadline)}",
        f"work={_q(files.work)}",
        f"deadline={job.deadline_seconds}",
        f"grace={STOP_GRACE}",
        _array("runner_env", [f"{k}={v}" for k, v in job.env]),
        _array("runner_argv", job.argv),
        "",
        "record_exit() {  # atomically: a reader sees no file or the whole code",
        '  printf \'%s\\n\' "$1" > "$exit_file.tmp.$$" && mv -f "$exit_file.tmp.$$" "$exit_file"',
        "}",
        'rm -f "$exit_file" "$ready_file" "$deadline_file"',
        'mkdir -p "$work" && cd "$work" || { echo "glimmer: cannot enter $work" >&2; '
        "record_exit 127; exit 127; }",
        "",
        "# A session of its own, so a stop reaches what the runner started too.",
        'setsid --wait env -i "${runner_env[@]}" "${runner_argv[@]}" &',
        "runner=$!",
        "",
        "# The deadline, to the second (Slurm's --time counts minutes and is only the backstop).",
        "# Its output goes nowhere: a sleeper outliving it must not hold the job's output open.",
        "(",
        "  nap=",
        "  trap 'kill $nap 2>/dev/null; exit 0' TERM",
        '  sleep "$deadline" & nap=$!',
        '  wait "$nap"',
        '  : > "$deadline_file"',
        '  kill -TERM -- -"$runner" "$runner" 2>/dev/null',
        '  sleep "$grace" & nap=$!',
        '  wait "$nap"',
        '  kill -KILL -- -"$runner" "$runner" 2>/dev/null',
        ") </dev/null >/dev/null 2>&1 &",
        "watchdog=$!",
        "prober=",
        *_probe_lines(job.probe),
        "",
        'wait "$runner"',
        "rc=$?",
        'kill -TERM "$watchdog" $prober 2>/dev/null',
        'record_exit "$rc"',
        'exit "$rc"',
        "",
    ]
    return "\n".join(lines)
