"""``glimmer metrics [NAME]``: the metric registry, or everything known about one name.

Formatting only: the facts come from glimmer.contract (registry, names, emitted sets).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from glimmer.cli.output import console, print_json
from glimmer.contract.emitted import kinds_emitting
from glimmer.contract.facts import MetricFacts, aliases_to, metric_facts
from glimmer.contract.registry import METRICS, MetricSpec, Unit
from glimmer.errors import InputError


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"


def _unit(unit: Unit) -> str:
    return unit.value or "none"


def _rank(spec: MetricSpec) -> str:
    return spec.combination.value if spec.combination else "unclassified"


def _row_json(spec: MetricSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "registered": True,
        "unit": _unit(spec.unit),
        "use": spec.use.value,
        "windowFold": spec.aggregation.value,
        "rankFold": _rank(spec),
        "description": spec.description,
        "emittedBy": list(kinds_emitting(spec.name)),
        "aliases": [{"kind": k, "rawKey": raw} for k, raw in aliases_to(spec.name)],
    }


def _facts_json(facts: MetricFacts) -> dict[str, Any]:
    if facts.spec is not None:
        return _row_json(facts.spec)
    return {
        "name": facts.name,
        "registered": False,
        "unit": _unit(facts.unit),
        "use": "Acceptance",  # open world: an unregistered name is assumed gateable
        "windowFold": "Last",
        "rankFold": "unclassified",
        "description": "",
        "emittedBy": list(facts.emitted_by),
        "aliases": [{"kind": k, "rawKey": raw} for k, raw in facts.aliases],
    }


# Below this width a description column would be squeezed to nothing, so each description goes
# under its name instead.
_WIDE = 120


def _print_all() -> None:
    wide = console.width >= _WIDE
    table = Table(title=f"Metric registry ({len(METRICS)} metrics)", box=box.SIMPLE_HEAD)
    table.add_column("name" if wide else "name / description", no_wrap=wide)
    table.add_column("unit", no_wrap=True)
    table.add_column("use", no_wrap=True)
    table.add_column("window fold" if wide else "window", no_wrap=True)
    table.add_column("rank fold" if wide else "rank", no_wrap=True)
    if wide:
        table.add_column("description", ratio=1)
    for spec in METRICS:
        cells = [_unit(spec.unit), spec.use.value, spec.aggregation.value, _rank(spec)]
        if wide:
            table.add_row(spec.name, *cells, spec.description)
        else:
            table.add_row(f"{spec.name}\n  {spec.description}", *cells)
    console.print(table, markup=False)


def _listing(items: tuple[str, ...] | list[str]) -> str:
    return ", ".join(items) if items else "none"


def _print_one(facts: MetricFacts) -> None:
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value")
    table.add_row("name", facts.name)
    if facts.spec is not None:
        spec = facts.spec
        table.add_row("registered", "yes")
        table.add_row("unit", _unit(spec.unit))
        table.add_row("use", spec.use.value)
        table.add_row("window fold", spec.aggregation.value)
        table.add_row("rank fold", _rank(spec))
        table.add_row("description", spec.description)
    else:
        table.add_row("registered", "no (legal: any well-formed name may be reported and gated)")
        table.add_row("unit", f"{_unit(facts.unit)} (read from the name's suffix)")
        table.add_row("grammar", "accepted")
        table.add_row("use", "Acceptance (assumed gateable)")
        table.add_row("window fold", "Last")
        table.add_row("rank fold", "unclassified")
    table.add_row("emitted by", _listing(facts.emitted_by))
    table.add_row("aliases", _listing([f"{raw} ({kind})" for kind, raw in facts.aliases]))
    console.print(table, markup=False)


def _rejection(facts: MetricFacts) -> str:
    message = str(facts.problem)
    by_target: dict[str, list[str]] = {}
    generic = ""
    for kind, target in facts.as_raw_key:
        if kind:
            by_target.setdefault(target, []).append(kind)
        else:
            generic = target
    hints = [f"{target} from {', '.join(kinds)}" for target, kinds in by_target.items()]
    if generic:
        hints.append(f"{generic} from {'any other kind' if hints else 'any kind'}")
    if hints:
        message += f". Printed as a raw key by a runner it becomes {'; '.join(hints)}"
    return message


def metrics(
    name: Annotated[
        str | None, typer.Argument(help="A metric name to explain; omit to list all.")
    ] = None,
    output: Annotated[
        OutputFormat, typer.Option("--output", "-o", help="table (default) or json.")
    ] = OutputFormat.TABLE,
) -> None:
    """Show the metric registry, or what glimmer knows about one metric NAME."""
    if name is None:
        if output is OutputFormat.JSON:
            print_json([_row_json(spec) for spec in METRICS])
        else:
            _print_all()
        return
    facts = metric_facts(name)
    if not facts.legal:
        raise InputError(_rejection(facts))
    if output is OutputFormat.JSON:
        print_json(_facts_json(facts))
    else:
        _print_one(facts)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the glimmer app."""
    app.command("metrics")(metrics)
