"""The HTML page: self-contained, well formed, escaped, with its charts and verdict table."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from hostile import EVIL, hostile_run

from conftest import RUN_NAMES, STAMP, load_run
from glimmer.fleet.load import load_topology
from glimmer.reports import assemble
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
