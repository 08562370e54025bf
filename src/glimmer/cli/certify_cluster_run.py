"""``glimmer certify run -f cert.yaml --backend kubernetes``: create the Certification on the
cluster (or follow the one of its name and spec), follow its categories until it is terminal,
and print the report card its controller wrote, as ``certify run`` does on the simulator.

Exit codes as there: 0 certified, 1 not (a Failed condition, a FAILED report, no report, a
Certification deleted meanwhile, or still running at ``--timeout``), 2 bad input.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

import typer

from glimmer.api.certify.certification import Certification
from glimmer.api.dump import to_wire
from glimmer.api.fleet_sched import parse_duration
from glimmer.api.load import of_kind
from glimmer.cli import certify_cluster as base
from glimmer.cli.certify_cluster import (
    DEFAULT_NAMESPACE,
    Obj,
    Session,
    categories_of,
    category_ref,
    connect,
    get_certification_or_none,
    phase_of,
    show_verdict,
    status_doc,
    status_of,
    summary_lines,
    terminal,
    wait_for_report,
)
from glimmer.cli.certify_run import Output
from glimmer.cli.output import print_json
from glimmer.cli.run_inputs import load_kinds
from glimmer.errors import InputError, Location


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
                ref, now = category_ref(c), str(c.get("status", "Pending"))
                if seen.get(ref) != now:
                    seen[ref] = now
                    typer.echo(f"  {ref}: {now}")
        if terminal(obj) or (timeout is not None and clock() - started >= timeout):
            got: Obj = obj
            return got
        if not status_of(obj) and not warned and clock() - started > base.TIMING.unclaimed_seconds:
            warned = True
            print(
                f"glimmer: Certification {ns}/{name} has no status after "
                f"{base.TIMING.unclaimed_seconds:.0f} s: no operator seems to watch this namespace "
                "(install one: glimmer operator manifests | kubectl apply -f -)",
                file=sys.stderr,
            )
        time.sleep(base.TIMING.poll_seconds)


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
