"""The HTML page: self-contained, well formed, escaped, with its charts and verdict table."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hostile import EVIL, hostile_run

from conftest import RUN_NAMES, STAMP, load_run
from glimmer.contract.vocab import Phase
from glimmer.fleet.load import load_topology
from glimmer.reports import assemble
from glimmer.reports.charts import COLOURS, distribution_svg, series_svg
from glimmer.reports.html import render_html

VOID = {"meta", "br", "hr", "img", "input", "link", "wbr", "col", "area", "base", "source"}
# SVG elements written self-closed (<line .../>) do not open anything.


class Structure(HTMLParser):
    """Checks every element closes in order; counts what the tests look for."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.counts: dict[str, int] = {}
        self.ids: set[str] = set()
        self.attrs: list[tuple[str, str | None]] = []
        self.svg_titles = 0
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.counts[tag] = self.counts.get(tag, 0) + 1
        self.attrs += attrs
        self.ids |= {v for k, v in attrs if k == "id" and v}
        if tag == "title" and "svg" in self.stack:
            self.svg_titles += 1
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.counts[tag] = self.counts.get(tag, 0) + 1
        self.attrs += attrs

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(page: str) -> Structure:
    parser = Structure()
    parser.feed(page)
    parser.close()
    assert parser.problems == [] and parser.stack == []
    return parser


@pytest.mark.parametrize("name", RUN_NAMES)
def test_every_page_is_well_formed_and_self_contained(name: str) -> None:
    page = render_html(assemble(load_run(name), stamp=STAMP))
    parsed = _parse(page)
    assert parsed.counts.get("script", 0) == 0
    assert parsed.counts.get("link", 0) == 0 and parsed.counts.get("img", 0) == 0
    for key, value in parsed.attrs:
        assert key not in ("src", "href"), (key, value)
    assert "<style>" in page and "@media print" in page


def test_the_verdict_table_and_every_chart_are_on_the_page() -> None:
    report = assemble(load_run("acceptance-failed"), load_topology("ai-factory"), stamp=STAMP)
    parsed = _parse(render_html(report))
    assert {"verdict-table", "verdicts", "rack-map"} <= parsed.ids
    # The map, one chart per gated metric, no soak here.
    assert parsed.counts["svg"] == 1 + len(report.distributions)
    assert parsed.svg_titles > parsed.counts["svg"]  # every mark has a title, not just the svg
    text = " ".join(parsed.text)
    assert "✗ FAIL" in text and "✓ PASS" in text  # colour plus a text mark
    assert "hgx-a" in text and "gate ≥ 70" in text


def test_a_soak_draws_its_series_with_the_gate() -> None:
    report = assemble(load_run("soak-segmented"), stamp=STAMP)
    page = render_html(report)
    parsed = _parse(page)
    assert parsed.counts["svg"] == 1 + len(report.distributions) + len(report.series)
    assert parsed.counts["polyline"] >= len(report.series)
    assert "Soak over time" in page and "running total" in page


def test_run_data_is_escaped_everywhere() -> None:
    page = render_html(assemble(hostile_run(), stamp=STAMP))
    parsed = _parse(page)
    assert parsed.counts.get("script", 0) == 0 and parsed.counts.get("img", 0) == 0
    assert "<script>alert" not in page
    assert EVIL in " ".join(parsed.text).replace("\n", " ") or "&lt;script&gt;" in page


def test_unfinished_and_baseline_runs_carry_their_badges() -> None:
    progress = render_html(assemble(load_run("soak-in-progress"), stamp=STAMP))
    assert "INCOMPLETE" in progress and "RUNNING" in progress
    baseline = render_html(assemble(load_run("baseline"), stamp=STAMP))
    assert "BASELINE" in baseline and "certifies nothing" in baseline


def _sections(page: str) -> list[str]:
    """The page's h2 headings, in order."""
    return [m.group(1) for m in re.finditer(r"<h2[^>]*>([^<]*)</h2>", page)]


def test_the_page_leads_with_the_findings_table() -> None:
    report = assemble(load_run("acceptance-failed"), load_topology("ai-factory"), stamp=STAMP)
    page = render_html(report)
    assert _sections(page)[0] == "Findings"
    table = page[page.index('<table class="findings">') : page.index("</table>")]
    head = re.findall(r"<th>([^<]*)</th>", table)
    assert head == ["Node or link", "Test", "Result", "Metric", "Value", "Gate", "Runner message"]
    row = re.sub(r"<[^>]+>", "|", table.split("hgx-node-0001", 1)[1].split("</tr>", 1)[0])
    cells = [c for c in row.split("|") if c.strip()]
    assert cells == [
        "sustained-clock",
        "✗ FAIL",
        "sustainedClockPct",
        "19.37",
        "≥ 70",
        "CLOCKPROBE_FAIL: device 3 sustained 19.37% of rated &lt; 70% (pinned clock)",
    ]
    assert table.count("<tr>") == 1 + len(report.findings)  # the header and one per gate missed


def test_a_unit_without_a_missed_gate_is_a_finding_with_its_runners_message() -> None:
    page = render_html(assemble(load_run("mixed-outcomes"), stamp=STAMP))
    table = page[page.index('<table class="findings">') :].split("</table>", 1)[0]
    assert "nvfp4-smoke" in table and "! ERROR" in table and "(run)" in table and "resolve" in table


def test_a_run_with_nothing_wrong_says_so_where_the_findings_would_be() -> None:
    run = load_run("acceptance-failed")
    assert run.status is not None and run.status.results
    for result in run.status.results:
        result.phase = Phase.PASSED
        result.violations = []
    page = render_html(assemble(run, stamp=STAMP))
    assert _sections(page)[0] == "Findings"
    assert "No unit failed, errored or was cancelled." in page
    assert 'class="findings"' not in page


def test_missed_gates_are_highlighted_in_the_detail_and_met_ones_are_not() -> None:
    page = render_html(assemble(load_run("acceptance-failed"), stamp=STAMP))
    detail = page[page.index('<h2 id="detail">') :]
    missed = re.findall(r'<li class="miss"><span class="x">✗</span> <code>([^<]*)</code>', detail)
    assert sorted(missed) == ["nicLinkDownEvents = 0", "sustainedClockPct ≥ 70"]
    assert '<li class="met"><span class="x">✓</span> <code>throttleEvents = 0</code>' in detail
    # The reading that missed is marked in the unit's metric table too.
    assert '<tr class="miss"><td><span class="x">✗</span> <code>sustainedClockPct</code>' in detail


def test_passing_nodes_are_folded_and_nodes_that_did_not_pass_are_open() -> None:
    report = assemble(load_run("acceptance-failed"), stamp=STAMP)
    page = render_html(report)
    parsed = _Folds()
    parsed.feed(page)
    failing = {n.name for n in report.nodes if n.word == "FAIL"}
    passing = {n.name for n in report.nodes if n.word == "PASS"}
    assert failing == {"hgx-node-0001", "nvl-node-0004"} and passing
    # A failing node is a row of the open verdict table and an open section of the detail.
    assert all(parsed.open_rows.get(n) for n in failing)
    assert all(parsed.open_detail.get(n) for n in failing)
    # A passing node only appears folded: in the matrix and in the detail.
    assert all(not parsed.open_rows.get(n) and parsed.folded_rows.get(n) for n in passing)
    assert all(not parsed.open_detail.get(n) for n in passing)
    assert f"{len(passing)} node(s) passed every test they ran" in page


class _Folds(HTMLParser):
    """Where each node's row heading (<th scope=row>) and detail heading (<h3>) sit: inside an
    open element, or inside a folded <details>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.details: list[bool] = []  # open?
        self.tags: list[str] = []
        self.open_rows: dict[str, bool] = {}
        self.folded_rows: dict[str, bool] = {}
        self.open_detail: dict[str, bool] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "details":
            self.details.append(any(k == "open" for k, _ in attrs))
        if tag not in VOID:
            self.tags.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "details":
            self.details.pop()
        if self.tags and self.tags[-1] == tag:
            self.tags.pop()

    def handle_data(self, data: str) -> None:
        shown = all(self.details)
        if "th" in self.tags and "table" in self.tags:
            (self.open_rows if shown else self.folded_rows)[data] = True
        if "h3" in self.tags and "code" in self.tags and shown:
            self.open_detail[data] = True


def test_a_chart_draws_a_failed_units_reading_that_meets_the_gate_as_passing() -> None:
    report = assemble(load_run("acceptance-failed"), stamp=STAMP)
    [throttle] = [d for d in report.distributions if d.gate.metric == "throttleEvents"]
    [point] = [p for p in throttle.points if p.label == "hgx-node-0001"]
    assert point.word == "FAIL" and point.met and point.drawn == "PASS"
    svg = distribution_svg(throttle)
    # Every unit meets this gate: no failure square, and the failed unit's dot says why.
    assert 'width="12" height="12"' not in svg
    assert svg.count("<circle") == len(throttle.points)
    assert "hgx-node-0001: throttleEvents=0 (FAIL on another gate; this one is met)" in svg
    [clock] = [d for d in report.distributions if d.gate.metric == "sustainedClockPct"]
    [missed] = [p for p in clock.points if p.label == "hgx-node-0001"]
    assert missed.drawn == "FAIL" and not missed.met


def test_a_dot_of_a_failed_unit_that_meets_the_gate_is_a_circle_saying_why() -> None:
    report = assemble(load_run("pair-failed"), stamp=STAMP)
    [chart] = [
        d
        for d in report.distributions
        if d.test == "nccl-allreduce-pair" and d.gate.metric == "miscompares"
    ]
    svg = distribution_svg(chart)
    assert "<rect x" not in svg.split("fail-zone")[-1]  # no failure square after the zone
    assert svg.count("<circle") == len(chart.points)
    assert "FAIL on another gate; this one is met" in svg


def test_a_soak_series_of_a_failed_unit_is_red_only_for_the_gate_it_missed() -> None:
    report = assemble(load_run("soak-segmented"), stamp=STAMP)
    by_metric = {c.gate.metric: c for c in report.series}
    failed = "hgx-node-0002"
    red = f'stroke="{COLOURS["FAIL"]}"'

    def stroke_of(metric: str) -> bool:
        svg = series_svg(by_metric[metric])
        group = svg.split(f"<g><title>{failed} (", 1)[1].split("</g>", 1)[0]
        return red in group

    assert stroke_of("throttleEvents")  # 8 throttle events: the gate it failed
    assert not stroke_of("sustainedClockPct")  # 88.76 ≥ 60 in every window
    assert not stroke_of("xidEvents")


def test_each_passing_node_adds_little_to_the_page() -> None:
    # The 3 MB budget of a 1,024-node page: a passing node must cost well under 2.9 kB.
    run = load_run("acceptance-failed")
    assert run.status is not None and run.status.results
    template = [r for r in run.status.results if (r.nodes or [""])[0] == "nvl-node-0000"]
    base = len(render_html(assemble(run, stamp=STAMP)).encode())
    extra = 200
    for i in range(extra):
        for r in template:
            clone = r.model_copy(deep=True)
            clone.nodes = [f"clone-node-{i:04d}"]
            run.status.results.append(clone)
    grown = len(render_html(assemble(run, stamp=STAMP)).encode())
    per_node = (grown - base) / extra
    assert per_node < 1500, per_node
