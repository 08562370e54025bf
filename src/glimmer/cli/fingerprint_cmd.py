"""``glimmer fingerprint``: the NodeFingerprint of this host, or of simulated fleet nodes.

Capture lives in glimmer.fingerprint; this command picks the source and prints the resource.
With ``--against FILE`` the capture is folded into a stored NodeFingerprint, so drift shows on
its ``Drifted`` condition (and as a line on stderr); it is reported, never acted on, and the
exit code stays 0.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated

import typer

from glimmer.api.dump import dump
from glimmer.api.fingerprint import NodeFingerprint
from glimmer.api.load import of_kind
from glimmer.backends.common.registry import SIM
from glimmer.cli.run_inputs import load_kinds
from glimmer.errors import InputError
from glimmer.fingerprint.host import capture_host, host_name
from glimmer.fingerprint.identity import Identity
from glimmer.fingerprint.reconcile import observe
from glimmer.fingerprint.simulated import capture_simulated
from glimmer.fleet.load import load_topology


class Output(StrEnum):
    YAML = "yaml"
    JSON = "json"


def _fleet_identities(fleet: str, node: str | None, every: bool) -> list[tuple[str, Identity]]:
    if node is None and not every:
        raise InputError("--fleet needs --node NAME (or --all for every node)")
    topo = load_topology(fleet)
    views = {v.name: v for v in SIM.nodes(topo)}
    names = sorted(views) if every else [node or ""]
    out = []
    for name in names:
        view = views.get(name)
        if view is None:
            some = ", ".join(sorted(views)[:3])
            raise InputError(f"fleet {fleet} has no node {name!r} (nodes: {some}, ...)")
        identity = capture_simulated(
            topo, name, labels=view.labels, kernel=view.kernel, os_image=view.os_image
        )
        out.append((name, identity))
    return out


def _stored(paths: list[str]) -> dict[str, NodeFingerprint]:
    # A file with no NodeFingerprint would compare against nothing and report no drift.
    found = of_kind(load_kinds("--against", paths, (NodeFingerprint,)), NodeFingerprint)
    return {fp.spec.node_name: fp for fp, _ in found}


def fingerprint(
    fleet: Annotated[
        str | None,
        typer.Option(
            "--fleet", help="A simulated fleet (built-in name or file) instead of this host."
        ),
    ] = None,
    node: Annotated[str | None, typer.Option("--node", help="The fleet node to capture.")] = None,
    every: Annotated[bool, typer.Option("--all", help="Every node of the fleet.")] = False,
    against: Annotated[
        list[str] | None,
        typer.Option("--against", help="Stored NodeFingerprint(s) to compare with (drift)."),
    ] = None,
    namespace: Annotated[
        str | None, typer.Option("--namespace", help="Namespace to write on the object.")
    ] = None,
    output: Annotated[Output, typer.Option("--output", "-o", help="yaml or json.")] = Output.YAML,
) -> None:
    """Print the NodeFingerprint (salient identity and its v1 digest) of this host or of
    simulated fleet nodes."""
    if fleet is None:
        if node is not None or every:
            raise InputError("--node and --all need --fleet")
        captured = [(host_name(), capture_host())]
    else:
        captured = _fleet_identities(fleet, node, every)
    stored = _stored(against) if against else {}
    now = datetime.now(UTC)
    objects = []
    for name, identity in captured:
        obs = observe(stored.get(name), name, identity, now, namespace=namespace)
        if obs.conflict:
            raise InputError(obs.conflict)
        for event in obs.events:
            print(f"{event.type} {event.reason} {event.node}: {event.message}", file=sys.stderr)
        objects.append(obs.fingerprint)
    sys.stdout.write(dump(objects, output.value))


def register(app: typer.Typer) -> None:
    """Add ``glimmer fingerprint`` to the app."""
    app.command("fingerprint")(fingerprint)
