"""``glimmer profiles``: the built-in profiles and tests, with their gates.

What a run's ``profileRef`` and a profile's ``testRef`` can name without a file of the user's.
Formatting only: the shipped profiles come from glimmer.plan.builtin.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from glimmer.api.profile import BurnInProfile, ProfileTest
from glimmer.api.test import BurnInTest, BurnInTestSpec
from glimmer.api.threshold import Threshold
from glimmer.cli.output import print_json
from glimmer.errors import InputError
from glimmer.plan.builtin import load_builtin

REQUIRED = "Required"


class ProfilesOutput(StrEnum):
    TABLE = "table"
    JSON = "json"


def _gate(threshold: Threshold) -> dict[str, str]:
    return {
        "metric": threshold.metric,
        "comparison": threshold.comparison.value,
        "value": threshold.value,
        "applicability": threshold.applicability.value,
    }


def _entry(entry: ProfileTest, index: int) -> dict[str, Any]:
    out: dict[str, Any] = {"name": entry.entry_name(index), "required": entry.required}
    if entry.variants:
        out["variants"] = [cell.name for cell in entry.variants]
    return out


def _test(name: str, spec: BurnInTestSpec) -> dict[str, Any]:
    return {
        "name": name,
        "kind": spec.kind,
        "scope": spec.scope.value,
        "durationSeconds": spec.duration_seconds,
        "gates": [_gate(t) for t in spec.thresholds or ()],
    }


def catalog() -> dict[str, list[dict[str, Any]]]:
    """The built-in profiles (their entries in order) and tests (their gates), file order."""
    profiles: list[dict[str, Any]] = []
    tests: list[dict[str, Any]] = []
    for item in load_builtin():
        if isinstance(item.obj, BurnInProfile):
            spec = item.obj.spec
            profiles.append(
                {
                    "name": item.name,
                    "failFast": spec.fail_fast,
                    "tests": [_entry(e, i) for i, e in enumerate(spec.tests)],
                }
            )
        elif isinstance(item.obj, BurnInTest):
            tests.append(_test(item.name, item.obj.spec))
    return {"profiles": profiles, "tests": tests}


def _gate_text(gate: dict[str, str]) -> str:
    text = f"{gate['metric']} {gate['comparison']} {gate['value']}"
    return text if gate["applicability"] == REQUIRED else f"{text} ({gate['applicability']})"


def _lines(found: dict[str, list[dict[str, Any]]]) -> list[str]:
    lines: list[str] = []
    if found["profiles"]:
        lines.append("Built-in profiles (glimmer run --profile NAME, or a run's profileRef):")
        for profile in found["profiles"]:
            policy = ", failFast" if profile["failFast"] else ""
            count = len(profile["tests"])
            lines.append(f"  {profile['name']} ({count} test{'' if count == 1 else 's'}{policy})")
            for entry in profile["tests"]:
                optional = "" if entry["required"] else " (optional)"
                cells = f" variants: {', '.join(entry['variants'])}" if "variants" in entry else ""
                lines.append(f"    {entry['name']}{optional}{cells}")
    if found["tests"]:
        if lines:
            lines.append("")
        lines.append("Built-in tests (a profile's testRef; a test of yours of that name wins):")
        for test in found["tests"]:
            lines.append(
                f"  {test['name']}: {test['kind']}, {test['scope']}, {test['durationSeconds']}s"
            )
            for gate in test["gates"] or ():
                lines.append(f"    {_gate_text(gate)}")
            if not test["gates"]:
                lines.append("    no gates")
    return lines


def _only(found: dict[str, list[dict[str, Any]]], name: str) -> dict[str, list[dict[str, Any]]]:
    picked = {key: [i for i in items if i["name"] == name] for key, items in found.items()}
    if not any(picked.values()):
        known = ", ".join(i["name"] for items in found.values() for i in items)
        raise InputError(f"NAME {name}: no built-in profile or test of that name (known: {known})")
    return picked


def profiles(
    name: Annotated[
        str | None,
        typer.Argument(metavar="NAME", help="One built-in profile or test (default: all)."),
    ] = None,
    output: Annotated[
        ProfilesOutput,
        typer.Option("--output", "-o", help="table (default) or json."),
    ] = ProfilesOutput.TABLE,
) -> None:
    """List the built-in profiles and tests, with each test's gates.

    Any profile may name a built-in test in its testRef; a BurnInTest of yours of the same
    name wins. Exit 2 for a NAME that is neither.
    """
    found = catalog()
    if name is not None:
        found = _only(found, name)
    if output is ProfilesOutput.JSON:
        print_json(found)
        return
    for line in _lines(found):
        print(line)


def register(app: typer.Typer) -> None:
    """Add ``glimmer profiles`` to the app."""
    app.command("profiles")(profiles)
