"""``glimmer baseline``: ship thresholdless, measure, then pin — done for the user.

``strip`` writes a thresholdless copy of a profile for a baseline run (which refuses gates);
``derive`` reads finished baseline runs and writes the profile back with gates derived from the
fleet's distribution, each commented with what it was made of. The rules live in
glimmer.baseline; this module reads flags and files and writes text.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from glimmer.api.dump import dump_yaml
from glimmer.api.load import Loaded, load_paths, of_kind
from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTest, BurnInTestSpec
from glimmer.baseline.collect import collect, refusal
from glimmer.baseline.derive import Derivation, DerivedTest, derive
from glimmer.baseline.rules import DEFAULT_K, DEFAULT_MIN_MARGIN, DEFAULT_MIN_SAMPLES
from glimmer.baseline.suite import Suite, thresholdless
from glimmer.baseline.write import render
from glimmer.cli.output import err_console
from glimmer.cli.run_inputs import load_kinds
from glimmer.errors import InputError, Location
from glimmer.plan.builtin import builtin_profile_names, profile_or_builtin

baseline_app = typer.Typer(
    name="baseline",
    help="Fleet baselines: strip a profile's gates, measure, derive gates from the fleet.",
    no_args_is_help=True,
)

ProfileOpt = Annotated[
    str,
    typer.Option(
        "--profile", "-p", help="A built-in profile, one loaded with --file, or a profile file."
    ),
]
FilesOpt = Annotated[
    list[str] | None,
    typer.Option("--file", "-f", help="Tests and profiles (YAML/JSON); repeatable."),
]
OutOpt = Annotated[str, typer.Option("--out", help="Where to write the YAML ('-': stdout).")]


def _tests_of(loaded: list[Loaded]) -> dict[str, BurnInTestSpec]:
    return {item.name: test.spec for test, item in of_kind(loaded, BurnInTest)}


def _suite(profile: str, files: list[str]) -> Suite:
    """The profile named (or the one profile in the file named) and the tests it can use."""
    # A --file that says nothing read here (empty, a Certification, a Fleet) is refused naming
    # what it holds: it must not fall back to a built-in profile quietly.
    loaded = load_kinds("--file", files, (BurnInTest, BurnInProfile)) if files else []
    profiles = {item.name: p for p, item in of_kind(loaded, BurnInProfile)}
    if profile not in profiles and Path(profile).is_file():
        own = load_paths([profile])
        found = [p for p, _ in of_kind(own, BurnInProfile)]
        if len(found) != 1:
            raise InputError(
                f"holds {len(found)} BurnInProfiles; name one with --profile and pass the file "
                "with --file",
                Location(file=profile),
            )
        loaded += own
        profiles = {found[0].name: found[0]}
        profile = found[0].name
    resolved = profile_or_builtin(profile, profiles.get(profile), _tests_of(loaded))
    if resolved is None:
        known = ", ".join(builtin_profile_names())
        raise InputError(
            f"unknown profile {profile!r}: not a file, not in the files given, and not built in "
            f"(built-in: {known})",
            Location(field="--profile"),
        )
    return Suite(*resolved)


def _runs(paths: list[str]) -> list[BurnInRun]:
    loaded = load_paths(paths)
    found = of_kind(loaded, BurnInRun)
    if not found:
        raise InputError("no BurnInRun in the files given", Location(file=", ".join(paths)))
    for run, item in found:
        why = refusal(run)
        if why is not None:
            raise InputError(f"BurnInRun {run.name} {why}", item.locate("spec.baseline"))
    return [run for run, _ in found]


def _write(text: str, output: str) -> None:
    if output == "-":
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror or e}", Location(file=output)) from None


def _test_lines(test: DerivedTest) -> list[str]:
    name = escape(test.planned.name)
    if not test.results:
        return [f"  {name}: no passing baseline results"]
    lines = []
    for gate in test.gates:
        if gate.loosened_for:
            units = escape(", ".join(u.unit for u in gate.loosened_for))
            lines.append(f"  review {name} {gate.threshold.metric}: loosened to pass {units}")
    # One line per reason: a product with two nodes declines every metric for the same one.
    by_reason: dict[str, list[str]] = {}
    for d in test.declined:
        by_reason.setdefault(d.reason, []).append(d.metric)
    for reason, metrics in by_reason.items():
        named = metrics[0] if len(metrics) == 1 else f"{len(metrics)} metrics"
        lines.append(f"  not gated {name} {named}: {escape(reason)}")
    for source in test.source:
        t = source.threshold
        verb = "kept" if source.kept else "dropped"
        lines.append(
            f"  {verb} source gate {name} {t.metric} {t.comparison} {t.value}: "
            f"{escape(source.reason)}"
        )
    return lines


def _summary(derivation: Derivation, output: str) -> None:
    say = err_console.print
    for profile in derivation.profiles:
        gates = sum(len(t.gates) + len(t.kept) for t in profile.tests)
        declined = sum(len(t.declined) for t in profile.tests)
        name = f"{derivation.suite.profile.name}{profile.suffix}"
        group = f" ({profile.group})" if profile.group else ""
        say(
            f"{escape(name)}{escape(group)}: {gates} gate(s) over {len(profile.tests)} test(s) "
            f"(derived or kept), {declined} measured metric(s) not gated",
            soft_wrap=True,
        )
        if not gates:
            say("  no gates: this profile passes any clean exit; do not pin it as is")
        for test in profile.tests:
            for line in _test_lines(test):
                say(line, soft_wrap=True)
    for note in derivation.notes:
        say(f"note: {escape(note)}", soft_wrap=True)
    if output != "-":
        say(
            f"wrote {escape(output)}; review it, then pin it (glimmer lint {escape(output)})",
            soft_wrap=True,
        )


def derive_cmd(
    runs: Annotated[
        list[str],
        typer.Argument(
            metavar="RUN...", help="Finished baseline BurnInRuns (glimmer run --output json)."
        ),
    ],
    profile: ProfileOpt,
    output: OutOpt,
    file: FilesOpt = None,
    k: Annotated[
        float, typer.Option("--k", min=0.0, help="Margin in MADs (scaled to sigma).")
    ] = DEFAULT_K,
    min_samples: Annotated[
        int, typer.Option("--min-samples", min=1, help="Fewest readings a gate is made from.")
    ] = DEFAULT_MIN_SAMPLES,
    min_margin_pct: Annotated[
        float,
        typer.Option("--min-margin-pct", min=0.0, help="Least margin, in percent of the median."),
    ] = DEFAULT_MIN_MARGIN * 100,
    by_product: Annotated[
        bool,
        typer.Option(
            "--by-product/--whole-fleet",
            help="One profile per GPU product (default), or one over every node.",
        ),
    ] = True,
    keep_source: Annotated[
        bool,
        typer.Option(
            "--keep-source-gates/--drop-source-gates",
            help="Keep a source gate the rule made none for, if every clean unit passes it.",
        ),
    ] = True,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", help="Leave out every result on this node; repeatable."),
    ] = None,
) -> None:
    """Derive gates from baseline runs and write the profile with them, every gate commented.

    Exit codes: 0 written, 2 bad input (a run that is not a finished baseline run, an unknown
    profile, runs that measured none of its tests).
    """
    suite = _suite(profile, list(file or ()))
    collection = collect(_runs(runs), by_product=by_product, exclude=set(exclude or ()))
    derivation = derive(
        suite,
        collection,
        k=k,
        min_samples=min_samples,
        min_margin=min_margin_pct / 100,
        keep_source=keep_source,
    )
    _write(render(derivation), output)
    _summary(derivation, output)


def strip_cmd(profile: ProfileOpt, output: OutOpt, file: FilesOpt = None) -> None:
    """Write a thresholdless copy of a profile and its tests, for a baseline run."""
    bare = thresholdless(_suite(profile, list(file or ())))
    tests = [
        BurnInTest.model_validate(
            {
                "apiVersion": bare.profile.api_version,
                "kind": "BurnInTest",
                "metadata": {"name": name},
                "spec": spec.model_dump(by_alias=True, exclude_unset=True, exclude_none=True),
            }
        )
        for name, spec in bare.tests.items()
    ]
    _write(dump_yaml([bare.profile, *tests]), output)
    if output != "-":
        err_console.print(
            f"wrote {escape(output)}: run it with spec.baseline: true (docs/baselines.md)",
            soft_wrap=True,
        )


def register(app: typer.Typer) -> None:
    """Add ``glimmer baseline derive`` and ``glimmer baseline strip`` to the app."""
    baseline_app.command("derive")(derive_cmd)
    baseline_app.command("strip")(strip_cmd)
    app.add_typer(baseline_app, name="baseline")
