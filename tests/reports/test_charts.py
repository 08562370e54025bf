"""The SVG charts on their own: crowded, empty and non-numeric inputs still draw sensibly."""

from __future__ import annotations

from glimmer.reports.charts import distribution_svg, rack_map_svg
from glimmer.reports.figures import Distribution, Point
from glimmer.reports.racks import Rack
from glimmer.reports.units import Gate

FLOOR = Gate("sustainedClockPct", "GreaterThanOrEqual", "70", "Required")


def _point(label: str, raw: str | None, word: str = "PASS") -> Point:
    value = float(raw) if raw not in (None, "n/a") else None
    outside = value is not None and value < 70
    return Point(label, raw, value, word, False, outside)


def test_a_crowded_bin_becomes_a_bar_with_its_failing_share() -> None:
    points = (*(_point(f"n{i}", "90") for i in range(40)), _point("bad", "20", "FAIL"))
    svg = distribution_svg(Distribution("clock", FLOOR, points))
    assert "40 unit(s), 0 not passing" in svg and "<circle" not in svg
    assert "beyond the gate: ✗ bad = 20" in svg


def test_dots_for_a_few_units_and_missing_values_are_not_drawn() -> None:
    points = (_point("a", "91"), _point("b", "n/a", "FAIL"), _point("c", None, "ERROR"))
    svg = distribution_svg(Distribution("clock", FLOOR, points))
    assert svg.count("<circle") == 1
    assert "gate ≥ 70" in svg and "values here fail the gate" in svg


def test_nothing_reported_still_draws_the_gate() -> None:
    svg = distribution_svg(Distribution("clock", FLOOR, (_point("a", None, "ERROR"),)))
    assert "gate ≥ 70" in svg and svg.startswith("<svg") and svg.endswith("</svg>")


def test_a_tall_rack_wraps_into_continued_columns_and_escapes_names() -> None:
    nodes = (*(f"n{i:03d}" for i in range(80)), "<b>&")
    svg = rack_map_svg([Rack("r<1>", nodes, False)], {"n000": "FAIL", "<b>&": None})
    assert svg.count("(cont.)") == 2
    assert "&lt;b&gt;&amp;" in svg and "r&lt;1&gt;" in svg and "<b>" not in svg
    assert "n000: FAIL" in svg and "no node-scope result" in svg
