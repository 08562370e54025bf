"""``glimmer certify status | cancel``, and what every certification command that talks to a
cluster shares (specs/certify.md §8): the connection, a Certification's conditions, its report.
``cluster-info`` is :mod:`glimmer.cli.certify_cluster_info`, ``certify run --backend
kubernetes`` :mod:`glimmer.cli.certify_cluster_run`.

The operator's controllers do the work in the cluster (Certification -> one Workflow per
category -> Jobs); these commands create, read and delete a Certification and print what its
controller wrote: the category statuses, and once every category is terminal the report
document in ConfigMap ``<cert>-report`` (key ``result.json``), printed as the same report card
``certify run`` prints on the simulator. The verdict is never a pass without that report.

Exit codes, as on the simulator: 0 certified, 1 not (or no report to say so), 2 bad input (a
kubeconfig that cannot reach a cluster, a file, a name the cluster does not hold).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from glimmer.backends.common.registry import KUBERNETES
from glimmer.certify.report_card import render
from glimmer.certify.report_names import REPORT_KEY, report_name
from glimmer.certify.result import FAILED, CertResult, from_doc
from glimmer.cli.certify_run import Output, card_width
from glimmer.cli.output import print_json
from glimmer.engine.backend import BackendError
from glimmer.errors import InputError, Location

Obj = dict[str, Any]
T = TypeVar("T")

SUCCEEDED, FAILED_CONDITION, IN_PROGRESS = "Succeeded", "Failed", "InProgress"
TRIO = (IN_PROGRESS, SUCCEEDED, FAILED_CONDITION)
DEFAULT_NAMESPACE = "default"


@dataclass(frozen=True)
class Timing:
    """How the follower waits (tests shorten it)."""

    poll_seconds: float = 1.0  # between two reads of the Certification
    unclaimed_seconds: float = 30.0  # no status this long: no operator seems to watch
    report_seconds: float = 30.0  # terminal, and no report this long: say so, not a pass


TIMING = Timing()

# The cluster commands' own wording: unlike `certify run`, they have no --backend to qualify.
KubeconfigOpt = Annotated[
    str | None,
    typer.Option(
        metavar="FILE",
        help="The cluster's kubeconfig (default: $KUBECONFIG, ~/.kube/config, or the pod's "
        "service account).",
    ),
]
ContextOpt = Annotated[str | None, typer.Option(metavar="NAME", help="The kubeconfig context.")]
NamespaceOpt = Annotated[
    str | None,
    typer.Option(
        "--namespace", "-n", metavar="NS", help="The Certification's namespace (default)."
    ),
]
OutputOpt = Annotated[Output, typer.Option("--output", "-o", help="table (default) or json.")]


# ---- the cluster ------------------------------------------------------------------------


@dataclass(frozen=True)
class Session:
    """The cluster's certify client and the kubeconfig that named it (errors name it)."""

    cluster: Any
    where: str

    def call(self, what: str, fn: Callable[[Any], T]) -> T:
        """``fn(cluster)``; a failed API call is bad input naming the call and the kubeconfig
        (a cluster that does not answer, a grant the user lacks)."""
        try:
            return fn(self.cluster)
        except BackendError as e:
            raise InputError(f"--kubeconfig {self.where}: {what} failed: {e}") from None


def connect(kubeconfig: str | None, context: str | None) -> Session:
    """The cluster's certify client; a kubeconfig or context lightkube cannot use is bad input
    naming it. Nothing is read here: each command's first call is its own probe (a user who
    may read Certifications may not be allowed to list Nodes)."""
    path = Path(kubeconfig).expanduser() if kubeconfig else None
    if path is not None and not path.is_file():
        raise InputError("no such file", Location(file=kubeconfig, field="--kubeconfig"))
    where = kubeconfig or "$KUBECONFIG / ~/.kube/config"
    try:
        cluster = KUBERNETES.certify_client(path, context=context)
    except Exception as e:  # lightkube's own configuration errors: a bad kubeconfig or context
        what = f" (context {context})" if context else ""
        raise InputError(f"--kubeconfig {where}{what}: cannot reach a cluster: {e}") from None
    return Session(cluster, where)


def meta_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    got = obj.get("metadata")
    return got if isinstance(got, Mapping) else {}


def status_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    got = obj.get("status")
    return got if isinstance(got, Mapping) else {}


def true_condition(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The member of the exclusive trio that is True, or None (no controller wrote one)."""
    for c in status_of(obj).get("conditions") or ():
        if isinstance(c, Mapping) and c.get("type") in TRIO and c.get("status") == "True":
            return c
    return None


def phase_of(obj: Mapping[str, Any]) -> str:
    """InProgress, Succeeded, Failed, or Pending when no condition is written yet."""
    found = true_condition(obj)
    return str(found["type"]) if found else "Pending"


def terminal(obj: Mapping[str, Any]) -> bool:
    return phase_of(obj) in (SUCCEEDED, FAILED_CONDITION)


def categories_of(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The category statuses, else the spec's categories as Pending (none written yet)."""
    written = [c for c in status_of(obj).get("categoryStatuses") or () if isinstance(c, Mapping)]
    if written:
        return written
    spec = obj.get("spec") if isinstance(obj.get("spec"), Mapping) else {}
    return [
        {"domain": c.get("domain", ""), "variant": c.get("variant", ""), "status": "Pending"}
        for c in (spec or {}).get("categories") or ()
        if isinstance(c, Mapping)
    ]


def category_ref(c: Mapping[str, Any]) -> str:
    return f"{c.get('domain', '')}/{c.get('variant', '')}"


# ---- the report -------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """What a terminal Certification says: its report (None: none readable) and why not."""

    result: CertResult | None
    doc: Obj | None
    problem: str = ""

    def exit_code(self, phase: str) -> int:
        """0 certified, 1 not: a Failed condition or a FAILED report; no report is never a
        pass."""
        if self.result is None or phase == FAILED_CONDITION:
            return 1
        return 1 if self.result.result == FAILED else 0


def read_report(session: Session, namespace: str, name: str) -> Verdict:
    """The report of a Certification, from its ConfigMap."""
    where = f"ConfigMap {namespace}/{report_name(name)}"
    found = session.call(f"read {where}", lambda c: c.config_map(namespace, report_name(name)))
    if found is None:
        return Verdict(None, None, f"{where} does not exist: no report was written")
    text = (found.get("data") or {}).get(REPORT_KEY)
    if not isinstance(text, str):
        return Verdict(None, None, f"{where} holds no {REPORT_KEY}")
    try:
        doc = json.loads(text)
        return Verdict(from_doc(doc, f"{where} {REPORT_KEY}"), doc)
    except (ValueError, InputError) as e:
        message = e.message if isinstance(e, InputError) else f"not JSON ({e})"
        return Verdict(None, None, f"{where} {REPORT_KEY}: {message}")


def wait_for_report(
    session: Session, namespace: str, name: str, clock: Callable[[], float] = time.monotonic
) -> Verdict:
    """The report, read until it is there or ``TIMING.report_seconds`` passed (the controller
    writes it once every category is terminal, which may be a pass after the condition)."""
    give_up = clock() + TIMING.report_seconds
    while True:
        verdict = read_report(session, namespace, name)
        if verdict.result is not None or clock() >= give_up:
            return verdict
        time.sleep(TIMING.poll_seconds)


# ---- printing ---------------------------------------------------------------------------


def summary_lines(obj: Mapping[str, Any]) -> list[str]:
    """The Certification's phase and each category's status."""
    meta = meta_of(obj)
    head = f"Certification {meta.get('namespace', DEFAULT_NAMESPACE)}/{meta.get('name', '')}"
    found = true_condition(obj)
    lines = [f"{head}: {phase_of(obj)}"]
    if found and (found.get("reason") or found.get("message")):
        lines.append(f"  {found.get('reason', '')}: {found.get('message', '')}".rstrip(": "))
    cats = categories_of(obj)
    width = max((len(category_ref(c)) for c in cats), default=0)
    for c in cats:
        flow = (c.get("workflowRef") or {}).get("name")
        tail = f"  workflow {flow}" if flow else ""
        lines.append(f"  {category_ref(c):<{width}}  {c.get('status', 'Pending'):<10}{tail}")
    return lines


def status_doc(obj: Mapping[str, Any], verdict: Verdict | None) -> Obj:
    meta = meta_of(obj)
    return {
        "name": meta.get("name"),
        "namespace": meta.get("namespace", DEFAULT_NAMESPACE),
        "phase": phase_of(obj),
        "conditions": list(status_of(obj).get("conditions") or []),
        "categoryStatuses": [dict(c) for c in categories_of(obj)],
        "result": verdict.doc if verdict else None,
        "problem": verdict.problem if verdict and verdict.problem else None,
    }


def show_verdict(obj: Mapping[str, Any], verdict: Verdict, output: Output) -> int:
    """Print the report (card or JSON) of a terminal Certification; its exit code."""
    code = verdict.exit_code(phase_of(obj))
    if output is Output.JSON:
        print_json(status_doc(obj, verdict))
    elif verdict.result is not None:
        typer.echo(render(verdict.result, card_width()), nl=False)
    if verdict.problem:
        print(f"glimmer: {verdict.problem}; not certified", file=sys.stderr)
    elif code and verdict.result is not None and verdict.result.result != FAILED:
        print(
            f"glimmer: the Certification is {phase_of(obj)}: "
            f"{(true_condition(obj) or {}).get('message', '')}; not certified",
            file=sys.stderr,
        )
    return code


# ---- status, cancel ---------------------------------------------------------------------


def get_certification_or_none(session: Session, namespace: str, name: str) -> Obj | None:
    found: Obj | None = session.call(
        f"read Certification {namespace}/{name}", lambda c: c.certification(namespace, name)
    )
    return found


def get_certification(session: Session, namespace: str, name: str) -> Obj:
    found = get_certification_or_none(session, namespace, name)
    if found is None:
        raise InputError(f"no Certification {name} in namespace {namespace}")
    return found


def status(
    name: Annotated[str, typer.Argument(help="The Certification's name.")],
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
    output: OutputOpt = Output.TABLE,
) -> None:
    """Print a Certification's progress, and its report card once it is finished.

    Exit 0 certified (or still running), 1 not certified, 2 no such Certification."""
    ns = namespace or DEFAULT_NAMESPACE
    session = connect(kubeconfig, context)
    obj = get_certification(session, ns, name)
    if not terminal(obj):
        if output is Output.JSON:
            print_json(status_doc(obj, None))
        else:
            typer.echo("\n".join(summary_lines(obj)))
        raise typer.Exit(0)
    if output is Output.TABLE:
        typer.echo("\n".join(summary_lines(obj)) + "\n")
    raise typer.Exit(show_verdict(obj, read_report(session, ns, name), output))


def cancel(
    name: Annotated[str, typer.Argument(help="The Certification's name.")],
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Delete a Certification; its controller deletes its Workflows (and their Jobs)."""
    ns = namespace or DEFAULT_NAMESPACE
    session = connect(kubeconfig, context)
    obj = get_certification(session, ns, name)
    flows = session.call(f"list Workflows of {ns}/{name}", lambda c: c.workflows_of(ns, name))
    try:
        session.call(
            f"delete Certification {ns}/{name}", lambda c: c.delete_certification(ns, name)
        )
    except InputError:
        if get_certification_or_none(session, ns, name) is not None:
            raise
        # Gone between the read and the delete (another cancel): what was asked is done.
    typer.echo(f"deleted Certification {ns}/{name} ({phase_of(obj)})")
    names = [str(meta_of(w).get("name")) for w in flows]
    if names:
        typer.echo(
            f"its controller deletes its {len(names)} Workflow(s) and their Jobs: "
            + ", ".join(names)
        )
    else:
        typer.echo("it had made no Workflow yet")


def register(certify_app: typer.Typer) -> None:
    """Add ``cluster-info``, ``status`` and ``cancel`` to the ``certify`` sub-app."""
    # Imported here: that module builds on this one.
    from glimmer.cli.certify_cluster_info import cluster_info

    certify_app.command("cluster-info")(cluster_info)
    certify_app.command("status")(status)
    certify_app.command("cancel")(cancel)
