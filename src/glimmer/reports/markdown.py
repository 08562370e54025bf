"""Markdown (``burnin-report.md``): the report for a ticket or a pull request (§6.3).

Title with the run, phase line with its qualifiers, run table, warnings, results by node (a
matrix of status words), links, gates, then per-node detail of everything that is not a plain
pass: each violated gate with what its cause means, runner failures, errors (hardware not
judged), skips and the notes (not evaluated, unmeasurable, evidence).

Every value that came from the run has ``|`` escaped as ``\\|`` (inside code spans too, so a
table never breaks) and line breaks folded; an empty value reads ``—``.
"""

from __future__ import annotations

from glimmer.reports.assemble import Report
from glimmer.reports.units import Unit, artifact_line, cause_sentence
from glimmer.reports.words import DASH, utc

FILE_NAME = "burnin-report.md"
MEDIA_TYPE = "text/markdown; charset=utf-8"


def esc(value: str) -> str:
    """A run-supplied value made safe for one Markdown table cell or list line."""
    text = " ".join(value.split("\n")).replace("\r", " ")
    return text.replace("|", "\\|") if text else DASH


def code(value: str | None) -> str:
    """A value as a code span (longer fences when it holds backticks); ``—`` when empty."""
    if not value:
        return DASH
    text = esc(value)
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _row(cells: list[str]) -> str:
    return "|" + "|".join(f" {c} " if c else " " for c in cells) + "|"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [_row(header), "|" + "---|" * len(header), *(_row(r) for r in rows)]


def _head(report: Report) -> list[str]:
    phase = " · ".join([f"**{report.word}**", *(f"`{label}`" for label in report.labels)])
    rows = [
        ["Run UID", code(report.uid)],
        ["Profile", code(report.profile)],
        ["Cluster", code(report.cluster)],
        ["Started", utc(report.started_at)],
        ["Finished", utc(report.finished_at) if report.final else f"{DASH} (still running)"],
        ["Results", report.counts.sentence()],
    ]
    return [f"# Burn-in report — {code(report.title)}", "", phase, "", *_table(["", ""], rows)]


def _matrix(report: Report) -> list[str]:
    nodes = [n for n in report.nodes if n.results]
    if not nodes:
        return []
    tests = [t for t in report.tests if any(n.result(t) for n in nodes)]
    rows = [
        [code(n.name), *(" / ".join(u.word for u in n.result(t)) or DASH for t in tests)]
        for n in nodes
    ]
    return ["", "## Results by node", "", *_table(["Node", *(esc(t) for t in tests)], rows)]


def _links(report: Report) -> list[str]:
    if not report.links:
        return []
    rows = [[code(u.name), u.scope_word, code(u.endpoints), u.word] for u in report.links]
    return ["", "## Links", "", *_table(["Test", "Scope", "Endpoints", "Result"], rows)]


def _gates(report: Report) -> list[str]:
    rows: list[list[str]] = []
    for test in report.tests:
        unit = next((u for u in report.units if u.name == test), None)
        if unit is None:
            continue
        for g in unit.gates:
            rows.append([code(test), code(g.describe()), esc(g.applicability)])
    if not rows:
        note = (
            "No gates: this baseline run applied no thresholds."
            if report.baseline
            else "No gates were recorded for the tests of this run."
        )
        return ["", "## Gates", "", note]
    return ["", "## Gates", "", *_table(["Test", "Gate", "Applicability"], rows)]


def _needs_detail(unit: Unit) -> bool:
    return unit.word != "PASS" or bool(unit.not_evaluated or unit.unmeasurable or unit.artifacts)


def _detail(unit: Unit) -> list[str]:
    out = ["", f"#### {code(unit.name)} — {unit.word}"]
    for v in unit.violations:
        out.append(f"- **{esc(v.metric)}** — {esc(v.reason or '')}")
        out.append(f"  _{cause_sentence(v.cause, unit.is_link)}_")
    if unit.word == "FAIL" and not unit.violations:
        out.append(f"- **FAIL** (the runner's own verdict) — {esc(unit.message)}")
    elif unit.word == "ERROR":
        out.append(f"- **ERROR** — {esc(unit.message)}")
        out.append("  _The hardware was NOT judged: the test could not reach a verdict._")
    elif unit.word not in ("PASS", "FAIL"):
        out.append(f"- **{unit.word}** — {esc(unit.message)}")
    out += [f"- Not evaluated: {esc(n.metric)} — {esc(n.reason)}" for n in unit.not_evaluated]
    out += [f"- Unmeasurable on this hardware: {esc(m)}" for m in unit.unmeasurable]
    out += [f"- Evidence attached: {esc(artifact_line(a))}" for a in unit.artifacts]
    if unit.gates:
        measured = ", ".join(
            f"{g.metric} {esc(unit.metric(g.metric) or 'not reported')}" for g in unit.gates
        )
        out.append(f"- Gates: {', '.join(code(g.describe()) for g in unit.gates)}")
        out.append(f"- Measured: {measured}")
    return out


def _details(report: Report) -> list[str]:
    out = ["", "## Test detail"]
    groups: list[tuple[str, tuple[Unit, ...]]] = [(code(n.name), n.results) for n in report.nodes]
    by_link: dict[str, list[Unit]] = {}
    for u in report.links:
        by_link.setdefault(u.endpoints, []).append(u)
    groups += [(code(label), tuple(units)) for label, units in by_link.items()]
    groups.append(("results with no node", report.unassigned))
    shown = False
    for title, units in groups:
        detailed = [u for u in units if _needs_detail(u)]
        if not detailed:
            continue
        shown = True
        out.append(f"### {title}")
        for unit in detailed:
            out += _detail(unit)
        out.append("")
    if not report.units:
        out += ["", "No results yet."]
    elif not shown:
        out += ["", "Every result passed with nothing to note."]
    return out


def render_markdown(report: Report) -> str:
    """The Markdown document of a report."""
    lines = _head(report)
    if report.warnings:
        lines += ["", "## What this report cannot tell you", ""]
        lines += [f"- {esc(w)}" for w in report.warnings]
    lines += _matrix(report) + _links(report) + _gates(report) + _details(report)
    lines += [
        "",
        f"_Generated by {report.stamp.generator} at {utc(report.stamp.at)}. Thresholds in this "
        "report are authored by the site that ran it. A pass is a statement about the gates "
        "that were applied, not a warranty._",
    ]
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.rstrip("\n") + "\n"
