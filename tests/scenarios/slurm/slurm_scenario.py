"""What the issue-15 scenarios share: ``glimmer run --backend slurm`` as a real process against
the real cluster (tests/slurm_cluster.py), short profiles of real runner kinds, and a sampler
of ``sinfo`` while a run is under way.

The engine is a separate process so a test can SIGKILL it and start it again, exactly as an
operator's shell would; its environment is ours plus the cluster's (``SLURM_CONF``, the client
wrappers first on ``PATH``). The runners on the nodes are this venv's ``glimmer-runner``: the
nodes share this filesystem, as a site's nodes share the install path. Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from glimmer.api.run import BurnInRun
from tests.slurm_cluster import SlurmCluster

BIN = Path(sys.executable).parent
GLIMMER = BIN / "glimmer"
RUNNER = BIN / "glimmer-runner"
API = "burnin.glimmer.ai/v1alpha1"
STAMP_PREFIX = "glimmer:v1"
# A whole scenario run of short tests ends well within this; a run that does not is a failure.
RUN_TIMEOUT_S = 150.0


def burnin_test(name: str, kind: str, duration: int, scope: str = "Node", **spec: Any) -> dict:
    env = spec.pop("env", {})
    body: dict[str, Any] = {"kind": kind, "scope": scope, "durationSeconds": duration, **spec}
    if env:
        body["runner"] = {"env": [{"name": k, "value": str(v)} for k, v in env.items()]}
    return {"apiVersion": API, "kind": "BurnInTest", "metadata": {"name": name}, "spec": body}


def profile_file(path: Path, name: str, tests: Sequence[dict]) -> Path:
    """A profile of ``tests`` (BurnInTest documents) written with them to ``path``."""
    profile = {
        "apiVersion": API,
        "kind": "BurnInProfile",
        "metadata": {"name": name},
        "spec": {"tests": [{"testRef": t["metadata"]["name"]} for t in tests]},
    }
    path.write_text(yaml.safe_dump_all([*tests, profile]))
    return path


def host_health(name: str = "health", duration: int = 2) -> dict:
    # hostNetwork and /dev/kmsg are the defaults of a process on a node: nothing to mount.
    gate = {"metric": "xidEvents", "comparison": "Equal", "value": "0"}
    return burnin_test(name, "host-health", duration, thresholds=[gate])


def memory_stress(name: str = "memory", duration: int = 5, mib: int = 32) -> dict:
    gate = {"metric": "memoryErrors", "comparison": "Equal", "value": "0"}
    return burnin_test(name, "memory-stress", duration, env={"BURNIN_MEMORY_MB": mib},
                    thresholds=[gate])  # fmt: skip


def nccl_group(name: str = "allreduce", duration: int = 8, **env: Any) -> dict:
    """The nccl kind in test mode: gloo on cpu tensors, rank 0 serving the rendezvous at
    ``BURNIN_ROOT_HOST``; sizes large enough that the wire figures are the collective's."""
    settings = {
        "BURNIN_TEST_DEVICE": "cpu",
        "BURNIN_NCCL_SIZES": "1M,8M",
        "BURNIN_NCCL_WARMUP": "1",
        "BURNIN_NCCL_ITERS": "4",
        "BURNIN_NCCL_MIN_MEMLOCK_MIB": "0",  # the submit host's limit travels with the job
        "BURNIN_NCCL_RENDEZVOUS_TIMEOUT_S": "60",
        **env,
    }
    gates = [
        {"metric": "miscompares", "comparison": "Equal", "value": "0"},
        {"metric": "busBandwidthGBs", "comparison": "GreaterThanOrEqual", "value": "0.01"},
    ]
    return burnin_test(name, "nccl", duration, scope="Group", env=settings, thresholds=gates)


def tcp_pair(name: str = "tcp", duration: int = 3) -> dict:
    # The nodes' fabric is eth0 (the bridge); mgmt0 holds the default route (§9.13's guard).
    env = {"TCP_BASELINE_INTERFACE": "eth0", "TCP_BASELINE_PEER_WAIT_SECONDS": "60"}
    gate = {"metric": "tcpThroughputGbps", "comparison": "GreaterThanOrEqual", "value": "0.01"}
    return burnin_test(name, "tcp-baseline", duration, scope="Pair", env=env, thresholds=[gate])


def run_argv(
    cluster: SlurmCluster, state: Path, files: Sequence[Path], nodes: Sequence[str], cap: int,
    *extra: str, runner: Path = RUNNER,
) -> list[str]:  # fmt: skip
    return [
        str(GLIMMER), "run", "--backend", "slurm",
        "--slurm-partition", cluster.partition, "--runner-path", str(runner),
        "--state-dir", str(state), "--nodes", ",".join(nodes), "--max-concurrent", str(cap),
        *(a for f in files for a in ("-f", str(f))), *extra,
    ]  # fmt: skip


def engine_env(cluster: SlurmCluster) -> dict[str, str]:
    return {**os.environ, **cluster.env}


@dataclass
class Ran:
    code: int
    stdout: str
    stderr: str

    @property
    def run(self) -> BurnInRun:
        return BurnInRun.model_validate(json.loads(self.stdout))

    def results(self) -> dict[tuple[str, tuple[str, ...]], Any]:
        """Every result by (test name, nodes)."""
        status = self.run.status
        assert status is not None, self.stderr
        return {(r.name, tuple(r.nodes or ())): r for r in status.results or []}


def glimmer_run(
    cluster: SlurmCluster, state: Path, files: Sequence[Path], nodes: Sequence[str], cap: int,
    *extra: str, timeout: float = RUN_TIMEOUT_S, runner: Path = RUNNER,
) -> Ran:  # fmt: skip
    """One ``glimmer run --backend slurm ... -o json`` to its end."""
    argv = run_argv(cluster, state, files, nodes, cap, "-o", "json", *extra, runner=runner)
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, env=engine_env(cluster), check=False
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def start_glimmer(
    cluster: SlurmCluster, state: Path, files: Sequence[Path], nodes: Sequence[str], cap: int,
    *extra: str, runner: Path = RUNNER,
) -> subprocess.Popen[str]:  # fmt: skip
    argv = run_argv(cluster, state, files, nodes, cap, "-o", "json", *extra, runner=runner)
    return subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=engine_env(cluster)
    )


def stamps(cluster: SlurmCluster) -> dict[str, str]:
    """Node -> drain reason, for the nodes whose reason is one of our stamps."""
    out = cluster.slurm.run("sinfo", "-h", "-N", "-o", "%N|%t|%E")
    found = {}
    for line in out.splitlines():
        node, _, rest = line.partition("|")
        _, _, reason = rest.partition("|")
        if reason.startswith(STAMP_PREFIX):
            found[node] = reason
    return found


@dataclass
class Sampler:
    """``sinfo`` sampled every ``every`` seconds on a thread while a run goes on."""

    cluster: SlurmCluster
    every: float = 0.2
    samples: list[dict[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append(stamps(self.cluster))
            except Exception as exc:  # reported by the test, never lost
                self.errors.append(str(exc))
            self._stop.wait(self.every)

    @contextmanager
    def running(self) -> Iterator[Sampler]:
        thread = threading.Thread(target=self._loop, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join(timeout=30)


def pending_on_drained(cluster: SlurmCluster) -> list[str]:
    """``id name node`` of every pending job whose requested node is drained with our stamp:
    Slurm will never start it while the drain holds."""
    drained = stamps(cluster)
    out = cluster.slurm.run("squeue", "-h", "-t", "pending", "-o", "%i|%j|%n")
    stuck = []
    for line in out.splitlines():
        job, name, node = [*line.split("|"), "", ""][:3]
        if node.strip() in drained:
            stuck.append(f"{job} {name} {node.strip()}")
    return stuck


def job_names(cluster: SlurmCluster, comment: str | None = None) -> list[str]:
    """Every job name Slurm still lists (ended ones too, for MinJobAge), optionally only those
    whose comment (the run uid) is ``comment``."""
    out = cluster.slurm.run("squeue", "-h", "-t", "all", "-o", "%j|%k")
    names = []
    for line in out.splitlines():
        name, _, k = line.partition("|")
        if comment is None or k.strip() == comment:
            names.append(name.strip())
    return names


def wait_for(what: str, check: Any, timeout: float, every: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        time.sleep(every)
