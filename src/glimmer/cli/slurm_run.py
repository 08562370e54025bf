"""``glimmer run --backend slurm``: burn-in of a Slurm cluster's nodes through the one engine,
and ``glimmer reap --backend slurm`` (the orphan reaper, for cron).

Each execution is a batch job pinned to its node, running the runner installed on the nodes
(``--runner-path``, default the glimmer-runner beside this glimmer); the cordon is a drain whose
reason is the run's stamp, plus a reservation that keeps other users' jobs off the node. The
run, the cordon records and every job's script and output live under ``--state-dir``, which
must be on a filesystem the nodes share. The run's name is fixed by the profile, the partition
and the targets, so running the same command again after glimmer was killed resumes that run
from its status — no job is submitted twice — and running it again after it finished starts a
new one in its place.

Before anything is submitted: the reaper releases the nodes this state directory's runs left
drained when those runs no longer exist; then a target drained or down by someone else (an
administrator's reason, another submit host's run) refuses the run, exit 2, naming each such
node and its reason — nothing is submitted and nothing drained, and the node keeps its drain.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from glimmer.api.load import of_kind
from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.sink import BurnInSink
from glimmer.api.test import BurnInTest, BurnInTestSpec
from glimmer.backends.common.registry import SLURM
from glimmer.cli.cluster_run import refuse_sim_flags as refuse_cluster_sim_flags
from glimmer.cli.cluster_run import run_name, run_object, targets_of
from glimmer.cli.local_run import ResultLines, start_or_resume
from glimmer.cli.output import console, print_json
from glimmer.cli.plan_view import plan_json, render_plan
from glimmer.cli.run_finish import report_to, show_final
from glimmer.cli.run_inputs import (
    NAMESPACE,
    RUN_KINDS,
    SinkFlags,
    load_kinds,
    sink_set_for,
)
from glimmer.engine.backend import BackendError
from glimmer.engine.reconciler import Engine
from glimmer.errors import InputError, Location
from glimmer.plan.decision import Refused
from glimmer.plan.given import check_profile, check_sink_refs, check_startable, check_test_refs
from glimmer.plan.nodes import NodeInfo
from glimmer.plan.preview import preview
from glimmer.reports.folder import refuse_unwritable
from glimmer.sinks.sinkset import SinkSet

SLURM_PROFILE = "host"  # what --backend slurm runs when no profile is named
POLL_SECONDS = 0.5  # at most this long between passes: jobs end without telling glimmer
SHARED = "a folder on a filesystem the nodes share (job scripts and output files live there)"


@dataclass(frozen=True)
class SlurmFlags:
    """The flags of ``glimmer run --backend slurm`` as typed."""

    files: tuple[str, ...] = ()
    profile: str | None = None
    nodes: str | None = None
    max_concurrent: int | None = None
    state_dir: str | None = None
    partition: str | None = None
    runner_path: str | None = None
    force: bool = False


@dataclass
class SlurmRun:
    """A run on the cluster, checked and ready to drive."""

    backend: Any  # a SlurmBackend, reached through the registry
    run: BurnInRun
    state_dir: Path
    partition: str | None
    runner: str
    targets: list[str]
    profile: BurnInProfile | None  # None: a built-in one
    tests: dict[str, BurnInTestSpec]
    nodes: list[NodeInfo]


def refuse_sim_flags(given: list[str], node: str | None) -> None:
    """A simulator-only flag (or this host's ``--node``) with ``--backend slurm`` is bad
    input, named."""
    refuse_cluster_sim_flags(given, node, "slurm")


def state_dir_of(given: str | None, command: str) -> Path:
    """``--state-dir``, required: the nodes must see it, so no default is guessed."""
    if not given:
        raise InputError(
            f"--backend slurm: {command} needs --state-dir DIR, {SHARED}, e.g. $HOME/.glimmer/slurm"
        )
    folder = Path(given).expanduser().resolve()
    refuse_unwritable(folder, "--state-dir")
    return folder


def _runner(given: str | None) -> str:
    runner = given or SLURM.default_runner
    if not Path(runner).is_absolute():
        raise InputError(
            f"--runner-path {runner}: not an absolute path; a job starts it on its node, "
            "where the install path must be the same"
        )
    return runner


def _cluster_nodes(backend: Any) -> list[Any]:
    try:
        return list(backend.list_nodes())
    except BackendError as e:
        raise InputError(f"--backend slurm: the cluster does not answer: {e}") from None


def prepare(
    flags: SlurmFlags, make_sinks: Callable[[tuple[BurnInSink, ...]], SinkSet | None]
) -> SlurmRun:
    """The checked run; InputError for anything wrong, before anything is submitted or
    drained. ``make_sinks`` turns the BurnInSinks given into the run's sinks."""
    state_dir = state_dir_of(flags.state_dir, "glimmer run")
    if flags.max_concurrent is not None and flags.max_concurrent < 1:
        raise InputError(f"--max-concurrent {flags.max_concurrent}: must be at least 1")
    runner = _runner(flags.runner_path)
    loaded = load_kinds("-f", flags.files, RUN_KINDS) if flags.files else []
    profiles = {item.name: obj for obj, item in of_kind(loaded, BurnInProfile)}
    tests = {item.name: obj.spec for obj, item in of_kind(loaded, BurnInTest)}
    runs = of_kind(loaded, BurnInRun)
    if len(runs) > 1:
        raise InputError("-f: several BurnInRuns given; glimmer run runs one")
    written = runs[0][0] if runs else None
    where = runs[0][1].locate("spec.profileRef") if runs and not flags.profile else Location()
    ref = flags.profile or (written.spec.profile_ref if written is not None else "")
    ref = ref or (next(iter(profiles)) if len(profiles) == 1 else SLURM_PROFILE)
    check_profile(ref, profiles, tests, where)
    check_test_refs(of_kind(loaded, BurnInProfile), tests)
    check_sink_refs(ref, of_kind(loaded, BurnInProfile), of_kind(loaded, BurnInSink))
    sinks = make_sinks(tuple(obj for obj, _ in of_kind(loaded, BurnInSink)))
    backend = SLURM.backend(
        state_dir,
        partition=flags.partition,
        runner_command=[runner],
        profiles=profiles,
        tests=tests,
        sinks=sinks,
    )
    known = _cluster_nodes(backend)
    if flags.partition is not None and not known:
        raise InputError(f"--slurm-partition {flags.partition}: no node of the cluster is in it")
    targets = targets_of(flags.nodes, written, known)
    if not targets:
        raise InputError("--nodes: no node of the cluster matches the run's target")
    names = {n.name for n in known}
    unknown = [t for t in targets if t not in names]
    if unknown:
        part = f" in partition {flags.partition}" if flags.partition else ""
        raise InputError(f"--nodes: not a node of the cluster{part}: {', '.join(unknown)}")
    refused = SLURM.refusals(backend, targets)
    if refused:
        raise InputError(
            "--nodes: refused before anything was submitted or drained: "
            + "; ".join(refused)
            + " (resume a node with `scontrol update nodename=N state=resume` once it is fit "
            "to test, or leave it out with --nodes)"
        )
    name = run_name(ref, "slurm", flags.partition, targets)
    run = run_object(
        written,
        ref,
        targets,
        name,
        namespace=NAMESPACE,
        nodes_given=flags.nodes is not None,
        max_concurrent=flags.max_concurrent,
        force=flags.force,
    )
    nodes = [NodeInfo(name=n.name, labels=n.labels) for n in known]
    started = runs[0][1].locate() if runs else Location()
    check_startable(run, profiles.get(ref), tests, nodes, started, datetime.now(UTC))
    return SlurmRun(
        backend, run, state_dir, flags.partition, runner, targets, profiles.get(ref), tests, nodes
    )


def reap_lines(backend: Any) -> list[str]:
    """Run the orphan reaper (before admission); one line per node it released."""
    try:
        return SLURM.reap(backend)
    except BackendError as e:
        raise InputError(f"--backend slurm: the reaper could not read the cluster: {e}") from None


def drive(slurm_run: SlurmRun, human: bool) -> BurnInRun:
    """Passes on the wall clock until the run settles; the final run."""
    final = SLURM.drive(
        slurm_run.backend,
        Engine(slurm_run.backend),
        NAMESPACE,
        slurm_run.run.name,
        poll=POLL_SECONDS,
        progress=ResultLines() if human else None,
    )
    return final if final is not None else slurm_run.run


def header(slurm_run: SlurmRun, how: str, reaped: list[str]) -> None:
    """What the run is about to do, for a person."""
    say = console.print
    run = slurm_run.run
    say(f"[bold]glimmer run[/bold] {run.name}: BurnInRun on a Slurm cluster (backend slurm)")
    say(f"  profile    {run.spec.profile_ref}", markup=False)
    nodes = ", ".join(slurm_run.targets)
    cap = run.spec.max_concurrent_nodes
    say(f"  nodes      {nodes}; at most {cap} at once", markup=False, soft_wrap=True)
    say(f"  partition  {slurm_run.partition or '(the default)'}", markup=False)
    say(f"  runner     {slurm_run.runner}", markup=False, soft_wrap=True)
    say(f"  state      {slurm_run.state_dir} ({how})", markup=False, soft_wrap=True)
    for line in reaped:
        say(f"  reaped     {line}", markup=False, soft_wrap=True)
    console.print()


def main(
    flags: SlurmFlags, *, json_out: bool, dry: bool, report: str | None, sinks: SinkFlags
) -> int:
    """``glimmer run --backend slurm``, as an exit code (run_cmd's: 0 Passed, 1 Failed,
    3 Error, 4 Cancelled; bad input is an InputError, exit 2)."""
    from glimmer.cli.run_cmd import exit_code

    prepared = prepare(flags, lambda objects: sink_set_for(sinks, objects, simulated=False))
    out_dir = Path(report) if report is not None else None
    if out_dir is not None:
        refuse_unwritable(out_dir, "--report")
    human = not json_out
    if dry:
        run = prepared.run
        decision = preview(run, prepared.profile, prepared.tests, prepared.nodes, datetime.now(UTC))
        if human:
            render_plan(console, run, decision)
        else:
            print_json(plan_json(run, decision))
        return 3 if isinstance(decision, Refused) else 0
    reaped = reap_lines(prepared.backend)
    how = start_or_resume(prepared.backend, prepared.run)
    if human:
        header(prepared, how, reaped)
    else:
        for line in reaped:
            print(f"reaped {line}", file=sys.stderr)
    final = drive(prepared, human)
    show_final(final, human)
    if out_dir is not None:
        report_to(final, out_dir, human)
    return exit_code(final)


def reap(
    backend: Annotated[
        str, typer.Option(help="The substrate whose orphaned cordons to release: slurm.")
    ] = "slurm",
    state_dir: Annotated[
        str | None,
        typer.Option(
            "--state-dir",
            metavar="DIR",
            help=f"The state directory the runs were driven from: {SHARED}.",
        ),
    ] = None,
    partition: Annotated[
        str | None,
        typer.Option("--slurm-partition", metavar="NAME", help="Only the nodes of this partition."),
    ] = None,
) -> None:
    """Release the nodes runs of a state directory left drained once those runs are gone.

    For each node drained with a stamp of this state directory whose run no longer exists
    (namespace, name AND uid, read fresh), the drain is lifted (or kept, when the node was
    drained before its run) and its reservation deleted; a live run's node, another state
    directory's and an administrator's drain are left alone. One line per node released;
    exit 0 (2: bad input).
    """
    if backend != "slurm":
        raise InputError(f"--backend {backend}: glimmer reap releases Slurm drains only (slurm)")
    folder = state_dir_of(state_dir, "glimmer reap")
    lines = reap_lines(SLURM.backend(folder, partition=partition))
    for line in lines:
        print(f"reaped {line}")
    if not lines:
        print("reaped nothing: no drain of this state directory names a run that is gone")
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    """Add ``glimmer reap`` to the app."""
    app.command("reap")(reap)
