"""The human report card of a certification (specs/certify.md §8): a header box, one box per
category, a summary box.

Each category box shows status, duration, nodes per job, jobs and MNNVL; for collectives the
largest message size's bandwidth and every group's measured figure beside its expectation and
verdict; for training the goodput lines; then failed groups (reasons cut to the box) and the
failed nodes with their reasons in full (wrapped, never cut: the reason is the evidence).
The card is ``WIDTH`` columns wide unless a narrower width is asked for (a terminal's), down to
``MIN_WIDTH``: boxes wider than the terminal would be broken by it line by line.
"""

from __future__ import annotations

import textwrap

from glimmer.certify.result import CategoryResult, CertResult, GroupRun, runtime_text

WIDTH = 100
MIN_WIDTH = 60
BORDER = 4  # "│ " and " │"


def _box(title: str, lines: list[str], width: int) -> list[str]:
    inner = width - BORDER
    top = f"┌─ {title} " + "─" * max(width - len(title) - 5, 0) + "┐"
    body = [f"│ {line[:inner]:<{inner}} │" for line in lines]
    return [top, *body, "└" + "─" * (width - 2) + "┘"]


def _wrap(text: str, width: int, first: str = "", rest: str = "") -> list[str]:
    # Never split a host name at its hyphen: a wrapped name would not be found by grep.
    return textwrap.wrap(
        text, width - BORDER, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False
    )


def _cut(text: str, width: int) -> str:
    """One line cut to the box between words, marked with an ellipsis (§8: failed groups'
    reasons are truncated; the failed nodes below carry them in full)."""
    inner = width - BORDER
    if len(text) <= inner:
        return text
    head = text[: inner - 1]
    cut = head.rfind(" ")
    return (head[:cut] if cut > inner // 2 else head).rstrip() + "…"


def _size(n: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} B"


def _num(v: float | None, unit: str = "") -> str:
    return "-" if v is None else f"{v:.2f}{unit}"


# The unit of the figure a group's verdict read, by its key.
_UNITS = {"busBandwidthGBps": " GB/s", "avgTFLOPsPerGPU": " TFLOP/s", "avgStepTimeSec": " s"}


def _group_line(g: GroupRun) -> str:
    verdict = "PASS" if g.passed else "FAIL"
    if g.metric == "dcgmLevel":
        return f"  {verdict}  {g.name:<16} {g.reason}".rstrip()
    unit = _UNITS.get(g.metric, "")
    text = f"  {verdict}  {g.name:<16} {len(g.nodes):>4} nodes  {g.path or '-':<7}  "
    text += _num(g.measured, unit)
    if g.expected is not None:
        text += f" of {_num(g.expected)} expected"
    if g.floor is not None:
        text += f" (floor {g.floor:.2f})"
    return text


def _category(c: CategoryResult, width: int) -> list[str]:
    mnnvl = "" if c.mnnvl is None else f"   MNNVL: {'Enabled' if c.mnnvl else 'Disabled'}"
    jobs = len(c.groups) + (c.isolation.jobs if c.isolation else 0)
    lines = [
        f"Status: {c.status}   Duration: {runtime_text(c.runtime_s)}   Jobs: {jobs}",
        f"Test scale: {c.test_scale}   Nodes/Job: {c.nodes_per_job}{mnnvl}",
    ]
    if c.bandwidth:
        big = max(c.bandwidth, key=lambda b: b.size)
        lines += [
            f"{'Size':<10} {'AlgBW':>14} {'BusBW':>14} {'Samples':>8}",
            f"{_size(big.size):<10} {big.alg_bw:>9.2f} GB/s {big.bus_bw:>9.2f} GB/s "
            f"{big.samples:>8}",
        ]
    if c.training:
        t = c.training
        g = t.get("goodput")
        if g is not None:
            lines.append(f"Avg Runtime Goodput: {g:.2f} ({g * 100:.0f}%)")
        lines.append(
            f"Avg TFLOPs/GPU: {t.get('tflops', 0):.1f}   Avg Train Time: "
            f"{runtime_text(t.get('trainTime', 0.0))}   Avg Step Time: {t.get('stepTime', 0):.3f}s"
        )
    # Failed groups first: on a thousand-node run the card shows what matters.
    shown = sorted(
        (g for g in c.groups if g.metric != "dcgmLevel" or not g.passed), key=lambda g: g.passed
    )
    if shown:
        lines.append("Groups:")
        lines += [_group_line(g) for g in shown[:20]]
        if len(shown) > 20:
            lines.append(f"  … {len(shown) - 20} more")
    elif c.groups:
        lines.append(f"Groups: {len(c.groups)} one-node jobs, all passed")
    failed = [g for g in c.groups if not g.passed]
    if failed:
        lines.append("Failed groups:")
        lines += [_cut(f"  {g.name} ({len(g.nodes)} nodes): {g.reason}", width) for g in failed]
    if c.isolation:
        iso = c.isolation
        lines += _wrap(f"Isolation: {iso.rounds} rounds, {iso.jobs} jobs: {iso.message}", width)
        lines += [f"  infrastructure fault: {f}" for f in iso.infrastructure]
    if c.failed_nodes:
        lines.append("Failed nodes:")
        for f in c.failed_nodes:
            text = f"{f.name} ({f.reason}): {f.message}"
            lines += _wrap(text, width, "  ", "      ")
    if c.failure_reason:
        lines += _wrap(f"Reason: {c.failure_reason}", width)
    return _box(c.ref, lines, width)


def render(r: CertResult, width: int = WIDTH) -> str:
    """The whole card as text, ``width`` columns wide (at least ``MIN_WIDTH``)."""
    width = max(width, MIN_WIDTH)
    excluded = f" ({len(r.excluded_nodes)} excluded)" if r.excluded_nodes else ""
    head = [
        f"Name: {r.name}",
        f"Platform: {r.platform} (fleet {r.fleet}, seed {r.seed})",
        f"GPU: {r.gpu}   Nodes: {r.total_nodes}{excluded}",
    ]
    if r.faults:
        head += _wrap(f"Planted faults: {', '.join(r.faults)}", width, "", "  ")
    if r.exclusion_reason:
        head += _wrap(f"Excluded: {r.exclusion_reason}: {', '.join(r.excluded_nodes)}", width)
    out = _box("Certification Report", head, width)
    for c in r.categories:
        out += _category(c, width)
    passed = sum(1 for c in r.categories if c.passed)
    failed = r.failed_nodes
    summary = [
        f"Categories: {passed}/{len(r.categories)} passed",
        *_wrap(
            f"Failed Nodes: {len(failed)}" + (f" ({', '.join(failed)})" if failed else ""), width
        ),
        f"Result: {r.result}",
    ]
    out += _box("Summary", summary, width)
    return "\n".join(out) + "\n"
