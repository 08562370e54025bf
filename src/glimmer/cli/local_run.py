"""``glimmer run --backend local``: burn-in of this host through the one engine.

The node is this host (``--node``, default its hostname); each test's runner is a real process
(``glimmer-runner <kind>``) under a supervisor that outlives glimmer; the run, the node's cordon
and every execution are files under ``--state-dir`` (default ``./.glimmer/local``). The run's
name is fixed by the profile and the node, so running the same command again after glimmer was
killed resumes that run from its status — no attempt is started twice — and running it again
after the run finished starts a new one in its place. A second run on this host while one is
under way is refused TargetsBusy by the engine's admission (``--force`` admits it anyway).

Pair and Group tests need other hosts: each host runs its own half (``--role server|client``
with ``--peer``, or ``--rank/--nranks/--root``), as one Node execution with the rendezvous
variables set (:mod:`glimmer.plan.halves`, :mod:`glimmer.backends.local.halves`). The flags are
checked against the plan before anything starts (§8.1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from glimmer.api.load import of_kind
from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.sink import BurnInSink
from glimmer.api.test import BurnInTest, BurnInTestSpec
from glimmer.backends.common.registry import LOCAL
from glimmer.cli.local_halves import half_of, half_warnings
from glimmer.cli.output import console
from glimmer.cli.run_inputs import API_VERSION, NAMESPACE, RUN_KINDS, load_kinds
from glimmer.contract.vocab import Phase
from glimmer.engine.reconciler import TERMINAL_RUN_PHASES, Engine
from glimmer.errors import InputError, Location
from glimmer.plan.builtin import profile_or_builtin
from glimmer.plan.given import check_profile, check_sink_refs, check_startable, check_test_refs
from glimmer.plan.halves import Half, Halved, as_halves
from glimmer.plan.nodes import NodeInfo
from glimmer.plan.resolve import plan_tests
from glimmer.reports.folder import refuse_unwritable
from glimmer.sinks.sinkset import SinkSet

DEFAULT_STATE_DIR = ".glimmer/local"
LOCAL_PROFILE = "host"  # what --backend local runs when no profile is named
POLL_SECONDS = 1.0  # at most this long between passes: runners end without telling glimmer


@dataclass(frozen=True)
class LocalFlags:
    """The flags of ``glimmer run --backend local`` as typed."""

    files: tuple[str, ...] = ()
    profile: str | None = None
    node: str | None = None
    state_dir: str | None = None
    force: bool = False
    role: str | None = None
    peer: str | None = None
    peer_node: str | None = None
    rank: int | None = None
    nranks: int | None = None
    root: str | None = None
    results_dir: str | None = None
    runtime: str = "process"


def refuse_sim_flags(given: list[str]) -> None:
    """A simulator-only flag with ``--backend local`` is bad input, named."""
    if given:
        raise InputError(
            f"{given[0]}: shapes the simulated fleet and means nothing with --backend local "
            "(this host is the one node; --node names it)"
        )


def _run_object(name: str, profile: str, node: str, force: bool) -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": API_VERSION,
            "kind": "BurnInRun",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {
                "profileRef": profile,
                "target": {"nodeNames": [node]},
                "maxConcurrentNodes": 1,
                "force": force,
            },
        }
    )


@dataclass
class LocalRun:
    """A run on this host, checked and ready to drive."""

    backend: Any  # a LocalBackend, reached through the registry
    run: BurnInRun
    node: str
    state_dir: Path
    profile: BurnInProfile | None  # None: a built-in one
    tests: dict[str, BurnInTestSpec]
    nodes: list[NodeInfo]
    halved: Halved
    half: Half | None
    warnings: list[str]


def prepare(
    flags: LocalFlags, make_sinks: Callable[[tuple[BurnInSink, ...]], SinkSet | None]
) -> LocalRun:
    """The checked run; InputError for anything wrong, before anything starts.
    ``make_sinks`` turns the BurnInSinks given into the run's sinks (the CLI's policy)."""
    loaded = load_kinds("-f", flags.files, RUN_KINDS) if flags.files else []
    profiles = {item.name: obj for obj, item in of_kind(loaded, BurnInProfile)}
    tests = {item.name: obj.spec for obj, item in of_kind(loaded, BurnInTest)}
    runs = of_kind(loaded, BurnInRun)
    if len(runs) > 1:
        raise InputError("-f: several BurnInRuns given; glimmer run runs one")
    written = runs[0][1].locate("spec.profileRef") if runs and not flags.profile else Location()
    ref = flags.profile or (runs[0][0].spec.profile_ref if runs else "")
    ref = ref or (next(iter(profiles)) if len(profiles) == 1 else LOCAL_PROFILE)
    check_profile(ref, profiles, tests, written)
    check_test_refs(of_kind(loaded, BurnInProfile), tests)
    check_sink_refs(ref, of_kind(loaded, BurnInProfile), of_kind(loaded, BurnInSink))
    node = flags.node or LOCAL.hostname()
    halved = as_halves(ref, profiles, tests, server=flags.role == "server")
    half = half_of(flags, halved, ref, node)
    results_dir = Path(flags.results_dir) if flags.results_dir is not None else None
    if results_dir is not None:
        refuse_unwritable(results_dir, "--results-dir")
    state_dir = Path(flags.state_dir or DEFAULT_STATE_DIR)
    sinks = make_sinks(tuple(obj for obj, _ in of_kind(loaded, BurnInSink)))
    profiles, tests = halved.profiles, halved.tests
    if flags.runtime not in LOCAL.runtimes:
        raise InputError(
            f"--runtime {flags.runtime}: not a runtime (one of {', '.join(LOCAL.runtimes)})"
        )
    inner = LOCAL.backend(
        state_dir, node, profiles=profiles, tests=tests, sinks=sinks, runtime=flags.runtime
    )
    raw = results_dir / "raw" if results_dir is not None else None
    backend = LOCAL.halves(inner, halved, half, raw_dir=raw)
    run = _run_object(runs[0][0].name if runs else f"{ref}-{node}", ref, node, flags.force)
    nodes = [NodeInfo(name=n.name, labels=n.labels) for n in backend.list_nodes()]
    started = runs[0][1].locate() if runs else Location()
    check_startable(run, profiles.get(ref), tests, nodes, started, datetime.now(UTC))
    found = profile_or_builtin(ref, profiles.get(ref), tests)
    planned = plan_tests(*found) if found is not None else []
    warnings = half_warnings(halved, half)
    warnings += LOCAL.unanswered_refs([(test.name, test.spec) for test in planned])
    return LocalRun(
        backend, run, node, state_dir, profiles.get(ref), tests, nodes, halved, half, warnings
    )


def start_or_resume(backend: Any, run: BurnInRun) -> str:
    """Submit the run, or resume the one of its name left unfinished; a finished one is
    replaced. Says which. (The same for every substrate whose runs live in a store the next
    command reads: this host's and Slurm's.)"""
    held = backend.get_run(NAMESPACE, run.name)
    if held is not None and (held.status is None or held.status.phase not in TERMINAL_RUN_PHASES):
        return "resumed"
    if held is not None:
        backend.delete_run(NAMESPACE, run.name)  # finished: its verdict was printed and kept
        if backend.get_run(NAMESPACE, run.name) is not None:
            return "resumed"  # still tearing down: let the engine finish it first
        backend.submit(run)
        return "started (the finished run of that name replaced)"
    backend.submit(run)
    return "started"


class ResultLines:
    """One line per result as it settles, so a run of minutes is not silent."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, tuple[str, ...]]] = set()

    def __call__(self, run: BurnInRun) -> None:
        for result in (run.status.results if run.status else None) or ():
            if result.phase in (Phase.PENDING, Phase.RUNNING):
                continue
            key = (result.name, tuple(result.nodes or ()))
            if key in self.seen:
                continue
            self.seen.add(key)
            message = f": {result.message}" if result.message else ""
            console.print(
                f"  {result.name} {result.phase.value}{message}", markup=False, soft_wrap=True
            )


def drive(local: LocalRun, human: bool) -> BurnInRun:
    """Passes on the wall clock until the run settles; the final run."""
    final = LOCAL.drive(
        local.backend,
        Engine(local.backend),
        NAMESPACE,
        local.run.name,
        poll=POLL_SECONDS,
        progress=ResultLines() if human else None,
    )
    return final if final is not None else local.run
