"""Inline SVG charts for the HTML report: a gated metric across units, the rack-and-node map of
verdicts, and soak series over time.

Plain SVG strings with no script and no external reference: the page must read from a file,
offline, in print. Every mark carries a ``<title>`` (a tooltip and what a screen reader says)
and every verdict is drawn with a text mark as well as a colour. All run data is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from html import escape

from glimmer.reports.figures import Distribution, Point, SeriesChart
from glimmer.reports.racks import Rack
from glimmer.reports.words import DASH, duration, mark

COLOURS = {
    "PASS": "#1a7f37",
    "FAIL": "#cf222e",
    "ERROR": "#b35900",
    "SKIP": "#6e7781",
    "CANCELLED": "#57606a",
    "RUNNING": "#0969da",
    "PENDING": "#0969da",
}
NO_VERDICT = "#d0d7de"
# Series are told apart by colour and by their label at the line's end.
_PALETTE = ("#0969da", "#8250df", "#1b7c83", "#9a6700", "#bf3989", "#57606a", "#116329")

WIDTH = 540
_LEFT, _RIGHT = 48, 24
_MAX_STACK = 12  # dots stacked in one bin before the bin is drawn as a bar
_BINS = 48
_MAX_LABELS = 8  # failing units named on a chart; the rest are in the tables


def colour(word: str | None) -> str:
    return COLOURS.get(word or "", NO_VERDICT)


def _e(text: str) -> str:
    return escape(text, quote=True)


def _num(value: float) -> str:
    """A coordinate with two decimals and no trailing noise."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _label(value: float) -> str:
    """An axis value: integers as such, others to 4 significant digits."""
    if value == int(value) or abs(value) >= 1000:
        return f"{value:.0f}"
    return f"{value:.4g}"


def _domain(values: Sequence[float]) -> tuple[float, float]:
    low, high = min(values), max(values)
    if low == high:
        pad = abs(low) * 0.1 or 1.0
        return low - pad, high + pad
    pad = (high - low) * 0.06
    return low - pad, high + pad


def _open(width: int, height: int, title: str) -> str:
    return (
        f'<svg class="chart" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}"><title>{_e(title)}</title>'
    )


def distribution_svg(dist: Distribution) -> str:
    """A dot plot (a histogram when crowded) of one gated metric, the gate drawn across it."""
    gate_value = _float(dist.gate.value)
    drawn = [p for p in dist.points if p.value is not None]
    values = [p.value for p in drawn if p.value is not None]
    if gate_value is not None:
        values.append(gate_value)
    if not values:
        values = [0.0]
    low, high = _domain(values)
    span = high - low
    plot = WIDTH - _LEFT - _RIGHT

    def x(v: float) -> float:
        return _LEFT + (v - low) / span * plot

    bins: dict[int, list[Point]] = {}
    for p in drawn:
        assert p.value is not None
        col = min(_BINS - 1, int((p.value - low) / span * _BINS))
        bins.setdefault(col, []).append(p)
    tallest = max((len(b) for b in bins.values()), default=1)
    bars = tallest > _MAX_STACK
    rows = min(tallest, _MAX_STACK)
    base = 36 + rows * 12 + (12 if bars else 0)
    height = base + 40
    title = (
        f"{dist.test}: {dist.gate.metric} across {len(dist.points)} unit(s), "
        f"gate {dist.gate.bound()}"
    )
    parts = [_open(WIDTH, height, title)]
    parts.append(_failing_side(dist.gate.comparison, gate_value, x, base, low, high))
    parts.append(f'<line x1="{_LEFT}" y1="{base}" x2="{WIDTH - _RIGHT}" y2="{base}" class="axis"/>')
    step = plot / _BINS
    for col, members in sorted(bins.items()):
        cx = _LEFT + (col + 0.5) * step
        ordered = sorted(members, key=lambda p: p.drawn == "PASS")  # failing ones first, lowest
        if bars:
            parts.append(_bar(cx, step, base, members, tallest, rows))
            continue
        for i, p in enumerate(ordered):
            parts.append(_dot(cx, base - 7 - i * 12, p, dist.gate.metric))
    if gate_value is not None:
        gx = _num(x(gate_value))
        parts.append(
            f'<line x1="{gx}" y1="14" x2="{gx}" y2="{base + 6}" class="gate">'
            f"<title>gate {_e(dist.gate.describe())}</title></line>"
            f'<text x="{gx}" y="11" class="gate-label" text-anchor="middle">'
            f"gate {_e(dist.gate.bound())}</text>"
        )
    # Ticks at the gate and the extremes of the data; one too close to another is left out.
    ticks = [gate_value] if gate_value is not None else []
    data = [p.value for p in drawn if p.value is not None]
    if data:
        ticks += [min(data), max(data)]
    placed: list[float] = []
    for t in ticks:
        if all(abs(x(t) - x(q)) > 36 for q in placed):
            placed.append(t)
            parts.append(
                f'<text x="{_num(x(t))}" y="{base + 18}" class="tick" text-anchor="middle">'
                f"{_e(_label(t))}</text>"
            )
    outside = [p for p in drawn if p.outside]
    if outside:
        named = outside[:_MAX_LABELS]
        text = "beyond the gate: " + ", ".join(f"{mark(p.word)} {p.label} = {p.raw}" for p in named)
        if len(outside) > len(named):
            text += f" and {len(outside) - len(named)} more"
        parts.append(f'<text x="{_LEFT}" y="{base + 34}" class="callout">{_e(text)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _float(raw: str) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _failing_side(
    comparison: str,
    gate: float | None,
    x: Callable[[float], float],
    base: float,
    low: float,
    high: float,
) -> str:
    # Shade where a value would fail, so the gate reads at a glance even without its label.
    if gate is None:
        return ""
    if comparison == "GreaterThanOrEqual":
        start, end = low, gate
    elif comparison == "LessThanOrEqual":
        start, end = gate, high
    else:
        return ""
    x0, x1 = x(max(start, low)), x(min(end, high))
    if x1 <= x0:
        return ""
    return (
        f'<rect x="{_num(x0)}" y="14" width="{_num(x1 - x0)}" height="{_num(base - 14)}" '
        f'class="fail-zone"><title>values here fail the gate</title></rect>'
    )


def _dot(cx: float, cy: float, p: Point, metric: str) -> str:
    verdict = f"{p.word} on another gate; this one is met" if p.met else p.word
    tip = _e(f"{p.label}: {metric}={p.raw} ({verdict})")
    fill = colour(p.drawn)
    if p.drawn == "PASS":
        return (
            f'<circle cx="{_num(cx)}" cy="{_num(cy)}" r="5" fill="{fill}">'
            f"<title>{tip}</title></circle>"
        )
    # Not passing: a square with its mark inside, so it stands out without colour too.
    return (
        f'<g><title>{tip}</title><rect x="{_num(cx - 6)}" y="{_num(cy - 6)}" '
        f'width="12" height="12" fill="{fill}"/>'
        f'<text x="{_num(cx)}" y="{_num(cy + 4)}" class="mark" '
        f'text-anchor="middle">{_e(mark(p.drawn))}</text></g>'
    )


def _bar(cx: float, step: float, base: float, members: list[Point], tallest: int, rows: int) -> str:
    full = rows * 12
    height = max(2.0, len(members) / tallest * full)
    bad = [p for p in members if p.drawn != "PASS"]
    bad_h = len(bad) / len(members) * height
    w = max(2.0, step - 2)
    tip = _e(f"{len(members)} unit(s), {len(bad)} not passing")
    out = (
        f'<g><title>{tip}</title><rect x="{_num(cx - w / 2)}" y="{_num(base - height)}" '
        f'width="{_num(w)}" height="{_num(height)}" fill="{COLOURS["PASS"]}"/>'
    )
    if bad:
        out += (
            f'<rect x="{_num(cx - w / 2)}" y="{_num(base - bad_h)}" width="{_num(w)}" '
            f'height="{_num(bad_h)}" fill="{COLOURS["FAIL"]}"/>'
        )
    return out + "</g>"


_CELL_W, _CELL_H, _PER_COLUMN = 168, 22, 36


def rack_map_svg(racks: Sequence[Rack], verdicts: Mapping[str, str | None]) -> str:
    """Racks as columns of node cells coloured by verdict, each with its mark and name."""
    columns: list[tuple[str, tuple[str, ...]]] = []
    for rack in racks:
        chunks = [rack.nodes[i : i + _PER_COLUMN] for i in range(0, len(rack.nodes), _PER_COLUMN)]
        for n, chunk in enumerate(chunks):
            columns.append((rack.name if n == 0 else f"{rack.name} (cont.)", chunk))
    tallest = max((len(c) for _, c in columns), default=0)
    width = max(1, len(columns)) * (_CELL_W + 12) + 12
    height = 34 + tallest * (_CELL_H + 4) + 8
    parts = [_open(width, height, f"Verdict map: {len(verdicts)} node(s) in {len(racks)} rack(s)")]
    for c, (name, nodes) in enumerate(columns):
        x0 = 12 + c * (_CELL_W + 12)
        parts.append(f'<text x="{x0}" y="20" class="rack">{_e(name)}</text>')
        for r, node in enumerate(nodes):
            word = verdicts.get(node)
            y0 = 30 + r * (_CELL_H + 4)
            shown = word or DASH
            tip = _e(f"{node}: {word or 'no node-scope result'}")
            text_class = "cell-text" if word else "cell-text dim"
            parts.append(
                f'<g><title>{tip}</title><rect x="{x0}" y="{y0}" width="{_CELL_W}" '
                f'height="{_CELL_H}" rx="3" fill="{colour(word)}"/>'
                f'<text x="{x0 + 6}" y="{y0 + 15}" class="{text_class}">'
                f"{_e(mark(shown) if word else DASH)} {_e(node)}</text></g>"
            )
    parts.append("</svg>")
    return "".join(parts)


def series_svg(chart: SeriesChart) -> str:
    """One line per unit over the soak's elapsed time, the gate as a dashed line."""
    samples = [s for series in chart.series for s in series.samples]
    gate_value = _float(chart.gate.value)
    values = [s.value for s in samples] + ([gate_value] if gate_value is not None else [])
    low, high = _domain(values)
    t_end = max((s.offset_s for s in samples), default=1.0) or 1.0
    height, top, bottom = 240, 24, 200
    plot = WIDTH - _LEFT - 150  # room on the right for the series labels

    def x(t: float) -> float:
        return _LEFT + t / t_end * plot

    def y(v: float) -> float:
        return bottom - (v - low) / (high - low) * (bottom - top)

    how = "running total" if chart.cumulative else "per window"
    title = f"{chart.test}: {chart.gate.metric} ({how}) over the soak, gate {chart.gate.bound()}"
    parts = [_open(WIDTH, height, title)]
    parts.append(
        f'<line x1="{_LEFT}" y1="{bottom}" x2="{_LEFT + plot}" y2="{bottom}" class="axis"/>'
    )
    parts.append(f'<line x1="{_LEFT}" y1="{top}" x2="{_LEFT}" y2="{bottom}" class="axis"/>')
    for v in (low, high):
        parts.append(
            f'<text x="{_LEFT - 4}" y="{_num(y(v) + 4)}" class="tick" text-anchor="end">'
            f"{_e(_label(round(v, 4)))}</text>"
        )
    parts.append(
        f'<text x="{_LEFT}" y="{bottom + 16}" class="tick">0</text>'
        f'<text x="{_num(x(t_end))}" y="{bottom + 16}" class="tick" text-anchor="end">'
        f"{_e(duration(t_end))}</text>"
        f'<text x="{_num(_LEFT + plot / 2)}" y="{bottom + 32}" class="tick" '
        f'text-anchor="middle">time since the run started</text>'
    )
    if gate_value is not None:
        gy = _num(y(gate_value))
        parts.append(
            f'<line x1="{_LEFT}" y1="{gy}" x2="{_LEFT + plot}" y2="{gy}" class="gate">'
            f"<title>gate {_e(chart.gate.describe())}</title></line>"
            f'<text x="{_LEFT + plot}" y="{_num(y(gate_value) - 4)}" class="gate-label" '
            f'text-anchor="end">gate {_e(chart.gate.bound())}</text>'
        )
    for i, series in enumerate(chart.series):
        if not series.samples:
            continue
        word = series.drawn
        stroke = COLOURS["FAIL"] if word == "FAIL" else _PALETTE[i % len(_PALETTE)]
        dash = ' stroke-dasharray="5 3"' if word not in ("PASS", "RUNNING") else ""
        points = " ".join(f"{_num(x(s.offset_s))},{_num(y(s.value))}" for s in series.samples)
        verdict = f"{series.word} on another gate; this one is met" if series.met else word
        parts.append(
            f"<g><title>{_e(series.label)} ({_e(verdict)})</title>"
            f'<polyline points="{points}" fill="none" stroke="{stroke}" stroke-width="2"{dash}/>'
        )
        for s in series.samples:
            fill = "#ffffff" if s.checkpoint else stroke
            when = "checkpoint" if s.checkpoint else "window end"
            tip = _e(
                f"{series.label} at {duration(s.offset_s)} ({when}): {_label(round(s.value, 4))}"
            )
            parts.append(
                f'<circle cx="{_num(x(s.offset_s))}" cy="{_num(y(s.value))}" r="3" '
                f'fill="{fill}" stroke="{stroke}"><title>{tip}</title></circle>'
            )
        last = series.samples[-1]
        parts.append(
            f'<text x="{_num(x(last.offset_s) + 6)}" y="{_num(y(last.value) + 4 + 11 * (i % 3))}" '
            f'class="series-label">{_e(mark(word))} {_e(series.label)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
