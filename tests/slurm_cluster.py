"""The real Slurm cluster every Slurm test runs against (issue 15), as a pytest fixture.

``tests/tools/slurm_cluster.sh up`` brings a cluster up; ``make test`` brings up one per pytest
worker (``/tmp/glimmer-slurm-gw0``, ``-gw1``: their own namespaces and subnets) before pytest
and takes them down after, so the two workers' Slurm tests run side by side. This module only
finds the worker's cluster, through ``$GLIMMER_SLURM_DIR/env`` (``GLIMMER_SLURM_DIR`` names
another). A cluster that is not up FAILS the test, saying how to bring it up, and so does a run
that is not root (network namespaces need root; CI runs as root): CI must never pass by
skipping.

A test draining n1 must never meet another running a wave over n1..n4 on the same cluster (a
run by hand with one cluster for several workers). So ``slurm_cluster`` (function scope) holds
an flock on a file in the cluster's directory for the test's whole duration, and on the way
out checks that every node is idle, no reservation exists and no job is queued or running;
when not, it restores that (cancels, resumes, deletes) and fails the test, naming what it
found. A fixture of wider scope uses ``slurm_cluster_session`` (no lock) and takes
``cluster.exclusive()`` itself.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from glimmer.backends.slurm.commands import Slurm, SlurmCommandError

DEFAULT_DIR = "/tmp/glimmer-slurm"
PARTITION = "debug"
# Bounds: a test holding the lock may legitimately run for minutes (a 20-kill restart test);
# a node resumed is idle again in about 1 s.
LOCK_WAIT_S = 900.0
IDLE_WAIT_S = 30.0
CALL_TIMEOUT_S = 30.0
SETTLE_WAIT_S = 10.0

HOW_TO_START = (
    "bring it up with `GLIMMER_SLURM_DIR=<dir> tests/tools/slurm_cluster.sh up` as root "
    "(make test brings up one per worker; GLIMMER_SLURM_PREFIX/GLIMMER_SLURM_NET keep "
    "several apart)"
)


def cluster_dir() -> Path:
    """``$GLIMMER_SLURM_DIR`` when set; else the cluster of this pytest worker (``make test``
    brings up one per worker: /tmp/glimmer-slurm-gw0, -gw1, ...; a run without xdist uses
    gw0's)."""
    given = os.environ.get("GLIMMER_SLURM_DIR")
    if given:
        return Path(given)
    return Path(f"{DEFAULT_DIR}-{os.environ.get('PYTEST_XDIST_WORKER', 'gw0')}")


def read_env(path: Path) -> dict[str, str]:
    """The ``export K=V`` lines of the cluster's env file, ``$PATH`` expanded from ours."""
    env: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line.startswith("export ") or "=" not in line:
            continue
        key, _, value = line[len("export ") :].partition("=")
        env[key] = value.replace("$PATH", os.environ.get("PATH", ""))
    return env


@dataclass(frozen=True)
class SlurmCluster:
    """The cluster: its directory, the environment its clients need, its nodes and partition."""

    root: Path
    env: dict[str, str]
    nodes: tuple[str, ...]
    partition: str = PARTITION
    slurm: Slurm = field(default_factory=Slurm)

    def node_state(self, name: str) -> str:
        """sinfo's compact state (``idle``, ``drain``, ``drng``, ``alloc``, ``idle*`` ...)."""
        return self.slurm.run("sinfo", "-h", "-N", "-n", name, "-o", "%t").strip()

    def states(self) -> dict[str, str]:
        out = self.slurm.run("sinfo", "-h", "-N", "-o", "%N %t")
        return dict(line.split(None, 1) for line in out.splitlines() if line.strip())

    def reason(self, name: str) -> str:
        """The node's drain reason as sinfo shows it (empty when none)."""
        out = self.slurm.run("sinfo", "-h", "-N", "-n", name, "-o", "%E").strip()
        return "" if out == "none" else out

    def wait_idle(self, name: str, timeout: float = IDLE_WAIT_S) -> None:
        deadline = time.monotonic() + timeout
        state = self.node_state(name)
        while state != "idle":
            if time.monotonic() > deadline:
                raise AssertionError(f"{name} not idle within {timeout:g} s: {state}")
            time.sleep(0.1)
            state = self.node_state(name)

    def drain(self, name: str, reason: str) -> None:
        self.slurm.run("scontrol", "update", f"nodename={name}", "state=drain", f"reason={reason}")

    def resume(self, name: str) -> None:
        self.slurm.run("scontrol", "update", f"nodename={name}", "state=resume")

    def active_jobs(self) -> list[str]:
        """``id name state node`` of every job not yet finished (pending, running, completing)."""
        out = self.slurm.run("squeue", "-h", "-o", "%i %j %T %N")
        return [line.strip() for line in out.splitlines() if line.strip()]

    def reservations(self) -> list[str]:
        out = self.slurm.run("scontrol", "show", "reservation", "-o", check=False)
        return [line for line in out.splitlines() if line.startswith("ReservationName=")]

    @contextmanager
    def exclusive(self, timeout: float = LOCK_WAIT_S) -> Iterator[None]:
        """Hold the cluster for this process alone (an flock other workers wait on)."""
        with open(self.root / "tests.lock", "a") as handle:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise AssertionError(
                            f"the Slurm cluster stayed locked for {timeout:g} s"
                        ) from None
                    time.sleep(0.2)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def leftovers(self) -> list[str]:
        """What a test left behind: jobs, reservations, nodes not idle."""
        found = [f"job {job}" for job in self.active_jobs()]
        found += [f"reservation {r.split()[0]}" for r in self.reservations()]
        found += [f"{n} is {s}" for n, s in sorted(self.states().items()) if s != "idle"]
        return found

    def settled(self, timeout: float = SETTLE_WAIT_S) -> list[str]:
        """The leftovers once the transient ones have passed (a job completing, a node just
        resumed showing ``idle*``): an empty list, or what is still there after ``timeout``."""
        deadline = time.monotonic() + timeout
        left = self.leftovers()
        while left and time.monotonic() < deadline:
            time.sleep(0.2)
            left = self.leftovers()
        return left

    def restore(self) -> None:
        """Back to the clean cluster: no job, no reservation, every node resumed and idle."""
        for job in self.active_jobs():
            self.slurm.run("scancel", job.split()[0], check=False)
        for r in self.reservations():
            name = r.split()[0].partition("=")[2]
            self.slurm.run("scontrol", "delete", f"reservation={name}", check=False)
        deadline = time.monotonic() + IDLE_WAIT_S
        while self.active_jobs():
            if time.monotonic() > deadline:
                raise AssertionError(f"jobs still active after scancel: {self.active_jobs()}")
            time.sleep(0.2)
        for name, state in self.states().items():
            if "drain" in state or "drng" in state or state.startswith("down"):
                self.resume(name)
        for name in self.nodes:
            self.wait_idle(name)


def find_cluster() -> SlurmCluster:
    """The running cluster, or a failure saying why (never a skip: tests/netns.py's rule)."""
    if os.geteuid() != 0:
        pytest.fail("the Slurm cluster needs root (network namespaces); CI runs as root")
    root = cluster_dir()
    env_file = root / "env"
    if not env_file.is_file():
        pytest.fail(f"no Slurm cluster at {root} (no {env_file}): {HOW_TO_START}")
    env = read_env(env_file)
    slurm = Slurm(env=env, timeout=CALL_TIMEOUT_S)
    try:
        out = slurm.run("sinfo", "-h", "-N", "-p", PARTITION, "-o", "%N")
    except SlurmCommandError as exc:
        pytest.fail(f"the Slurm cluster at {root} does not answer ({exc}): {HOW_TO_START}")
    nodes = tuple(sorted(set(out.split()), key=lambda n: (len(n), n)))
    if not nodes:
        pytest.fail(f"the Slurm cluster at {root} has no node in {PARTITION}: {HOW_TO_START}")
    return SlurmCluster(root=root, env=env, nodes=nodes, partition=PARTITION, slurm=slurm)


@pytest.fixture(scope="session")
def slurm_cluster_session() -> SlurmCluster:
    """The cluster without the lock: for fixtures of wider scope, which take ``exclusive()``."""
    return find_cluster()


@pytest.fixture
def slurm_cluster(slurm_cluster_session: SlurmCluster) -> Iterator[SlurmCluster]:
    """The cluster, held by this test alone, checked clean (and made clean) on the way out."""
    cluster = slurm_cluster_session
    with cluster.exclusive():
        before = cluster.leftovers()
        if before:
            # A test that crashed outright (a killed worker) may leave the cluster dirty; the
            # next test must not inherit it, nor be blamed for it.
            cluster.restore()
        yield cluster
        left = cluster.settled()
        if left:
            cluster.restore()
            pytest.fail(f"the test left the Slurm cluster dirty (restored): {'; '.join(left)}")
