"""``glimmer run --backend kubernetes``: submit a BurnInRun to a cluster and follow it to its
verdict while the operator in the cluster (``glimmer operator run``, deploy/operator/) drives it.

On Kubernetes the operator is the run's one controller: it cordons, creates the runner pods and
writes the status, and only its leader acts. This command never makes a pass of its own, so it
can never act beside the operator; it creates the run (the same command names the same run, so
running it again after this command was stopped follows that run again, and running it again
after the run finished starts a new one in its place), prints each result as it settles, and
exits with the verdict. A run nobody picks up is said so, with what to install.

Profiles and tests are read where the operator reads them: the cluster's BurnInProfiles and
BurnInTests in the namespace, and the built-in library. Objects of those kinds in ``-f`` files
are refused with what to do instead (``kubectl apply -f``): submitting them here would leave the
cluster holding definitions nobody reviewed.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glimmer.api.load import of_kind
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.registry import KUBERNETES
from glimmer.cli.cluster_run import refuse_sim_flags, run_name, run_object, targets_of
from glimmer.cli.local_run import ResultLines
from glimmer.cli.output import console
from glimmer.cli.run_finish import report_to, show_final
from glimmer.cli.run_inputs import RUN_KINDS, SinkFlags, load_kinds
from glimmer.engine.backend import BackendError
from glimmer.engine.reconciler import TERMINAL_RUN_PHASES
from glimmer.errors import InputError, Location
from glimmer.plan.given import check_profile
from glimmer.reports.folder import refuse_unwritable

KUBERNETES_PROFILE = "host"  # what runs when no profile is named: vendor-free
POLL_SECONDS = 1.0  # between two reads of the run status
UNCLAIMED_SECONDS = 30.0  # a run with no status this long: say no operator picked it up
GONE_SECONDS = 60.0  # how long a finished run of the same name may take to go


@dataclass(frozen=True)
class KubeFlags:
    """The flags of ``glimmer run --backend kubernetes`` as typed."""

    files: tuple[str, ...] = ()
    profile: str | None = None
    nodes: str | None = None
    max_concurrent: int | None = None
    kubeconfig: str | None = None
    context: str | None = None
    namespace: str = "default"
    force: bool = False


def refuse_flags(
    given: list[str], node: str | None, state_dir: str | None, sinks: SinkFlags
) -> None:
    """A flag that means nothing on a cluster run by its operator is bad input, named."""
    refuse_sim_flags(given, node, "kubernetes")
    if state_dir is not None:
        raise InputError(
            "--state-dir: not with --backend kubernetes (the run lives in the cluster, as a "
            "BurnInRun object)"
        )
    if sinks.specs or sinks.state or sinks.secret_file or sinks.secret_env or sinks.ca:
        raise InputError(
            "--sink: not with --backend kubernetes (the operator delivers to the BurnInSinks "
            "the profile names; create them with kubectl apply -f)"
        )


def _cluster(flags: KubeFlags) -> Any:
    kubeconfig = Path(flags.kubeconfig).expanduser() if flags.kubeconfig else None
    if kubeconfig is not None and not kubeconfig.is_file():
        raise InputError(f"--kubeconfig {flags.kubeconfig}: no such file")
    try:
        backend = KUBERNETES.backend(kubeconfig, context=flags.context)
        known = backend.list_nodes()
    except BackendError as e:
        raise InputError(f"--backend kubernetes: the cluster does not answer: {e}") from None
    except Exception as e:  # lightkube's own configuration errors: a bad kubeconfig or context
        where = flags.kubeconfig or "$KUBECONFIG / ~/.kube/config"
        raise InputError(f"--kubeconfig {where}: cannot reach a cluster: {e}") from None
    return backend, known


def prepare(flags: KubeFlags) -> tuple[Any, BurnInRun]:
    """The cluster and the checked run, before anything is created; InputError otherwise."""
    if flags.max_concurrent is not None and flags.max_concurrent < 1:
        raise InputError(f"--max-concurrent {flags.max_concurrent}: must be at least 1")
    loaded = load_kinds("-f", flags.files, RUN_KINDS) if flags.files else []
    for item in loaded:
        if item.kind != "BurnInRun":
            raise InputError(
                f"{item.kind} {item.name}: the operator reads it from the cluster; apply it "
                "with `kubectl apply -f` first (glimmer run --backend kubernetes submits the "
                "BurnInRun only)",
                item.locate(),
            )
    runs = of_kind(loaded, BurnInRun)
    if len(runs) > 1:
        raise InputError("-f: several BurnInRuns given; glimmer run runs one")
    written = runs[0][0] if runs else None
    where = runs[0][1].locate("spec.profileRef") if runs and not flags.profile else Location()
    ref = flags.profile or (written.spec.profile_ref if written is not None else "")
    ref = ref or KUBERNETES_PROFILE
    backend, known = _cluster(flags)
    namespace = (written.metadata.namespace if written is not None else None) or flags.namespace
    try:
        in_cluster = backend.get_profile(namespace, ref)
        tests: dict[str, BurnInTestSpec] = dict(backend.get_tests(namespace))
    except BackendError as e:
        raise InputError(
            f"--backend kubernetes: cannot read the namespace {namespace}: {e}"
        ) from None
    check_profile(ref, {ref: in_cluster} if in_cluster is not None else {}, tests, where)
    targets = targets_of(flags.nodes, written, known)
    if not targets:
        raise InputError("--nodes: no node of the cluster matches the run's target")
    names = {n.name for n in known}
    unknown = [t for t in targets if t not in names]
    if unknown:
        raise InputError(f"--nodes: not a node of the cluster: {', '.join(unknown)}")
    run = run_object(
        written,
        ref,
        targets,
        run_name(ref, "k8s", namespace, targets),
        namespace=namespace,
        nodes_given=flags.nodes is not None,
        max_concurrent=flags.max_concurrent,
        force=flags.force,
    )
    return backend, run


def submit_or_follow(
    backend: Any, run: BurnInRun, clock: Callable[[], float] = time.monotonic
) -> str:
    """Create the run, or follow the one of its name still under way; a finished one is
    deleted first (the operator releases what it holds) and the new one created once it is
    gone. Says which."""
    namespace = run.metadata.namespace or "default"
    held = backend.get_run(namespace, run.name)
    if held is not None and (held.status is None or held.status.phase not in TERMINAL_RUN_PHASES):
        return "following the run already under way"
    if held is None:
        backend.submit(run)
        return "submitted"
    backend.delete_run(namespace, run.name)
    give_up = clock() + GONE_SECONDS
    while backend.get_run(namespace, run.name) is not None:
        if clock() > give_up:
            raise InputError(
                f"BurnInRun {namespace}/{run.name}: the finished run of that name is still "
                f"being deleted after {GONE_SECONDS:.0f} s (is the operator running?)"
            )
        time.sleep(POLL_SECONDS)
    backend.submit(run)
    return "submitted (the finished run of that name replaced)"


def follow(
    backend: Any, run: BurnInRun, human: bool, clock: Callable[[], float] = time.monotonic
) -> BurnInRun:
    """Read the run until its phase is terminal; the final run. Says once when no operator
    has given it a status for a while."""
    namespace = run.metadata.namespace or "default"
    lines = ResultLines() if human else None
    started, warned = clock(), False
    while True:
        current = backend.get_run(namespace, run.name)
        if current is None:
            raise InputError(f"BurnInRun {namespace}/{run.name}: deleted while it was followed")
        if lines is not None:
            lines(current)
        status = current.status
        if status is not None and status.phase in TERMINAL_RUN_PHASES:
            final: BurnInRun = current
            return final
        if status is None and not warned and clock() - started > UNCLAIMED_SECONDS:
            warned = True
            print(
                f"glimmer: BurnInRun {namespace}/{run.name} has no status after "
                f"{UNCLAIMED_SECONDS:.0f} s: no operator seems to watch this namespace "
                "(install one: glimmer operator manifests | kubectl apply -f -)",
                file=sys.stderr,
            )
        time.sleep(POLL_SECONDS)


def main(flags: KubeFlags, *, json_out: bool, dry: bool, report: str | None) -> int:
    """``glimmer run --backend kubernetes``, as an exit code (run_cmd's: 0 Passed, 1 Failed,
    3 Error, 4 Cancelled; bad input is an InputError, exit 2)."""
    from glimmer.cli.run_cmd import exit_code

    if dry:
        raise InputError(
            "--dry-run: not with --backend kubernetes (the operator plans the run in the "
            "cluster; `kubectl get bir NAME -o yaml` shows its plan annotation once admitted)"
        )
    out_dir = Path(report) if report is not None else None
    if out_dir is not None:
        refuse_unwritable(out_dir, "--report")
    backend, run = prepare(flags)
    how = submit_or_follow(backend, run)
    human = not json_out
    if human:
        namespace = run.metadata.namespace or "default"
        console.print(
            f"[bold]glimmer run[/bold] {namespace}/{run.name}: BurnInRun on a Kubernetes "
            f"cluster (backend kubernetes), {how}"
        )
        targets = ", ".join(run.spec.target.node_names or ())
        console.print(f"  profile    {run.spec.profile_ref}", markup=False)
        console.print(f"  nodes      {targets}", markup=False, soft_wrap=True)
        console.print(f"  watch      kubectl get bir -n {namespace} {run.name} -w", markup=False)
        console.print()
    final = follow(backend, run, human)
    show_final(final, human)
    if out_dir is not None:
        report_to(final, out_dir, human)
    return exit_code(final)
