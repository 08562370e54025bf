"""``glimmer run --dry-run``: the plan a run would pin, and its first execution, as text or JSON.

The decision and the plan come from :mod:`glimmer.plan.preview` (the planner's own
``start_run``); this module only lays them out.
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from glimmer.api.dump import to_wire
from glimmer.api.pinned import PlanDocument
from glimmer.api.run import BurnInRun
from glimmer.cli.layout import print_fitted
from glimmer.cli.run_evidence import GATE_SYMBOL
from glimmer.plan.decision import Refused, StartDecision
from glimmer.plan.env import execution_duration
from glimmer.plan.preview import FirstExecution, first_execution
from glimmer.verdict.text import name_some

MAX_TARGETS_NAMED = 8


def _gates(plan: PlanDocument, index: int) -> list[str]:
    spec = plan.tests[index].spec
    return [
        f"{g.metric} {GATE_SYMBOL.get(g.comparison.value, g.comparison.value)} {g.value}"
        for g in spec.thresholds or ()
    ]


def plan_json(run: BurnInRun, decision: StartDecision) -> dict[str, Any]:
    """The dry run as one JSON document: the run, and the plan or the refusal."""
    doc: dict[str, Any] = {"dryRun": True, "run": to_wire(run)}
    if isinstance(decision, Refused):
        doc["refused"] = {"kind": decision.kind, "message": decision.message}
        return doc
    plan = decision.plan
    doc["plan"] = plan.model_dump(mode="json", by_alias=True, exclude_none=True)
    first = first_execution(plan, run.metadata.namespace or "default")
    if first is not None:
        doc["firstExecution"] = {
            "test": first.test,
            "node": first.node,
            "role": first.role or None,
            "durationSeconds": first.duration_seconds,
            "env": [{"name": n, "value": v} for n, v in first.env],
        }
    return doc


def _first(console: Console, first: FirstExecution) -> None:
    role = f" as {first.role}" if first.role else ""
    console.print(
        f"First execution: {first.test} on {first.node}{role}, {first.duration_seconds}s; env:",
        markup=False,
    )
    for name, value in first.env:
        console.print(f"  {name}={value}", markup=False, soft_wrap=True)


def render_plan(console: Console, run: BurnInRun, decision: StartDecision) -> None:
    """The plan as a table, the targets and the first execution's environment."""
    if isinstance(decision, Refused):
        console.print(
            f"The run would be refused at start ({decision.kind}): {decision.message}",
            markup=False,
            soft_wrap=True,
        )
        return
    plan = decision.plan
    console.print(
        f"Plan of BurnInRun {run.name} (profile {run.spec.profile_ref}), "
        f"cap {run.spec.max_concurrent_nodes} — dry run, nothing created",
        markup=False,
        soft_wrap=True,
    )
    console.print(
        f"Targets ({len(plan.targets)}): {name_some(plan.targets, MAX_TARGETS_NAMED)}",
        markup=False,
        soft_wrap=True,
    )
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("test", "kind", "scope", "duration", "repeats", "required", "gates"):
        table.add_column(column, no_wrap=column == "test")
    for i, test in enumerate(plan.tests):
        spec = test.spec
        table.add_row(
            test.name,
            spec.kind,
            spec.scope.value,
            f"{execution_duration(spec)}s",
            str(spec.repeat_count),
            "yes" if test.required else "no",
            "; ".join(_gates(plan, i)) or "-",
        )
    print_fitted(console, table)
    first = first_execution(plan, run.metadata.namespace or "default")
    if first is not None:
        _first(console, first)
