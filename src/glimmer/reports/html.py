"""HTML (``burn-in-report.html``): one self-contained page for a browser or for print (§6.3).

No script, no external request (no link, image, font or stylesheet from elsewhere): the file
reads the same offline, attached to a ticket, years later. CSS is inline (print styles too) and
charts are inline SVG. Every verdict is a colour *and* a word with a mark; Error and Fail differ
in hue. Everything that came from the run is escaped: it is user data.

The page leads with what failed: the header and phase banner, then the findings (every unit
that did not pass: node, test, metric, value, gate, runner message), then the run table, what
the report cannot tell you, the nodes-and-tests matrix, the rack-and-node map, each gated metric
across units, soak series, links, the detail of every node or link that did not pass (missed
gates highlighted), the passing ones folded, the hardware inventory (folded) and the footer.

Folded is ``<details>``: closed on screen, printed open. A passing unit's detail is the row of
the readings its gates judged, its message and anything to note; all of its readings are in
its NVVS document and the BurnInRun. That keeps a 1,024-node page to about a megabyte.
"""

from __future__ import annotations

from html import escape

from glimmer.reports.assemble import NodeView, Report
from glimmer.reports.charts import COLOURS, distribution_svg, rack_map_svg, series_svg
from glimmer.reports.findings import Finding, cell_message
from glimmer.reports.units import Gate, Unit, artifact_line, cause_sentence
from glimmer.reports.words import DASH, mark, symbol, utc

FILE_NAME = "burn-in-report.html"
MEDIA_TYPE = "text/html; charset=utf-8"
# Nodes and units with these words are folded: nothing about them needs a reader's attention.
FOLDED = ("PASS", "SKIP")

_CSS = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328;
  margin: 24px auto; max-width: 1200px; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 8px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
h4 { font-size: 14px; margin: 12px 0 4px; }
code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
table { border-collapse: collapse; margin: 6px 0; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
.banner { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin: 8px 0 16px; }
.verdict { display: inline-block; padding: 1px 6px; border-radius: 4px; color: #fff;
  font-weight: 600; white-space: nowrap; }
.banner .verdict { font-size: 18px; padding: 4px 12px; }
.badge { border: 2px solid #9a6700; color: #7d4e00; padding: 2px 8px; border-radius: 4px;
  font-weight: 600; }
.PASS { background: #1a7f37; } .FAIL { background: #cf222e; } .ERROR { background: #b35900; }
.SKIP { background: #6e7781; } .CANCELLED { background: #57606a; }
.RUNNING, .PENDING { background: #0969da; } .OTHER { background: #24292f; }
td.absent { color: #6e7781; text-align: center; }
.warnings li { margin: 2px 0; } .note { color: #57606a; }
figure { margin: 12px 0 20px; } figcaption { font-weight: 600; margin-bottom: 2px; }
svg.chart { display: block; max-width: 100%; height: auto; background: #fff; }
svg .axis { stroke: #57606a; stroke-width: 1; }
svg .gate { stroke: #24292f; stroke-width: 2; stroke-dasharray: 6 4; }
svg .gate-label { font: 600 12px system-ui, sans-serif; fill: #24292f; }
svg .fail-zone { fill: #ffebe9; }
svg .tick, svg .callout, svg .series-label { font: 11px system-ui, sans-serif; fill: #1f2328; }
svg .mark { font: 700 10px system-ui, sans-serif; fill: #fff; }
svg .rack { font: 600 13px system-ui, sans-serif; fill: #1f2328; }
svg .cell-text { font: 12px ui-monospace, Menlo, Consolas, monospace; fill: #fff; }
svg .cell-text.dim { fill: #1f2328; }
.grid { display: flex; flex-wrap: wrap; gap: 0 24px; }
details summary { cursor: pointer; color: #0969da; }
details.node > summary { color: inherit; }
details.node > summary h3 { display: inline; }
td.c { color: #fff; font-weight: 600; white-space: nowrap; }
table.findings td.value, tr.miss td, li.miss { background: #ffebe9; }
table.findings code { white-space: nowrap; }
.miss .x { color: #cf222e; font-weight: 700; }
.met .x { color: #1a7f37; }
footer { margin-top: 32px; color: #57606a; font-size: 12px; border-top: 1px solid #d0d7de;
  padding-top: 8px; }
@media print {
  body { margin: 0; max-width: none; font-size: 11px; }
  h2 { break-after: avoid; } figure, table { break-inside: avoid; }
  .verdict, .PASS, .FAIL, .ERROR, .SKIP, .RUNNING, .PENDING, .CANCELLED {
    -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  details > *:not(summary) { display: block; }
}
"""


def _e(text: str | None) -> str:
    return escape(text or "", quote=True)


def _verdict(word: str) -> str:
    cls = word if word in COLOURS else "OTHER"
    return f'<span class="verdict {cls}">{_e(mark(word))} {_e(word)}</span>'


def _head(report: Report) -> list[str]:
    badges = "".join(f'<span class="badge">{_e(label)}</span>' for label in report.labels)
    rows = [
        ("Run", f"<code>{_e(report.title)}</code>"),
        ("Run UID", f"<code>{_e(report.uid)}</code>" if report.uid else DASH),
        ("Profile", f"<code>{_e(report.profile)}</code>"),
        ("Cluster", _e(report.cluster) if report.cluster else DASH),
        ("Started", _e(utc(report.started_at))),
        ("Finished", _e(utc(report.finished_at)) if report.final else f"{DASH} (still running)"),
        ("Results", _e(report.counts.sentence())),
    ]
    table = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return [
        f"<h1>Burn-in report — <code>{_e(report.title)}</code></h1>",
        f'<div class="banner" role="status">{_verdict(report.word)}{badges}</div>',
        *_findings(report),
        "<h2>Run</h2>",
        f'<table class="run">{table}</table>',
    ]


def _finding_rows(finding: Finding) -> str:
    """One row per gate the unit missed (one row when its message alone speaks for it); the
    unit, test, result and runner message span them."""
    misses = [
        (
            f"<code>{_e(e.metric)}</code>",
            '<td class="value">'
            + (_e(e.reading) if e.reading is not None else '<span class="note">not reported</span>')
            + "</td>",
            _e(f"{symbol(e.comparison)} {e.bound}") if e.comparison else DASH,
        )
        for e in finding.evidence
    ] or [(DASH, f"<td>{DASH}</td>", DASH)]
    span = f' rowspan="{len(misses)}"' if len(misses) > 1 else ""
    word = _verdict(_WORD_OF_PHASE.get(finding.phase.value, finding.phase.value.upper()))
    rows = []
    for i, (metric, value, gate) in enumerate(misses):
        lead = (
            f"<td{span}><code>{_e(finding.unit)}</code></td><td{span}><code>"
            f"{_e(finding.test)}</code></td><td{span}>{word}</td>"
            if i == 0
            else ""
        )
        tail = f"<td{span}>{_e(cell_message(finding))}</td>" if i == 0 else ""
        rows.append(f"<tr>{lead}<td>{metric}</td>{value}<td>{gate}</td>{tail}</tr>")
    return "".join(rows)


_WORD_OF_PHASE = {"Failed": "FAIL", "Error": "ERROR", "Cancelled": "CANCELLED"}


def _findings(report: Report) -> list[str]:
    out = ['<h2 id="findings">Findings</h2>']
    if not report.findings:
        so_far = "" if report.final else " so far"
        return [*out, f'<p class="note">No unit failed, errored or was cancelled{so_far}.</p>']
    rows = "".join(_finding_rows(f) for f in report.findings)
    return [
        *out,
        f'<p class="note">{len(report.findings)} unit(s) did not pass. Each row is a gate a '
        "unit's readings missed; a unit with none is explained by its runner's message.</p>",
        '<table class="findings"><thead><tr><th>Node or link</th><th>Test</th><th>Result</th>'
        "<th>Metric</th><th>Value</th><th>Gate</th><th>Runner message</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>",
    ]


def _warnings(report: Report) -> list[str]:
    if not report.warnings:
        return []
    items = "".join(f"<li>{_e(w)}</li>" for w in report.warnings)
    return ["<h2>What this report cannot tell you</h2>", f'<ul class="warnings">{items}</ul>']


def _matrix_rows(nodes: list[NodeView], tests: list[str]) -> str:
    rows = []
    for n in nodes:
        cells = []
        for t in tests:
            units = n.result(t)
            if not units:
                cells.append(f'<td class="absent" title="not run on this node">{DASH}</td>')
            elif len(units) == 1 and units[0].word in COLOURS:
                word = units[0].word
                cells.append(f'<td class="c {word}">{_e(mark(word))} {word}</td>')
            else:
                cells.append("<td>" + " ".join(_verdict(u.word) for u in units) + "</td>")
        node_word = n.word
        verdict = _verdict(node_word) if node_word else DASH
        rows.append(
            f'<tr><th scope="row"><code>{_e(n.name)}</code></th><td>{verdict}</td>'
            + "".join(cells)
            + "</tr>"
        )
    return "".join(rows)


def _matrix(report: Report) -> list[str]:
    nodes = [n for n in report.nodes if n.results]
    out = ['<h2 id="verdicts">Nodes and tests</h2>']
    if not nodes:
        return [*out, '<p class="note">No node-scope results in this run (see Links).</p>']
    tests = [t for t in report.tests if any(n.result(t) for n in nodes)]
    head = "".join(f'<th scope="col"><code>{_e(t)}</code></th>' for t in tests)
    thead = (
        f'<thead><tr><th scope="col">Node</th><th scope="col">Node verdict</th>{head}</tr></thead>'
    )
    attention = [n for n in nodes if n.word not in FOLDED]
    folded = [n for n in nodes if n.word in FOLDED]
    # The first table on the page carries the id, whichever it is.
    if attention:
        out.append(
            f'<table class="matrix" id="verdict-table">{thead}'
            f"<tbody>{_matrix_rows(attention, tests)}</tbody></table>"
        )
    else:
        out.append('<p class="note">Every node passed (or skipped) every test it ran.</p>')
    if folded:
        ident = "" if attention else ' id="verdict-table"'
        out.append(
            f'<details class="passing"><summary>{len(folded)} node(s) passed every test they '
            f'ran</summary><table class="matrix"{ident}>{thead}'
            f"<tbody>{_matrix_rows(folded, tests)}</tbody></table></details>"
        )
    return out


def _map(report: Report) -> list[str]:
    if not report.nodes:
        return []
    fleet = any(r.from_fleet for r in report.racks)
    how = (
        "Racks from the fleet topology"
        if fleet
        else "No fleet placed these nodes: columns group them by host-name prefix"
    )
    verdicts = {n.name: n.word for n in report.nodes}
    return [
        "<h2>Rack-and-node map</h2>",
        f'<p class="note">{how}. A cell shows the node\'s own verdict (links never speak for a '
        f"node); {DASH} means no node-scope result.</p>",
        f'<figure id="rack-map">{rack_map_svg(report.racks, verdicts)}</figure>',
    ]


def _distributions(report: Report) -> list[str]:
    if not report.distributions:
        return []
    out = [
        "<h2>Gated metrics across units</h2>",
        '<p class="note">Each dot is one node (or link); squares with a mark miss this gate. A '
        "unit that failed on another gate is drawn as meeting this one (its tooltip says so). "
        "The dashed line is the gate; the shaded side fails it.</p>",
        '<div class="grid">',
    ]
    for d in report.distributions:
        missing = [p for p in d.points if p.value is None]
        note = ""
        if missing:
            listed = ", ".join(f"{p.label} ({p.word}: {p.raw or 'not reported'})" for p in missing)
            note = f'<p class="note">Not drawn (missing or not a number): {_e(listed)}</p>'
        out.append(
            f'<figure class="distribution"><figcaption><code>{_e(d.test)}</code> — '
            f"<code>{_e(d.gate.describe())}</code></figcaption>{distribution_svg(d)}{note}</figure>"
        )
    out.append("</div>")
    return out


def _series(report: Report) -> list[str]:
    if not report.series:
        return []
    out = [
        "<h2>Soak over time</h2>",
        '<p class="note">Filled points are window ends, hollow points mid-window checkpoints. '
        "Summed metrics are drawn as their running total, which is what the gate judges.</p>",
    ]
    for chart in report.series:
        how = "running total" if chart.cumulative else "per window"
        out.append(
            f'<figure class="series"><figcaption><code>{_e(chart.test)}</code> — '
            f"<code>{_e(chart.gate.metric)}</code> ({how}), gate "
            f"<code>{_e(chart.gate.bound())}</code></figcaption>{series_svg(chart)}</figure>"
        )
    return out


def _links(report: Report) -> list[str]:
    if not report.links:
        return []
    rows = "".join(
        f"<tr><td><code>{_e(u.name)}</code></td><td>{_e(u.scope_word)}</td>"
        f"<td><code>{_e(u.endpoints)}</code></td><td>{_verdict(u.word)}</td>"
        f"<td>{_e(u.first_line)}</td></tr>"
        for u in report.links
    )
    return [
        "<h2>Links</h2>",
        '<p class="note">A pair or group verdict is about the link or the collective, never about '
        "either endpoint alone.</p>",
        "<table><thead><tr><th>Test</th><th>Scope</th><th>Endpoints</th><th>Result</th>"
        f"<th>Message</th></tr></thead><tbody>{rows}</tbody></table>",
    ]


def _gate_item(unit: Unit, gate: Gate) -> str:
    measured = unit.metric(gate.metric)
    missed = gate.metric in unit.missed
    cls, tick = ("miss", "✗") if missed else ("met", "✓")
    state = "missed" if missed else "met"
    return (
        f'<li class="{cls}"><span class="x">{tick}</span> <code>{_e(gate.describe())}</code> '
        f"{state}: measured {_e(measured if measured is not None else 'nothing')}</li>"
    )


def _unit(unit: Unit) -> list[str]:
    out = [f"<h4><code>{_e(unit.name)}</code> {_verdict(unit.word)}</h4>"]
    items: list[str] = []
    for v in unit.violations:
        items.append(
            f'<li class="miss"><strong>{_e(v.metric)}</strong> — {_e(v.reason)}<br>'
            f'<span class="note">{_e(cause_sentence(v.cause, unit.is_link))}</span></li>'
        )
    if unit.word == "ERROR":
        items.append(
            f'<li>{_e(unit.message)}<br><span class="note">The hardware was NOT judged: the test '
            "could not reach a verdict.</span></li>"
        )
    elif unit.message and not unit.violations:
        items.append(f"<li>{_e(unit.message)}</li>")
    items += [
        f"<li>Not evaluated: {_e(n.metric)} — {_e(n.reason)}</li>" for n in unit.not_evaluated
    ]
    items += [f"<li>Unmeasurable on this hardware: {_e(m)}</li>" for m in unit.unmeasurable]
    items += [f"<li>Evidence attached: {_e(artifact_line(a))}</li>" for a in unit.artifacts]
    out.append(f"<ul>{''.join(items)}</ul>")
    if unit.gates:
        gates = "".join(_gate_item(unit, g) for g in unit.gates)
        out.append(f'<ul class="gates">{gates}</ul>')
    if unit.metrics:
        missed = unit.missed
        rows = "".join(
            f'<tr class="miss"><td><span class="x">✗</span> <code>{_e(k)}</code></td>'
            f"<td>{_e(v)}</td></tr>"
            if k in missed
            else f"<tr><td><code>{_e(k)}</code></td><td>{_e(v)}</td></tr>"
            for k, v in unit.metrics
        )
        out.append(
            f"<details><summary>{len(unit.metrics)} metric(s)</summary>"
            f"<table><tr><th>Metric</th><th>Value</th></tr>{rows}</table></details>"
        )
    return out


def _notes(unit: Unit) -> str:
    """What a passing unit still has to say: gates not evaluated, unmeasurable metrics and
    evidence, kept or not."""
    notes = [f"not evaluated: {n.metric} — {n.reason}" for n in unit.not_evaluated]
    notes += [f"unmeasurable: {m}" for m in unit.unmeasurable]
    notes += [f"evidence: {artifact_line(a)}" for a in unit.artifacts]
    return "; ".join(notes)


def _passing_tables(units: list[Unit], tests: tuple[str, ...]) -> list[str]:
    """One table per test: a row per passing unit with the readings its gates judged."""
    out: list[str] = []
    by_test: dict[str, list[Unit]] = {}
    for u in units:
        by_test.setdefault(u.name, []).append(u)
    order = [t for t in tests if t in by_test] + sorted(set(by_test) - set(tests))
    for test in order:
        ran = by_test[test]
        gates: list[Gate] = []
        for g in ran[0].gates:
            if g.metric not in {x.metric for x in gates}:
                gates.append(g)
        noted = any(_notes(u) for u in ran)
        head = "".join(f"<th><code>{_e(g.describe())}</code></th>" for g in gates)
        head += "<th>Runner message</th>" + ("<th>Notes</th>" if noted else "")
        rows = []
        for u in ran:
            cells = "".join(f"<td>{_e(u.metric(g.metric) or DASH)}</td>" for g in gates)
            note = f"<td>{_e(_notes(u))}</td>" if noted else ""
            rows.append(
                f"<tr><td><code>{_e(u.label)}</code></td><td>{_e(mark(u.word))} {u.word}</td>"
                f"{cells}<td>{_e(u.first_line)}</td>{note}</tr>"
            )
        out.append(
            f"<h4><code>{_e(test)}</code> — {len(ran)} unit(s)</h4>"
            f"<table><thead><tr><th>Node or link</th><th>Result</th>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    return out


def _detail(report: Report) -> list[str]:
    out = ['<h2 id="detail">Test detail</h2>']
    folded: list[Unit] = []
    for node in report.nodes:
        if not node.results:
            continue
        if node.word in FOLDED:
            folded += node.results
            continue
        out.append(
            f'<details class="node" open><summary><h3><code>{_e(node.name)}</code> '
            f"{_verdict(node.word or '')}</h3></summary>"
        )
        for unit in node.results:
            out += _unit(unit)
        out.append("</details>")
    by_link: dict[str, list[Unit]] = {}
    for u in report.links:
        if u.word in FOLDED:
            folded.append(u)
        else:
            by_link.setdefault(u.endpoints, []).append(u)
    for label, units in by_link.items():
        out.append(f"<h3>Link <code>{_e(label)}</code></h3>")
        for unit in units:
            out += _unit(unit)
    if report.unassigned:
        out.append("<h3>Results with no node</h3>")
        for unit in report.unassigned:
            out += _unit(unit)
    if folded:
        nodes = sum(1 for n in report.nodes if n.results and n.word in FOLDED)
        links = sum(1 for u in folded if u.is_link)
        what = f"{nodes} node(s) that passed" + (
            f" and {links} passing link unit(s)" if links else ""
        )
        out.append(
            f'<details class="passing" id="passing-detail"><summary>{what}: the readings '
            "their gates judged</summary>"
            '<p class="note">Every reading of every unit is in its NVVS document '
            "(<code>diag-&lt;node&gt;.json</code>) and in the BurnInRun.</p>"
        )
        out += _passing_tables(folded, report.tests)
        out.append("</details>")
    return out


def _inventory(node: NodeView) -> str:
    facts: list[str] = []
    if node.fingerprint:
        facts.append(f"<code>{_e(node.fingerprint)}</code>")
    if node.gpu_count is not None:
        facts.append(f"{node.gpu_count} GPU(s)")
    if node.driver:
        facts.append(f"driver {_e(node.driver)}")
    body = "; ".join(facts) if facts else '<span class="note">no inventory was collected</span>'
    return f'<tr><th scope="row"><code>{_e(node.name)}</code></th><td>{body}</td></tr>'


def render_html(report: Report) -> str:
    """The self-contained HTML page of a report."""
    body: list[str] = []
    body += _head(report)
    body += _warnings(report)
    body += _matrix(report)
    body += _map(report)
    body += _distributions(report)
    body += _series(report)
    body += _links(report)
    body += _detail(report)
    if report.nodes:
        body.append("<h2>Hardware inventory</h2>")
        body.append(
            f"<details><summary>{len(report.nodes)} node(s)</summary><table>"
            + "".join(_inventory(n) for n in report.nodes)
            + "</table></details>"
        )
    body.append(
        f"<footer>Generated by {_e(report.stamp.generator)} at {_e(utc(report.stamp.at))}. "
        "Thresholds in this report are authored by the site that ran it. A pass is a statement "
        "about the gates that were applied, not a warranty.</footer>"
    )
    title = f"Burn-in report — {report.title} — {report.word}"
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="generator" content="{_e(report.stamp.generator)}">\n'
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )
