"""Markdown (§6.3): the shape of the page and the escaping of run data."""

from __future__ import annotations

import re

from hostile import hostile_run

from conftest import STAMP, load_run
from glimmer.reports import assemble
from glimmer.reports.markdown import code, esc, render_markdown


def test_the_page_has_the_shape_of_the_spec_example() -> None:
    text = render_markdown(assemble(load_run("acceptance-failed"), stamp=STAMP))
    lines = text.splitlines()
    assert lines[0] == "# Burn-in report — `lab/accept-1`"
    assert lines[2] == "**FAIL**"
    assert "| Results | 48 Passed, 2 Failed, 0 Errored, 0 Skipped |" in lines
    header = "| Node | host-fault-counters | sustained-clock | gpu-stress | memory-bandwidth |"
    assert any(line.startswith(header) for line in lines)
    assert "| `hgx-node-0001` | PASS | FAIL | PASS | PASS | PASS |" in lines
    detail = lines.index("### `hgx-node-0001`")
    assert lines[detail + 2] == "#### `sustained-clock` — FAIL"
    assert "- Gates: `sustainedClockPct ≥ 70`, `throttleEvents = 0`" in lines


def test_violations_carry_their_cause_and_errors_say_the_hardware_was_not_judged() -> None:
    failed = render_markdown(assemble(load_run("pair-failed"), stamp=STAMP))
    assert "- **bandwidthGbps** — bandwidthGbps: got 200.12, need GreaterThanOrEqual 360" in failed
    assert (
        "_The link fell short of the gate. This one is about the link, not either endpoint._"
        in failed
    )
    mixed = render_markdown(assemble(load_run("mixed-outcomes"), stamp=STAMP))
    assert "### results with no node" in mixed
    assert "The hardware was NOT judged" in mixed
    assert "#### `nvfp4-smoke` — SKIP" in mixed


def test_qualifiers_sit_next_to_the_phase() -> None:
    progress = render_markdown(assemble(load_run("soak-in-progress"), stamp=STAMP))
    assert progress.splitlines()[2].startswith("**RUNNING** · `INCOMPLETE — ")
    baseline = render_markdown(assemble(load_run("baseline"), stamp=STAMP))
    assert baseline.splitlines()[2].startswith("**FAIL** · `BASELINE — ")


def test_pipes_are_escaped_even_in_code_and_empty_values_read_as_a_dash() -> None:
    assert esc("a|b\nc") == "a\\|b c"
    assert esc("") == "—" and code(None) == "—"
    assert code("x`y|z") == "`` x`y\\|z ``"
    text = render_markdown(assemble(hostile_run(), stamp=STAMP))
    assert "<script>alert(1)</script> \\| `tick`" in text
    # Every row of a table has as many unescaped pipes as its header: nothing broke a row.
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.startswith("|"):
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    for block in (b for b in blocks if b):
        widths = {len(re.findall(r"(?<!\\)\|", row)) for row in block}
        assert len(widths) == 1, block
