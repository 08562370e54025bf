"""The backend conformance suite: the rules of :mod:`glimmer.engine.backend` held on every
substrate (issue 11, item 7).

Each test takes ``substrate`` (a ``Substrate`` from ``substrates.SUBSTRATES``) or, for the run
store alone, ``store_substrate`` (a ``StoreSubstrate`` from ``substrates.STORES``), and asks it
for a fresh backend over the small world built here: three nodes, two Node-scope tests, one
profile. Nothing in a test names a substrate; what differs between substrates is in the table.

Adding a substrate is one entry in ``substrates.SUBSTRATES`` (and one in ``substrates.STORES``
when its run store is its own). The entry provides:

* ``make(tmp_path, world)``: a Backend with ``world.nodes`` (at least 3, labels as given),
  resolving ``world.profiles`` and ``world.tests``, deliveries recorded or sent to sinks that
  accept (its store may live under ``tmp_path``);
* ``submit(backend, run)``: store a new BurnInRun (uid, namespace and resourceVersion filled);
* ``drive(backend, engine, namespace, name)``: call ``engine.reconcile`` until the run is
  settled (at most ``substrates.MAX_PASSES`` passes, then it returns the run as it is),
  letting its clock move and executions finish between passes (a virtual-clock
  substrate jumps its clock, a wall-clock one sleeps; the drivers of
  :mod:`glimmer.backends.common.drivers` do both). ``backend`` may be a recording wrapper that
  forwards every attribute to the substrate's backend;
* ``let_time_pass(backend, seconds)``: move the substrate on by ``seconds`` (its executions
  start, run and end meanwhile);
* ``refuse_sinks(backend)``: make every sink the backend delivers to fail from now on;
* ``detects_stale_writes``: whether a write carrying an old resourceVersion raises Conflict
  (Kubernetes and the file store do; a substrate that does not says False and the stale-write
  test then holds that such a write is accepted and still bumps the version);
* ``uses_cluster``: whether it runs on the real Slurm cluster (``tests/slurm_cluster.py``): the
  ``substrate`` fixture then holds the cluster for the test, binds ``make`` to it, and gives
  the cluster back clean afterwards (no job, no reservation, every node resumed);
* ``uses_k8s_api``: whether each instance is a Kubernetes API stand-in over HTTP
  (``tools/k8s_standin``): the fixture binds ``make`` to a starter of fresh stand-ins, each
  stopped when the test ends.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import types
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from substrates import (
    STORES,
    SUBSTRATES,
    StartAPI,
    StoreSubstrate,
    Substrate,
    World,
    kubernetes_maker,
    slurm_maker,
    slurm_submit,
)

from glimmer.engine.backend import Backend, RunStore
from tools.k8s_standin import emulator
from tools.k8s_standin.background import api_in_thread
from tools.k8s_standin.kubeconfig import write_kubeconfig


class SeededUids:
    """The stand-in's object uids from a counter that restarts with each cluster, so two
    clusters given the same objects in the same order give them the same uids — as two
    instances of the local substrate give a run the same uid from its name (``_with_uid``).
    A real API server's uids are random; the suite's two-instance case needs the same run
    identity on both (until the stand-in takes a seed of its own)."""

    def __init__(self) -> None:
        self.count = 0

    def restart(self) -> None:
        self.count = 0

    def uuid4(self) -> uuid.UUID:
        self.count += 1
        return uuid.UUID(int=self.count, version=4)

    def __getattr__(self, name: str) -> object:
        return getattr(uuid, name)  # the rest of the uuid module, as the stand-in may use it


@pytest.fixture
def k8s_apis(monkeypatch: pytest.MonkeyPatch) -> Iterator[StartAPI]:
    """A starter of Kubernetes API stand-ins, one per substrate instance: each gets a
    kubeconfig and a pod log folder under the instance's directory; all stop with the test."""
    uids = SeededUids()
    assert isinstance(getattr(emulator, "uuid", None), types.ModuleType), "stand-in uids moved"
    monkeypatch.setattr(emulator, "uuid", uids)
    with contextlib.ExitStack() as stack:

        def start(where: Path) -> tuple[Path, Path]:
            logs = where / "k8s-logs"
            logs.mkdir(parents=True, exist_ok=True)
            uids.restart()
            running = stack.enter_context(api_in_thread(log_dir=logs))
            return write_kubeconfig(where / "kubeconfig", running.url), logs

        yield start


@pytest.fixture(params=SUBSTRATES, ids=lambda s: s.name)
def substrate(request: pytest.FixtureRequest) -> Iterator[Substrate]:
    found: Substrate = request.param
    if found.uses_k8s_api:
        yield dataclasses.replace(found, make=kubernetes_maker(request.getfixturevalue("k8s_apis")))
        return
    if not found.uses_cluster:
        yield found
        return
    # The real Slurm cluster: held by this test alone for its whole duration (the fixture's
    # lock), and given back clean — the suite's tests leave cordons and jobs behind by design,
    # which the cluster fixture would otherwise count against them.
    cluster = request.getfixturevalue("slurm_cluster")
    salt = secrets.token_hex(3)
    yield dataclasses.replace(found, make=slurm_maker(cluster), submit=slurm_submit(salt))
    cluster.restore()


@pytest.fixture(params=STORES, ids=lambda s: s.name)
def store_substrate(request: pytest.FixtureRequest) -> StoreSubstrate:
    found: StoreSubstrate = request.param
    if found.uses_k8s_api:
        return dataclasses.replace(
            found, make=kubernetes_maker(request.getfixturevalue("k8s_apis"))
        )
    return found


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def backend(substrate: Substrate, tmp_path: Path, world: World) -> Backend:
    return substrate.make(tmp_path, world)


@pytest.fixture
def store(store_substrate: StoreSubstrate, tmp_path: Path, world: World) -> RunStore:
    return store_substrate.make(tmp_path, world)
