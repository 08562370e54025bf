"""``glimmer certify cluster-info | status | cancel`` and ``certify run --backend kubernetes``:
the certification commands that talk to a cluster (specs/certify.md §8).

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
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from glimmer.api.certify.certification import Certification
from glimmer.api.dump import to_wire
from glimmer.api.fleet_sched import parse_duration
from glimmer.api.load import of_kind
from glimmer.backends.common.registry import KUBERNETES
from glimmer.certify.catalog.gpu import PRODUCT_LABEL, node_defaults, parse_product
from glimmer.certify.catalog.naming import NAME_MAX, truncate
from glimmer.certify.platform.detect import (
    GPU_PRESENT_LABEL,
    GPU_RESOURCE,
    MLNX_RESOURCE,
    RDMA_PREFIX,
    allocatable,
    allocatable_count,
    first_node_platform,
    node_labels,
    node_name,
    platform_of,
)
from glimmer.certify.report_card import render
from glimmer.certify.result import FAILED, CertResult, from_doc
from glimmer.cli.certify_run import Output, card_width
from glimmer.cli.output import print_json
from glimmer.cli.run_inputs import load_kinds
from glimmer.engine.backend import BackendError
from glimmer.errors import InputError, Location

Obj = dict[str, Any]
T = TypeVar("T")

# What the Certification controller writes when every category is terminal (the names must
# equal glimmer.operator.certify.workflow_result's; a test holds them equal: the CLI may not
# import the operator's controllers, which import kopf).
REPORT_KEY = "result.json"
SUCCEEDED, FAILED_CONDITION, IN_PROGRESS = "Succeeded", "Failed", "InProgress"
TRIO = (IN_PROGRESS, SUCCEEDED, FAILED_CONDITION)
DEFAULT_NAMESPACE = "default"
# The topology labels cluster-info counts domains of (NVLink cliques, racks).
TOPOLOGY_LABELS = ("nvidia.com/gpu.clique", "rack")


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


def report_name(certification: str) -> str:
    """The ConfigMap holding a Certification's report."""
    return truncate(f"{certification}-report", NAME_MAX)


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


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    got = obj.get("metadata")
    return got if isinstance(got, Mapping) else {}


def _status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    got = obj.get("status")
    return got if isinstance(got, Mapping) else {}


def true_condition(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The member of the exclusive trio that is True, or None (no controller wrote one)."""
    for c in _status(obj).get("conditions") or ():
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
    written = [c for c in _status(obj).get("categoryStatuses") or () if isinstance(c, Mapping)]
    if written:
        return written
    spec = obj.get("spec") if isinstance(obj.get("spec"), Mapping) else {}
    return [
        {"domain": c.get("domain", ""), "variant": c.get("variant", ""), "status": "Pending"}
        for c in (spec or {}).get("categories") or ()
        if isinstance(c, Mapping)
    ]


def _category_ref(c: Mapping[str, Any]) -> str:
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
    meta = _meta(obj)
    head = f"Certification {meta.get('namespace', DEFAULT_NAMESPACE)}/{meta.get('name', '')}"
    found = true_condition(obj)
    lines = [f"{head}: {phase_of(obj)}"]
    if found and (found.get("reason") or found.get("message")):
        lines.append(f"  {found.get('reason', '')}: {found.get('message', '')}".rstrip(": "))
    cats = categories_of(obj)
    width = max((len(_category_ref(c)) for c in cats), default=0)
    for c in cats:
        flow = (c.get("workflowRef") or {}).get("name") if c.get("workflowRef") else None
        tail = f"  workflow {flow}" if flow else ""
        lines.append(f"  {_category_ref(c):<{width}}  {c.get('status', 'Pending'):<10}{tail}")
    return lines


def status_doc(obj: Mapping[str, Any], verdict: Verdict | None) -> Obj:
    meta = _meta(obj)
    return {
        "name": meta.get("name"),
        "namespace": meta.get("namespace", DEFAULT_NAMESPACE),
        "phase": phase_of(obj),
        "conditions": list(_status(obj).get("conditions") or []),
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
    got: Obj = found
    return got


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
    names = [str(_meta(w).get("name")) for w in flows]
    if names:
        typer.echo(
            f"its controller deletes its {len(names)} Workflow(s) and their Jobs: "
            + ", ".join(names)
        )
    else:
        typer.echo("it had made no Workflow yet")


# ---- cluster-info -----------------------------------------------------------------------


def _counts(values: Sequence[str]) -> Obj:
    return dict(sorted(Counter(values).items(), key=lambda kv: (-kv[1], kv[0])))


def cluster_doc(nodes: Sequence[Mapping[str, Any]], certifications: Sequence[Obj]) -> Obj:
    """What cluster-info reports, from the Node objects (plain JSON)."""
    gpu = [n for n in nodes if node_labels(n).get(GPU_PRESENT_LABEL) == "true"]
    products = [node_labels(n).get(PRODUCT_LABEL, "") for n in gpu]
    archs = [parse_product(p) for p in products if p]
    arch_counts = _counts(archs)
    arch = next(iter(arch_counts), "")
    product = next((p for p in _counts([p for p in products if p]) if parse_product(p) == arch), "")
    platform = first_node_platform(gpu or nodes)
    gpus = [allocatable_count(n, GPU_RESOURCE) for n in gpu]
    nics: dict[str, Obj] = {}
    for n in gpu:
        for resource in allocatable(n):
            if resource.startswith(RDMA_PREFIX) or resource == MLNX_RESOURCE:
                count = allocatable_count(n, resource)
                shown = "unknown" if count is None else f"{count:g}"
                nics.setdefault(resource, {})
                nics[resource][shown] = nics[resource].get(shown, 0) + 1
    topology = {
        key: len({node_labels(n)[key] for n in gpu if key in node_labels(n)})
        for key in TOPOLOGY_LABELS
    }
    defaults = node_defaults(arch, platform) if arch else None
    return {
        "nodes": len(nodes),
        "gpuNodes": len(gpu),
        "cordoned": sorted(node_name(n) for n in gpu if (n.get("spec") or {}).get("unschedulable")),
        "platform": platform,
        "platforms": _counts([platform_of(n) for n in gpu or nodes]),
        "gpuArchitecture": arch,
        "gpuProduct": product,
        "architectures": arch_counts,
        "gpusPerNode": _counts(["unknown" if g is None else f"{g:g}" for g in gpus]),
        "defaults": (
            {"gpusPerNode": defaults.gpus_per_node, "mlnxPerNode": defaults.mlnx_per_node}
            if defaults
            else None
        ),
        "nicResources": nics,
        "topologyDomains": {k: v for k, v in topology.items() if v},
        "certifications": [
            {"name": _meta(c).get("name"), "phase": phase_of(c)} for c in certifications
        ],
    }


def _spread(counts: Mapping[str, int], unit: str = "") -> str:
    return ", ".join(f"{value}{unit} on {n} node(s)" for value, n in counts.items()) or "none"


def cluster_lines(doc: Mapping[str, Any], namespace: str) -> list[str]:
    cordoned = doc["cordoned"]
    nodes = f"{doc['nodes']} ({doc['gpuNodes']} with GPUs"
    nodes += f", {len(cordoned)} cordoned: {', '.join(cordoned)})" if cordoned else ")"
    platform = doc["platform"]
    if len(doc["platforms"]) > 1:
        platform += f" (the first node's; seen: {_spread(doc['platforms'])})"
    gpu = doc["gpuArchitecture"] or "unknown"
    if doc["gpuProduct"]:
        gpu += f" ({doc['gpuProduct']})"
    if len(doc["architectures"]) > 1:
        gpu += f"; the majority of: {_spread(doc['architectures'])}"
    lines = [
        f"Nodes:          {nodes}",
        f"Platform:       {platform}",
        f"GPU:            {gpu}",
        f"GPUs per node:  {_spread(doc['gpusPerNode'])} (allocatable {GPU_RESOURCE})",
    ]
    if doc["defaults"]:
        d = doc["defaults"]
        lines.append(
            f"Defaults:       gpusPerNode {d['gpusPerNode']}, mlnxPerNode {d['mlnxPerNode']} "
            f"({doc['gpuArchitecture']} on {doc['platform']})"
        )
    nics = doc["nicResources"]
    shown = "; ".join(f"{r}: {_spread(c)}" for r, c in sorted(nics.items())) or "none"
    lines.append(f"NIC resources:  {shown}")
    domains = doc["topologyDomains"]
    if domains:
        lines.append(
            "Topology:       " + ", ".join(f"{k}: {v} domain(s)" for k, v in domains.items())
        )
    certs = doc["certifications"]
    listed = ", ".join(f"{c['name']} ({c['phase']})" for c in certs) or "none"
    lines.append(f"Certifications: {listed} (namespace {namespace})")
    return lines


def cluster_info(
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
    output: OutputOpt = Output.TABLE,
) -> None:
    """Print what a certification would find on the cluster.

    Nodes, the GPU product and architecture (the majority's), the platform, GPUs per node,
    NIC resources, topology domains and the namespace's Certifications."""
    ns = namespace or DEFAULT_NAMESPACE
    session = connect(kubeconfig, context)
    nodes = session.call("list nodes", lambda c: c.nodes())
    certs = session.call(f"list Certifications in {ns}", lambda c: c.certifications(ns))
    doc = cluster_doc(nodes, certs)
    if output is Output.JSON:
        print_json({"namespace": ns, **doc})
    else:
        typer.echo("\n".join(cluster_lines(doc, ns)))


# ---- certify run --backend kubernetes ---------------------------------------------------


def load_one(file: str, namespace: str | None) -> Certification:
    """The one Certification of ``file``, in the namespace it names or ``-n`` names."""
    loaded = load_kinds("-f", [file], (Certification,))
    found = of_kind(loaded, Certification)
    if len(found) != 1:
        raise InputError(
            f"holds {len(found)} Certifications; certify run runs one", Location(file=file)
        )
    cert, item = found[0]
    written = cert.metadata.namespace
    if written and namespace and written != namespace:
        raise InputError(
            f"the Certification is in namespace {written} and -n says {namespace}: drop one",
            item.locate("metadata.namespace"),
        )
    cert.metadata.namespace = written or namespace or DEFAULT_NAMESPACE
    return cert


def _same_spec(stored: Mapping[str, Any], cert: Certification) -> bool:
    # Both read through the model, defaults dropped: the API server stamps schema defaults.
    try:
        held = Certification.model_validate({**stored, "status": None})
    except ValueError:
        return False

    def plain(c: Certification) -> Any:
        return c.spec.model_dump(mode="json", by_alias=True, exclude_defaults=True)

    return bool(plain(held) == plain(cert))


def submit_or_follow(session: Session, cert: Certification) -> str:
    """Create the Certification, or follow the one of its name with the same spec (a spec is
    immutable: another spec under that name is refused)."""
    ns, name = cert.metadata.namespace or DEFAULT_NAMESPACE, cert.name
    held = get_certification_or_none(session, ns, name)
    if held is None:
        body = to_wire(cert)
        body.pop("status", None)
        session.call(f"create Certification {ns}/{name}", lambda c: c.create_certification(body))
        return "created"
    if not _same_spec(held, cert):
        raise InputError(
            f"Certification {ns}/{name} already exists with another spec (a spec is immutable): "
            f"cancel it first (glimmer certify cancel {name} -n {ns}) or choose another name"
        )
    return "finished earlier" if terminal(held) else "following the one already under way"


def follow(
    session: Session,
    ns: str,
    name: str,
    human: bool,
    timeout: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Obj | None:
    """Read the Certification until it is terminal or ``timeout`` seconds passed (then the last
    read, not terminal); None when it was deleted meanwhile. Prints each category's status as
    it changes; says once when no controller writes a status."""
    started, warned = clock(), False
    seen: dict[str, str] = {}
    while True:
        obj = get_certification_or_none(session, ns, name)
        if obj is None:
            return None
        if human:
            for c in categories_of(obj):
                ref, now = _category_ref(c), str(c.get("status", "Pending"))
                if seen.get(ref) != now:
                    seen[ref] = now
                    typer.echo(f"  {ref}: {now}")
        if terminal(obj) or (timeout is not None and clock() - started >= timeout):
            got: Obj = obj
            return got
        if not _status(obj) and not warned and clock() - started > TIMING.unclaimed_seconds:
            warned = True
            print(
                f"glimmer: Certification {ns}/{name} has no status after "
                f"{TIMING.unclaimed_seconds:.0f} s: no operator seems to watch this namespace "
                "(install one: glimmer operator manifests | kubectl apply -f -)",
                file=sys.stderr,
            )
        time.sleep(TIMING.poll_seconds)


def timeout_seconds(text: str | None) -> float | None:
    """``--timeout`` as seconds (a Go duration: 30m, 2h, 1h30m); None: wait to the end."""
    if text is None:
        return None
    try:
        seconds = parse_duration(text)
    except ValueError:
        seconds = -1.0
    if seconds <= 0:
        raise InputError(f"--timeout {text}: a positive duration such as 30m, 2h or 1h30m")
    return seconds


def run_on_cluster(
    file: str,
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
    json_out: bool,
    timeout: str | None = None,
) -> int:
    """``glimmer certify run --backend kubernetes``: create, follow, print the report card;
    the exit code."""
    limit = timeout_seconds(timeout)
    cert = load_one(file, namespace)
    session = connect(kubeconfig, context)
    ns, name = cert.metadata.namespace or DEFAULT_NAMESPACE, cert.name
    how = submit_or_follow(session, cert)
    human = not json_out
    if human:
        typer.echo(f"glimmer certify run {ns}/{name}: Certification on a Kubernetes cluster, {how}")
        typer.echo(f"  watch      kubectl get cert -n {ns} {name} -w")
    final = follow(session, ns, name, human, limit)
    if final is None:
        print(f"glimmer: Certification {ns}/{name} was deleted; not certified", file=sys.stderr)
        return 1
    if not terminal(final):
        # Not a verdict: the Certification goes on in the cluster; say where it stands.
        if json_out:
            print_json(status_doc(final, None))
        else:
            typer.echo("\n" + "\n".join(summary_lines(final)))
        print(
            f"glimmer: Certification {ns}/{name} is still {phase_of(final)} after --timeout "
            f"{timeout}; not certified yet. It goes on in the cluster: glimmer certify status "
            f"{name} -n {ns} (or cancel it: glimmer certify cancel {name} -n {ns})",
            file=sys.stderr,
        )
        return 1
    if human:
        typer.echo("")
    return show_verdict(
        final, wait_for_report(session, ns, name), Output.JSON if json_out else Output.TABLE
    )


def register(certify_app: typer.Typer) -> None:
    """Add ``cluster-info``, ``status`` and ``cancel`` to the ``certify`` sub-app."""
    certify_app.command("cluster-info")(cluster_info)
    certify_app.command("status")(status)
    certify_app.command("cancel")(cancel)
