"""Render docs/fault-coverage.md from the mode table and the coverage sweep's results.

The document records the sweep through the engine on the simulator backend; that method lives
with the tests (this layer may not import the engine), so regenerate with::

    .venv/bin/python -m glimmer.backends.sim_coverage --write docs/fault-coverage.md

which calls :func:`main` with the engine's method. tests/scenarios/test_fault_coverage.py fails
when the checked-in file differs from what this renders, and prints that command. Run as
``python -m glimmer.sim.runners.coverage_doc`` this module prints the same document measured
at the runner level (no engine), for comparison.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from glimmer.sim.runners.coverage import (
    RUNNERS,
    HealthySweep,
    Method,
    ModeResult,
    cover_all,
    healthy_sweep,
    problems,
)
from glimmer.sim.runners.detectors import ADDED, OUTSIDE_BUILTINS, REMOVED
from glimmer.sim.runners.harness import builtins

REGENERATE = ".venv/bin/python -m glimmer.backends.sim_coverage --write docs/fault-coverage.md"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _metric(metric: str | None) -> str:
    return f"`{metric}`" if metric else "outcome"


def _verdict(r: ModeResult) -> str:
    if r.out_of_scope:
        return "out of scope"
    if r.detected_by:
        return "detected"
    if r.mode.name in OUTSIDE_BUILTINS:
        return "outside the built-in profiles"
    return "**not detected**"


def _summary(results: list[ModeResult]) -> list[str]:
    lines = [
        "| mode | target in the sweep | built-in profiles | failed by (test and gate) |",
        "|---|---|---|---|",
    ]
    for r in results:
        # What failed the unit (its test and the gate it violated), not only what moved.
        by = ", ".join(dict.fromkeys(d.failed_by for d in r.detected_by))
        lines.append(
            f"| `{r.mode.name}` | `{r.scenario.target}` ({r.scenario.fleet}) | {_verdict(r)} "
            f"| {by or '—'} |"
        )
    return lines


def _detail(r: ModeResult) -> list[str]:
    s = r.scenario
    lines = [f"### `{r.mode.name}`", "", _cell(r.mode.description) + ".", ""]
    lines.append(
        f"Injected alone at intensity 1 on `{s.target}` in {s.fleet}; Node tests on "
        f"{', '.join(f'`{n}`' for n in s.affected) or 'no node (nothing is reached)'}, Pair "
        f"tests with `{s.peer}` as the server; every test must pass on "
        f"{', '.join(f'`{n}`' for n in s.healthy)}."
    )
    lines.append("")
    if r.out_of_scope:
        lines += [f"Out of scope: {_cell(r.mode.scope_note)}.", ""]
    if r.mode.name in OUTSIDE_BUILTINS:
        lines += [f"Outside the built-in profiles: {OUTSIDE_BUILTINS[r.mode.name]}.", ""]
    if r.detectors:
        lines += ["| kind | metric | scope | status | evidence |", "|---|---|---|---|---|"]
        for d in r.detectors:
            det = d.detector
            evidence = d.evidence
            if d.probe:
                evidence += f"; run directly: {d.probe}"
            lines.append(
                f"| {det.kind} | {_metric(det.metric)} | {det.scope or 'any'} | "
                f"{d.status.value} | {_cell(evidence)} |"
            )
        lines.append("")
    outcomes = sorted({f"{u.test} {u.outcome.phase}" for u in r.affected})
    if outcomes:
        lines += ["Built-in tests on the reached units: " + ", ".join(outcomes) + ".", ""]
        planned = {t for tests in builtins().profiles.values() for t in tests}
        never = sorted(planned - {u.test for u in r.affected})
        if never:
            lines += [
                "Never started on the reached units (a failFast run stopped at its first "
                f"failure): {', '.join(never)}.",
                "",
            ]
    bad = problems(r)
    if bad:
        lines += ["Problems:", *[f"- {_cell(p)}" for p in bad], ""]
    return lines


def _healthy(h: HealthySweep, method: Method) -> list[str]:
    passed = h.units - h.declined - len(h.failures)
    lines = [
        f"A healthy generated HGX H100 fleet of {h.nodes} nodes, with measurement noise: "
        f"{method.healthy_words}. {h.units} units settled: {passed} "
        f"passed, {h.declined} skipped by a per-product cell whose class is not the node's "
        f"(another cell judges it), **{len(h.failures)} settled otherwise**.",
        "",
        "| test | units |",
        "|---|---|",
    ]
    lines += [f"| {name} | {count} |" for name, count in h.by_test.items()]
    for f in h.failures:
        lines.append(f"- {f.test} on {'/'.join(f.nodes)}: {f.outcome.phase} {f.outcome.message}")
    return lines


def render(results: list[ModeResult], healthy: HealthySweep, method: Method) -> str:
    b = builtins()
    profiles = ", ".join(f"`{p}` ({', '.join(t)})" for p, t in b.profiles.items())
    lines = [
        "# Fault coverage of the built-in profiles",
        "",
        "<!-- Generated by glimmer.sim.runners.coverage_doc; do not edit. Regenerate with:",
        f"     {REGENERATE} -->",
        "",
        "Each fault mode of the simulator (`glimmer.sim.modes.MODES`) is injected alone into a "
        "64-node generated HGX H100 fleet (or the built-in `ai-factory` fleet where the mode "
        "needs an NVL72 rack, shared storage or a scheduler). Every test of the built-in "
        f"profiles — {profiles} — runs on the nodes the fault reaches and on nodes it does "
        f"not, {method.words}.",
        "",
        "A detector (kind, metric) is **detected** only when a built-in test of that kind "
        "settled Failed or Error on a reached unit with its gate on that metric violated; an "
        "*outcome* detector (a kind with no metric) when the unit settled Failed or Error at "
        "all. The summary's last column names what failed each unit: the test and the gate it "
        "violated, or `runner Fail (exit 1)` / `runner Error (exit 3)` when the runner's own "
        "verdict failed it and no gate did. A metric that only moved while something else "
        "failed the unit is not counted. **missed** means the built-ins gate that metric yet "
        "nothing settled on it — the sweep fails then. **not gated** means a built-in test runs "
        "the kind but no gate judges the metric; **outside** means no built-in test runs the "
        "kind at that scope. Those are run directly with a plain test of the kind to show "
        "whether the runner sees the fault at all.",
        "",
        "## Summary",
        "",
        *_summary(results),
        "",
        "## The healthy fleet",
        "",
        *_healthy(healthy, method),
        "",
        "## Corrections to the mode table's detectors",
        "",
        "Kept in `glimmer.sim.runners.detectors`; the sweep checks the corrected list.",
        "",
        "| mode | change | kind | metric | why |",
        "|---|---|---|---|---|",
    ]
    for label, edits in (("removed", REMOVED), ("added", ADDED)):
        for e in edits:
            lines.append(
                f"| `{e.mode}` | {label} | {e.detector.kind} | {_metric(e.detector.metric)} "
                f"| {_cell(e.reason)} |"
            )
    lines += ["", "## Per mode", ""]
    for r in results:
        lines += _detail(r)
    return "\n".join(lines).rstrip("\n") + "\n"


def generate(method: Method = RUNNERS) -> str:
    return render(cover_all(method), healthy_sweep(method=method), method)


def main(argv: list[str] | None = None, method: Method = RUNNERS) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--write", metavar="PATH", help="write the document here")
    args = parser.parse_args(argv)
    text = generate(method)
    if args.write:
        Path(args.write).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
