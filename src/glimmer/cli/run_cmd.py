"""``glimmer run``: a burn-in run on the simulated fleet, from start to verdict.

With no arguments: the built-in ``acceptance`` profile on every node of the built-in
``ai-factory`` fleet, with two planted faults. It says what it will do, shows live progress,
then the verdict table, the findings and the run verdict, and exits 0 Passed, 1 Failed,
3 Error, 4 Cancelled (2: bad input). The engine decides everything; this module reads flags,
drives the simulator and writes text.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from glimmer.api.dump import dump_json
from glimmer.api.run import BurnInRun
from glimmer.backends.common.registry import SIM, entry
from glimmer.cli.conventions import DEFAULT_SEED, SeedOpt
from glimmer.cli.kube_options import ContextOpt, KubeconfigOpt, NamespaceOpt
from glimmer.cli.output import console, print_json
from glimmer.cli.plan_view import plan_json, render_plan
from glimmer.cli.progress_view import ProgressView
from glimmer.cli.run_inputs import (
    DEFAULT_FLEET,
    RunFlags,
    RunInputs,
    SinkFlags,
    assemble,
    sink_set_for,
)
from glimmer.cli.sink_options import SinkCa, SinkSecretEnv, SinkSecretFile, SinkState
from glimmer.cli.verdict_table import render_verdict
from glimmer.contract.vocab import Phase
from glimmer.engine.reconciler import Engine
from glimmer.errors import InputError
from glimmer.fleet.faultspec import SYNTAX
from glimmer.plan.decision import Refused
from glimmer.plan.preview import preview
from glimmer.plan.sweep import PairShape, pair_runs
from glimmer.reports import write_reports
from glimmer.reports.folder import refuse_unwritable
from glimmer.reports.folder import summary as report_summary
from glimmer.sinks.config import FLAG_FORMS
from glimmer.sinks.sinkset import SinkSet
from glimmer.verdict.text import name_some

if TYPE_CHECKING:  # annotation only: importing the simulator costs every command
    from glimmer.backends.common.registry import SimBackend

EXIT_CODES = {Phase.PASSED: 0, Phase.FAILED: 1, Phase.ERROR: 3, Phase.CANCELLED: 4}
NOT_SETTLED_EXIT = 3
MAX_NODES_NAMED = 6
DEFAULT_REPORT_DIR = "glimmer-report"
SWEEP_PROFILE = "pair-network"  # what --pairs runs when no profile is named
# After the verdict, a terminal envelope no sink accepted is re-sent every 5 simulated minutes
# for this long, then left in the outbox for the next process (a sink never holds a run).
DELIVERY_GRACE_SECONDS = 1800.0


class RunOutput(StrEnum):
    TABLE = "table"
    JSON = "json"


def exit_code(run: BurnInRun) -> int:
    """0 Passed, 1 Failed, 3 Error, 4 Cancelled; a run that did not settle counts as Error."""
    phase = run.status.phase if run.status else Phase.PENDING
    return EXIT_CODES.get(phase, NOT_SETTLED_EXIT)


def _header(inputs: RunInputs) -> None:
    run = inputs.run
    targets = list(inputs.targets)
    say = console.print
    say(f"[bold]glimmer run[/bold] {run.name}: BurnInRun on the simulator (backend sim)")
    say(f"  profile  {run.spec.profile_ref} ({inputs.profile_source})", markup=False)
    say(f"  fleet    {inputs.topo.name} ({len(inputs.topo.nodes)} nodes)", markup=False)
    say(
        f"  nodes    {len(targets)}: {name_some(targets, MAX_NODES_NAMED)}; "
        f"at most {run.spec.max_concurrent_nodes} at once",
        markup=False,
        soft_wrap=True,
    )
    planted = ", ".join(f.render() for f in inputs.planted) or "none"
    say(f"  faults   {planted}", markup=False, soft_wrap=True)
    if inputs.declared:
        declared = ", ".join(f.render() for f in inputs.declared)
        say(f"           declared in the fleet: {declared}", markup=False, soft_wrap=True)
    say(f"  seed     {inputs.seed}", markup=False)


def dry_run(inputs: RunInputs, output: RunOutput) -> int:
    """Show the plan the run would pin; create nothing. A configuration refusal never gets
    here (``assemble`` refuses it as bad input); 3 stays for a refusal of another kind."""
    decision = preview(
        inputs.run,
        inputs.profiles.get(inputs.run.spec.profile_ref),
        inputs.tests,
        inputs.nodes,
        datetime.now(UTC),
    )
    if output is RunOutput.JSON:
        print_json(plan_json(inputs.run, decision))
    else:
        _header(inputs)
        console.print()
        render_plan(console, inputs.run, decision)
    return EXIT_CODES[Phase.ERROR] if isinstance(decision, Refused) else 0


def _backend(inputs: RunInputs, sink_set: SinkSet | None, state_dir: Path | None) -> SimBackend:
    """The simulator over the run's fleet twin, with its seed, profiles, tests and sinks."""
    return SIM.backend(
        inputs.twin,
        seed=inputs.seed,
        profiles=inputs.profiles,
        tests=inputs.tests,
        sinks=sink_set,
        state_dir=state_dir,
    )


def refuse_held_name(inputs: RunInputs, state_dir: Path, names: Sequence[str]) -> None:
    """``--state-dir``: a run name is used once. A run of one of these names already kept
    there — settled, or left unfinished by a process that was stopped (its simulated executions
    ended with that process, so it cannot be resumed) — is refused before anything runs."""
    refuse_unwritable(state_dir, "--state-dir")
    held = SIM.run_store(state_dir)
    for name in names:
        run = held.get_run(inputs.namespace, name)
        if run is None:
            continue
        phase = run.status.phase.value if run.status else "Pending"
        raise InputError(
            f"--state-dir {state_dir}: already holds BurnInRun {inputs.namespace}/{run.name} "
            f"({phase}) in {held.path(inputs.namespace, run.name)}; a run name is used once: "
            "name the run differently (-f with metadata.name), or use another folder"
        )


def run_sweep(
    shape: PairShape,
    inputs: RunInputs,
    output: RunOutput,
    dry: bool,
    sink_set: SinkSet | None,
    out_dir: Path | None,
    state_dir: Path | None,
) -> int:
    """``--pairs``: one run per pair, driven side by side under the run's node cap."""
    from glimmer.cli import pair_sweep  # only a sweep pays for it

    runs = pair_runs(inputs.run, inputs.pairs)
    json_out = output is RunOutput.JSON
    if dry:
        pair_sweep.dry_sweep(runs, json_out)
        return 0
    backend = _backend(inputs, sink_set, state_dir)
    cap = inputs.run.spec.max_concurrent_nodes
    finals = pair_sweep.drive_sweep(backend, runs, cap)
    if json_out:
        print(dump_json(finals), end="")
    else:
        pair_sweep.render_sweep(finals, shape.value, inputs.run.spec.profile_ref, cap)
    if out_dir is not None:
        line = pair_sweep.write_sweep_reports(
            finals,
            out_dir,
            lambda run, folder: write_reports(run, folder, ["all"], fleet=inputs.topo),
        )
        if json_out:
            print(f"reports: {line}", file=sys.stderr)
        else:
            console.print(f"Reports: {line}", markup=False, soft_wrap=True)
    return pair_sweep.sweep_exit(finals)


def execute(
    inputs: RunInputs,
    output: RunOutput,
    sink_set: SinkSet | None = None,
    state_dir: Path | None = None,
) -> BurnInRun:
    """Submit the run to a simulator over the fleet and drive it to its verdict; the run is
    kept as a file under ``state_dir`` (rewritten atomically at every step) when given."""
    backend = _backend(inputs, sink_set, state_dir)
    submitted = backend.submit(inputs.run)
    namespace = submitted.metadata.namespace or inputs.namespace
    human = output is RunOutput.TABLE
    if human:
        _header(inputs)
        console.print()
    with ProgressView(console, live=human and console.is_terminal) as view:
        progress = view.update if human else None
        done = SIM.drive(
            backend,
            Engine(backend),
            namespace,
            submitted.name,
            progress=progress,
            delivery_grace=DELIVERY_GRACE_SECONDS,
        )
    return done.run


def report_dir_for(
    flags: RunFlags, output: RunOutput, report: str | None, sinks: Sequence[str] = ()
) -> Path | None:
    """Where the run's reports go: ``--report DIR``; ``./glimmer-report`` for the plain
    ``glimmer run`` a new user types (no flag changed); otherwise nowhere."""
    if report is not None:
        return Path(report)
    if flags == RunFlags() and output is RunOutput.TABLE and not sinks:
        return Path(DEFAULT_REPORT_DIR)
    return None


def _write_reports(final: BurnInRun, inputs: RunInputs, out_dir: Path, output: RunOutput) -> None:
    paths = write_reports(final, out_dir, ["all"], fleet=inputs.topo)
    # One line however many nodes: the folder and how many files of each kind it now holds.
    line = report_summary(out_dir, paths)
    if output is RunOutput.TABLE:
        console.print()
        console.print(f"Reports: {line}", markup=False, soft_wrap=True)
    else:
        # stdout carries the BurnInRun alone; say where the reports went on stderr.
        print(f"reports: {line}", file=sys.stderr)


def warn_unsound(inputs: RunInputs) -> None:
    """One stderr line per Unsound gate of the files given, before anything runs: such a gate
    is run as written and fails closed, so the user hears it is the gate, not the hardware."""
    for finding in inputs.unsound:
        where = finding.location.render()
        print(
            f"warning: {where}: Unsound gate, run as written: {finding.problem.reason} "
            "(glimmer lint lists every such gate)",
            file=sys.stderr,
        )


def run_main(
    flags: RunFlags,
    *,
    output: RunOutput,
    dry: bool,
    backend: str,
    report: str | None = None,
    sinks: SinkFlags | None = None,
    state_dir: str | None = None,
) -> int:
    """The whole command, as an exit code."""
    entry(backend)  # a name not available yet or unknown is refused before anything loads
    if flags.pairs is not None and flags.profile is None and not flags.files:
        flags = dataclasses.replace(flags, profile=SWEEP_PROFILE)
    inputs = assemble(flags)
    # Sink flags are checked before anything runs: bad input writes nothing.
    sinks = sinks or SinkFlags()
    sink_set = sink_set_for(sinks, inputs.sinks, simulated=True)
    out_dir = report_dir_for(flags, output, report, sinks.specs)
    if out_dir is not None:  # a folder the reports cannot go to is refused before anything runs
        refuse_unwritable(out_dir, "--report" if report is not None else "report folder")
    kept = Path(state_dir) if state_dir is not None else None
    names = [r.name for r in pair_runs(inputs.run, inputs.pairs)] or [inputs.run.name]
    if kept is not None:
        refuse_held_name(inputs, kept, names)
    warn_unsound(inputs)
    if flags.pairs is not None:
        return run_sweep(flags.pairs, inputs, output, dry, sink_set, out_dir, kept)
    if dry:
        return dry_run(inputs, output)
    final = execute(inputs, output, sink_set, kept)
    if output is RunOutput.JSON:
        print(dump_json([final]), end="")
    else:
        console.print()
        render_verdict(console, final)
    if out_dir is not None:
        _write_reports(final, inputs, out_dir, output)
    return exit_code(final)


def _sim_only(flags: RunFlags) -> list[str]:
    """The simulator-only flags given (they shape the simulated fleet)."""
    given = [
        ("--fleet", flags.fleet != DEFAULT_FLEET),
        ("--nodes", flags.nodes is not None),
        ("--fault", bool(flags.faults)),
        ("--no-faults", flags.no_faults),
        ("--pairs", flags.pairs is not None),
        ("--max-concurrent", flags.max_concurrent is not None),
    ]
    return [flag for flag, present in given if present]


def run(
    file: Annotated[
        list[str] | None,
        typer.Option(
            "--file", "-f", help="Tests, profiles and a BurnInRun (YAML/JSON); repeatable."
        ),
    ] = None,
    profile: Annotated[
        str | None,
        typer.Option(
            help="A built-in or loaded profile (default: the run's, the one loaded, or acceptance)."
        ),
    ] = None,
    fleet: Annotated[
        str, typer.Option(help="Built-in fleet name or a Fleet YAML/JSON file.")
    ] = DEFAULT_FLEET,
    nodes: Annotated[
        str | None, typer.Option(help="N1,N2,… (default: the run's target, or every node).")
    ] = None,
    max_concurrent: Annotated[
        int | None,
        typer.Option(
            "--max-concurrent", help="Nodes under load at once (default: all targets, up to 64)."
        ),
    ] = None,
    fault: Annotated[
        list[str] | None,
        typer.Option(
            help=f"Plant a fault: {SYNTAX}; repeatable, replaces the default planted pair."
        ),
    ] = None,
    no_faults: Annotated[
        bool, typer.Option("--no-faults", help="Plant nothing: a healthy run.")
    ] = False,
    seed: SeedOpt = DEFAULT_SEED,
    backend: Annotated[
        str,
        typer.Option(
            help="Where to run: sim (the simulated fleet), local (this host), slurm (a Slurm "
            "cluster's nodes, one batch job per execution) or kubernetes (a cluster whose "
            "operator runs it: the run is submitted and followed)."
        ),
    ] = "sim",
    node: Annotated[
        str | None,
        typer.Option(help="--backend local: the name this host runs as (default: its hostname)."),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="--backend local: start even while another run holds this host."
        ),
    ] = False,
    output: Annotated[
        RunOutput,
        typer.Option("--output", "-o", help="table (default) or json (the final BurnInRun)."),
    ] = RunOutput.TABLE,
    dry: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan the run would pin; run nothing.")
    ] = False,
    sink: Annotated[
        list[str] | None,
        typer.Option(
            "--sink",
            metavar="SPEC",
            help=f"Deliver the run's envelopes: {FLAG_FORMS}; repeatable.",
        ),
    ] = None,
    sink_state: SinkState = None,
    sink_secret_file: SinkSecretFile = None,
    sink_secret_env: SinkSecretEnv = None,
    sink_ca: SinkCa = None,
    report: Annotated[
        str | None,
        typer.Option(
            "--report",
            metavar="DIR",
            help="Write JUnit, HTML, Markdown and NVVS reports to DIR "
            f"(a plain `glimmer run` writes them to ./{DEFAULT_REPORT_DIR}).",
        ),
    ] = None,
    pairs: Annotated[
        PairShape | None,
        typer.Option(
            "--pairs",
            help="Sweep links: one run per pair of the nodes, ring (each with the next) or "
            f"all-pairs, under one --max-concurrent (default profile {SWEEP_PROFILE}).",
        ),
    ] = None,
    role: Annotated[
        str | None,
        typer.Option(
            "--role",
            metavar="server|client",
            help="--backend local: this host's end of every Pair test (with --peer on the client).",
        ),
    ] = None,
    peer: Annotated[
        str | None,
        typer.Option(
            "--peer", metavar="ADDR", help="--backend local, --role client: the server's address."
        ),
    ] = None,
    peer_node: Annotated[
        str | None,
        typer.Option(
            "--peer-node",
            metavar="NAME",
            # Help is rich markup: an unescaped [server, client] reads as a style tag and vanishes.
            help="--backend local: the peer's node name (the link is named \\[server, client]).",
        ),
    ] = None,
    rank: Annotated[
        int | None,
        typer.Option(help="--backend local: this host's rank in every Group test (0-based)."),
    ] = None,
    nranks: Annotated[
        int | None, typer.Option(help="--backend local, with --rank: the number of ranks (>= 2).")
    ] = None,
    root: Annotated[
        str | None,
        typer.Option(
            metavar="ADDR",
            help="--backend local, with --rank: rank 0's address (required on every rank but 0).",
        ),
    ] = None,
    results_dir: Annotated[
        str | None,
        typer.Option(
            "--results-dir",
            metavar="DIR",
            help="--backend local: write run.json, raw logs and the envelope (or the server's "
            "or rank's record) to DIR.",
        ),
    ] = None,
    runtime: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="--backend local: what runs each runner — process (default: the runner "
            "installed with glimmer), auto (the first of docker, podman, nerdctl whose engine "
            "answers, else process), docker, podman or nerdctl (the test's image).",
        ),
    ] = None,
    state_dir: Annotated[
        str | None,
        typer.Option(
            "--state-dir",
            metavar="DIR",
            help="Keep the BurnInRun as DIR/<namespace>/<name>.json, rewritten atomically at "
            "every step (default: in memory only). --backend slurm: required, a folder on a "
            "filesystem the nodes share (runs, cordon records, job scripts and output).",
        ),
    ] = None,
    slurm_partition: Annotated[
        str | None,
        typer.Option(
            "--slurm-partition",
            metavar="NAME",
            help="--backend slurm: the partition whose nodes are tested and where jobs go "
            "(default: every node, the default partition).",
        ),
    ] = None,
    runner_path: Annotated[
        str | None,
        typer.Option(
            "--runner-path",
            metavar="PATH",
            help="--backend slurm: glimmer-runner as installed on the nodes, an absolute path "
            "(default: the one beside this glimmer, for an install the nodes share).",
        ),
    ] = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Run a burn-in profile on the simulated fleet, this host or a Slurm cluster and settle
    its verdict.

    Exit codes: 0 Passed, 1 Failed, 2 bad input, 3 Error, 4 Cancelled.
    """
    sink_flags = SinkFlags(
        tuple(sink or ()), sink_state, sink_secret_file, sink_secret_env, sink_ca
    )
    flags = RunFlags(
        files=tuple(file or ()),
        profile=profile,
        fleet=fleet,
        nodes=nodes,
        max_concurrent=max_concurrent,
        faults=tuple(fault or ()),
        no_faults=no_faults,
        seed=seed,
        pairs=pairs,
    )
    for flag_name, given, only in (
        ("--slurm-partition", slurm_partition, "slurm"),
        ("--runner-path", runner_path, "slurm"),
        ("--kubeconfig", kubeconfig, "kubernetes"),
        ("--context", context, "kubernetes"),
        ("--namespace", namespace, "kubernetes"),
    ):
        if given is not None and backend != only:
            raise InputError(f"{flag_name}: only with --backend {only}")
    if backend == "local":
        from glimmer.cli import local_main
        from glimmer.cli.local_run import LocalFlags, refuse_sim_flags

        refuse_sim_flags(_sim_only(flags))
        local = LocalFlags(
            flags.files,
            profile,
            node,
            state_dir,
            force,
            role=role,
            peer=peer,
            peer_node=peer_node,
            rank=rank,
            nranks=nranks,
            root=root,
            results_dir=results_dir,
            runtime=runtime or "process",
        )
        raise typer.Exit(
            local_main.main(local, output=output, dry=dry, report=report, sinks=sink_flags)
        )
    local_only = [
        ("--role", role),
        ("--peer", peer),
        ("--peer-node", peer_node),
        ("--rank", rank),
        ("--nranks", nranks),
        ("--root", root),
        ("--results-dir", results_dir),
        ("--runtime", runtime),
    ]
    for flag, value in local_only:
        if value is not None:
            raise InputError(f"{flag}: only with --backend local (a host's own half or results)")
    if backend == "kubernetes":
        from glimmer.cli import kube_run

        kube_run.refuse_flags(_sim_only(flags), node, state_dir, sink_flags)
        kube = kube_run.KubeFlags(
            flags.files,
            profile,
            nodes,
            max_concurrent,
            kubeconfig,
            context,
            namespace or "default",
            force,
        )
        json_out = output is RunOutput.JSON
        raise typer.Exit(kube_run.main(kube, json_out=json_out, dry=dry, report=report))
    if backend == "slurm":
        from glimmer.cli import slurm_run

        slurm_run.refuse_sim_flags(_sim_only(flags), node)
        slurm = slurm_run.SlurmFlags(
            flags.files,
            profile,
            nodes,
            max_concurrent,
            state_dir,
            slurm_partition,
            runner_path,
            force,
        )
        json_out = output is RunOutput.JSON
        raise typer.Exit(
            slurm_run.main(slurm, json_out=json_out, dry=dry, report=report, sinks=sink_flags)
        )
    raise typer.Exit(
        run_main(
            flags,
            output=output,
            dry=dry,
            backend=backend,
            report=report,
            sinks=sink_flags,
            state_dir=state_dir,
        )
    )


def register(app: typer.Typer) -> None:
    """Add ``glimmer run`` to the app."""
    app.command("run")(run)
