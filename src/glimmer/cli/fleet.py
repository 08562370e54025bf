"""``glimmer fleet validate|show|topology|generate`` (and, from fleet_live, telemetry|serve).

Formatting only: reading, building and querying the fleet is glimmer.fleet's work.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from glimmer.api.fleet import Fleet
from glimmer.api.fleet_load import LoadedFleet
from glimmer.api.load import Loaded
from glimmer.backends.common.registry import SIM
from glimmer.cli import fleet_live
from glimmer.cli.layout import print_fitted
from glimmer.cli.output import console, print_json
from glimmer.errors import InputError, InputErrors, Location
from glimmer.fleet import faultspec
from glimmer.fleet.export import summary, to_dot, to_json
from glimmer.fleet.generate import PLANS, generate, to_yaml
from glimmer.fleet.load import builtin_names, read_fleet, topology_of
from glimmer.fleet.topology import Topology
from glimmer.verdict.text import plural

fleet_app = typer.Typer(
    name="fleet",
    help="Declared GPU fleets: validate, inspect, export and generate them.",
    no_args_is_help=True,
)

FleetOpt = Annotated[
    str,
    typer.Option(
        "--fleet",
        help="Built-in fleet name (ai-factory, hgx-1k …) or a Fleet YAML/JSON file.",
    ),
]


class Output(StrEnum):
    TABLE = "table"
    JSON = "json"


class TopologyOutput(StrEnum):
    TABLE = "table"
    JSON = "json"
    DOT = "dot"


OutputOpt = Annotated[Output, typer.Option("--output", "-o", help="table (default) or json.")]


def _load(ref: str) -> Topology:
    return topology_of(read_fleet(ref))


def _check_declared_faults(loaded: LoadedFleet, topo: Topology) -> None:
    # The fleet layer checks a fault's shape and that its target exists; whether the mode
    # exists and accepts that target is the simulator's table, asked here so that validate
    # catches what telemetry, serve and run would refuse later.
    check = SIM.fault_check(topo)
    for index, declared in enumerate(topo.fleet.spec.faults):
        field = f"spec.faults[{index}]"
        try:
            check(faultspec.from_declared(declared), "declared fault")
        except InputError as e:
            raise InputError(
                e.message,
                Location(
                    file=loaded.source,
                    document=loaded.document,
                    obj=f"Fleet/{topo.name}",
                    field=field,
                    line=loaded.lines.get(field),
                ),
            ) from None


def check_fleet(loaded: LoadedFleet) -> Topology:
    """Every rule a Fleet must pass: its topology builds and its declared faults are modes the
    simulator knows, on targets they accept. Raises the first problem as an InputError."""
    topo = topology_of(loaded)
    _check_declared_faults(loaded, topo)
    return topo


def fleet_problems(loaded: Sequence[Loaded]) -> list[InputError]:
    """The problems of every Fleet among resources loaded by ``glimmer validate``/``lint``: the
    loader checked each document's fields; this builds each one as ``fleet validate`` does."""
    problems: list[InputError] = []
    for item in loaded:
        if isinstance(item.obj, Fleet):
            try:
                check_fleet(LoadedFleet(item.obj, item.source, item.document, item.lines))
            except InputErrors as e:
                problems.extend(e.errors)
            except InputError as e:
                problems.append(e)
    return problems


@fleet_app.command("validate")
def validate(fleet: FleetOpt = "ai-factory", output: OutputOpt = Output.TABLE) -> None:
    """Check a fleet declaration, build its topology and check its declared faults against the
    simulator's mode table; exit 2 with the first problem."""
    topo = check_fleet(read_fleet(fleet))
    facts = summary(topo)
    if output is Output.JSON:
        print_json({"valid": True, **facts})
        return
    counts = ", ".join(
        f"{facts[key]} {plural(facts[key], word)}"
        for key, word in (
            ("nodes", "node"),
            ("gpus", "GPU"),
            ("racks", "rack"),
            ("nvlinkDomains", "NVLink domain"),
            ("nvlinkEdges", "NVLink edge"),
        )
    )
    console.print(f"Fleet/{topo.name}: valid — {counts}", markup=False, soft_wrap=True)


def _pools(topo: Topology) -> list[dict[str, Any]]:
    out = []
    for pool in sorted(topo.fleet.spec.pools, key=lambda p: p.name):
        nodes = [n for n in topo.nodes if n.pool == pool.name]
        out.append(
            {
                "name": pool.name,
                "shape": pool.shape,
                "model": pool.gpu_model,
                "nodes": pool.node_count,
                "gpusPerNode": pool.gpus_per_node,
                "racks": sorted({topo.racks[n.rack].key for n in nodes}),
                "firstHost": nodes[0].hostname if nodes else None,
                "lastHost": nodes[-1].hostname if nodes else None,
            }
        )
    return out


@fleet_app.command("show")
def show(
    fleet: FleetOpt = "ai-factory",
    output: OutputOpt = Output.TABLE,
    nodes: Annotated[bool, typer.Option("--nodes", help="Also list every node.")] = False,
) -> None:
    """Summarise a fleet: counts, pools and racks (and nodes with --nodes)."""
    topo = _load(fleet)
    pools = _pools(topo)
    if output is Output.JSON:
        doc: dict[str, Any] = {"summary": summary(topo), "pools": pools}
        doc["racks"] = [
            {"key": r.key, "shape": r.shape, "cooling": r.cooling, "heightU": r.height_u}
            for r in topo.racks
        ]
        if nodes:
            doc["nodes"] = [
                {
                    "hostname": n.hostname,
                    "pool": n.pool,
                    "rack": topo.racks[n.rack].key,
                    "slot": n.slot,
                    "gpus": n.gpu_count,
                    "ip": n.ip or None,
                }
                for n in topo.nodes
            ]
        print_json(doc)
        return
    facts = summary(topo)
    head = Table(title=f"Fleet/{topo.name}", box=box.SIMPLE, show_header=False)
    for k in (
        "racks",
        "pools",
        "nodes",
        "gpus",
        "nvlinkDomains",
        "nvswitches",
        "nvlinkEdges",
        "fabrics",
        "fabricSwitches",
        "nicPorts",
    ):
        head.add_row(k, str(facts[k]))
    head.add_row("models", ", ".join(f"{k}×{v}" for k, v in facts["models"].items()))
    console.print(head)
    table = Table(
        "pool", "shape", "model", "nodes", "GPUs/node", "racks", "first host", box=box.SIMPLE
    )
    for p in pools:
        racks = p["racks"][0] if len(p["racks"]) == 1 else f"{len(p['racks'])} racks"
        table.add_row(
            p["name"],
            p["shape"],
            p["model"],
            str(p["nodes"]),
            str(p["gpusPerNode"]),
            racks,
            str(p["firstHost"]),
        )
    print_fitted(console, table)
    if nodes:
        nt = Table("hostname", "pool", "rack", "slot", "GPUs", "ip", box=box.SIMPLE)
        for n in topo.nodes:
            nt.add_row(
                n.hostname, n.pool, topo.racks[n.rack].key, str(n.slot), str(n.gpu_count), n.ip
            )
        print_fitted(console, nt)


def _reach(topo: Topology, key: str) -> dict[str, Any]:
    kind = topo.kind_of(key)
    if kind is None:
        raise InputError(f"no entity with key {key!r} in Fleet/{topo.name}")
    gpus = topo.gpus_reached(key)
    return {
        "key": key,
        "kind": kind,
        "gpus": [topo.gpu_keys[int(i)] for i in gpus],
        "nodes": [topo.nodes[int(i)].key for i in topo.nodes_reached(key)],
        "nvlinkEdges": int(topo.edges_reached(key).size),
    }


@fleet_app.command("topology")
def topology(
    fleet: FleetOpt = "ai-factory",
    output: Annotated[
        TopologyOutput, typer.Option("--output", "-o", help="table (default), json or dot.")
    ] = TopologyOutput.TABLE,
    reach: Annotated[
        str | None, typer.Option("--reach", help="Show what a key (gpu:…, rack:…, …) reaches.")
    ] = None,
    gpus: Annotated[bool, typer.Option("--gpus", help="dot: draw GPUs and NVLinks.")] = False,
    edges: Annotated[
        bool, typer.Option("--edges/--no-edges", help="json: list every NVLink edge.")
    ] = True,
) -> None:
    """The topology graph: NVLink domains and fabrics, a reach query, or a JSON/dot export."""
    topo = _load(fleet)
    if reach is not None:
        found = _reach(topo, reach)
        if output is TopologyOutput.JSON:
            print_json(found)
            return
        console.print(
            f"{found['key']} ({found['kind']}) reaches {len(found['gpus'])} GPUs on "
            f"{len(found['nodes'])} nodes and {found['nvlinkEdges']} NVLink edges",
            markup=False,
        )
        for node in found["nodes"]:
            console.print(f"  {node}", markup=False)
        return
    if output is TopologyOutput.JSON:
        print(json.dumps(to_json(topo, edges=edges), indent=2))
        return
    if output is TopologyOutput.DOT:
        print(to_dot(topo, gpus=gpus), end="")
        return
    dt = Table(
        "domain",
        "kind",
        "GPUs",
        "switches",
        "edges",
        "partitions",
        box=box.SIMPLE,
        title="NVLink domains",
    )
    per_domain = {
        d.index: int(topo.edges_reached(d.key).size) for d in topo.domains[:200]
    }  # a table of thousands of domains helps no one; counts stop at 200 rows
    for d in topo.domains[:200]:
        dt.add_row(
            d.key,
            d.kind,
            str(len(d.gpus)),
            str(len(d.switches)),
            str(per_domain[d.index]),
            ", ".join(p.name for p in d.partitions),
        )
    if len(topo.domains) > 200:
        dt.caption = f"… and {len(topo.domains) - 200} more (use --output json)"
    print_fitted(console, dt)
    ft = Table("fabric", "role", "switches", "cables", "NIC ports", box=box.SIMPLE, title="Fabrics")
    for f in topo.fabrics:
        ports = sum(1 for n in topo.nodes for c in n.nics if c.fabric == f.name)
        ft.add_row(f.key, f.role, str(len(f.switches)), str(len(f.links)), str(ports))
    print_fitted(console, ft)


@fleet_app.command("generate")
def generate_cmd(
    gpus: Annotated[int, typer.Option("--gpus", help="At least this many GPUs.")],
    shape: Annotated[str, typer.Option("--shape", help="pcie, hgx or nvl72.")] = "hgx",
    out: Annotated[
        Path | None, typer.Option("--out", help="Write to this file (default: stdout).")
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="Fleet name (the seed); default <shape>-<gpus>.")
    ] = None,
) -> None:
    """Write a Fleet of any size on a rail-optimised fabric (it loads back as is)."""
    if shape not in PLANS:
        raise InputError(f"--shape must be one of {', '.join(PLANS)}, got {shape!r}")
    doc = generate(gpus, shape, name)
    text = to_yaml(doc, f"# Generated by `glimmer fleet generate --gpus {gpus} --shape {shape}`.\n")
    if out is None:
        print(text, end="")
        return
    out.write_text(text, encoding="utf-8")
    console.print(f"wrote {out} (Fleet/{doc['metadata']['name']})", markup=False)


@fleet_app.command("list")
def list_builtin(output: OutputOpt = Output.TABLE) -> None:
    """The built-in fleets."""
    names = builtin_names()
    if output is Output.JSON:
        print_json(names)
        return
    for n in names:
        console.print(n, markup=False)


fleet_live.register(fleet_app)


def register(app: typer.Typer) -> None:
    """Add ``glimmer fleet …`` to the glimmer app."""
    app.add_typer(fleet_app, name="fleet")
