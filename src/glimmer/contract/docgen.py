"""Render ``docs/metrics.md`` from the registry, the kind alias tables and the emitted sets.

The document is generated so that it can never disagree with the code; a test compares the
checked-in file with this rendering. Regenerate with::

    python -m glimmer.contract.docgen > docs/metrics.md
"""

from __future__ import annotations

import sys

from glimmer.contract.emitted import emitted_metrics, kinds_emitting
from glimmer.contract.kinds import KINDS
from glimmer.contract.names import UNIT_SUFFIXES
from glimmer.contract.registry import METRICS, REGISTRY, SPREAD_METRICS, Unit

REGENERATE = "python -m glimmer.contract.docgen > docs/metrics.md"

_UNIT_MEANING: dict[Unit, str] = {
    Unit.GBPS: "gigabits per second (wire throughput)",
    Unit.GBS: "gigabytes per second (memory and collective bandwidth)",
    Unit.MBS: "megabytes per second",
    Unit.TFLOPS: "teraflops",
    Unit.MHZ: "megahertz",
    Unit.US: "microseconds",
    Unit.MS: "milliseconds",
    Unit.PCT: "percent",
    Unit.C: "degrees Celsius",
    Unit.W: "watts",
    Unit.S: "seconds",
}


def _cell(text: str) -> str:
    """Make text safe inside a Markdown table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _code(names: list[str] | tuple[str, ...]) -> str:
    return ", ".join(f"`{n}`" for n in names) if names else "—"


def render() -> str:
    """The full text of docs/metrics.md."""
    out: list[str] = [
        "# Metrics",
        "",
        f"<!-- Generated from glimmer.contract; do not edit. Regenerate: {REGENERATE} -->",
        "",
        "A runner reports metrics as `key=value` lines on stdout. Each key is turned into a",
        "canonical lowerCamelCase name (the kind's alias table first, else the generic `_`/`-`",
        "conversion) and checked against the name grammar: a lower-case ASCII letter, then ASCII",
        "letters and digits only. Any such name is legal; the registry below lists the names",
        "glimmer knows, and holds each of them to the unit its suffix spells.",
        "",
        "Gates may only sit on **Acceptance** metrics (and on unregistered names, which are",
        "assumed gateable); **Evidence** metrics are recorded, never judged. The window fold says",
        "how a segmented soak combines a metric over its windows (unregistered names keep the",
        "last window); the rank fold says how a Group combines its ranks (*Collective* takes the",
        "lowest rank; *unclassified* values are kept only when every rank agrees).",
        "",
        "## Unit suffixes",
        "",
        "Checked in this order, so a longer suffix wins; a name must be longer than its suffix.",
        "A name with none of them is dimensionless.",
        "",
        "| suffix | unit |",
        "|---|---|",
    ]
    out += [f"| `{u.value}` | {_UNIT_MEANING[u]} |" for u in UNIT_SUFFIXES]
    out += [
        "",
        "Generic conversion does not know these suffixes: `h2d_bandwidth_gbs` becomes",
        "`h2dBandwidthGbs` (dimensionless, unregistered), not `...GBs`. Runners outside this",
        "project should print canonical names directly.",
        "",
        f"## Registry ({len(METRICS)} metrics)",
        "",
        "| # | name | unit | use | window fold | rank fold | emitted by | meaning |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for i, m in enumerate(METRICS, start=1):
        rank = m.combination.value if m.combination else "unclassified"
        out.append(
            f"| {i} | `{m.name}` | {m.unit.value or '—'} | {m.use.value} | {m.aggregation.value}"
            f" | {rank} | {_cell(', '.join(kinds_emitting(m.name)) or '—')}"
            f" | {_cell(m.description)} |"
        )
    out += [
        "",
        "Spread metrics (" + _code(sorted(SPREAD_METRICS)) + ") are `n/a` on a single device,",
        "so gate them `RequiredIfMeasurable`.",
        "",
        "## Aliases by kind",
        "",
        "Raw keys a kind's runner prints that generic conversion would not turn into the",
        "canonical name. Only the exact raw key matches; unknown and `custom` kinds have none.",
        "",
        "| kind | raw key | canonical name |",
        "|---|---|---|",
    ]
    for kind in KINDS:
        for raw, target in kind.aliases.items():
            out.append(f"| {kind.name} | `{raw}` | `{target}` |")
    out += [
        "",
        "## Unregistered names the built-in runners print",
        "",
        "Legal, gateable and folded as *last window*; listed so that a gate on them is not",
        "mistaken for a typo.",
        "",
        "| kind | names |",
        "|---|---|",
    ]
    for kind in KINDS:
        extra = sorted(n for n in emitted_metrics(kind.name) or () if n not in REGISTRY)
        out.append(f"| {kind.name} | {_code(extra)} |")
    out.append("")
    return "\n".join(out)


def main() -> None:
    sys.stdout.buffer.write(render().encode("utf-8"))


if __name__ == "__main__":
    main()
