"""Golden files: the exact JUnit, Markdown, NVVS and HTML output of the checked-in runs.

Regenerate after an intended change with ``GLIMMER_UPDATE_GOLDEN=1 .venv/bin/pytest
tests/reports -q`` and review the diff like code.
"""

from __future__ import annotations

import pytest

from conftest import STAMP, check_golden, load_run
from glimmer.fleet.load import load_topology
from glimmer.reports import assemble
from glimmer.reports.html import render_html
from glimmer.reports.junit import render_junit
from glimmer.reports.markdown import render_markdown
from glimmer.reports.nvvs import render_nvvs

GOLDEN_RUNS = ["acceptance-failed", "pair-failed", "mixed-outcomes", "baseline", "soak-in-progress"]


@pytest.mark.parametrize("name", GOLDEN_RUNS)
def test_junit_matches_its_golden_file(name: str) -> None:
    check_golden(f"{name}/junit.xml", render_junit(assemble(load_run(name), stamp=STAMP)))


@pytest.mark.parametrize("name", GOLDEN_RUNS)
def test_markdown_matches_its_golden_file(name: str) -> None:
    check_golden(f"{name}/burnin-report.md", render_markdown(assemble(load_run(name), stamp=STAMP)))


@pytest.mark.parametrize("name", GOLDEN_RUNS)
def test_nvvs_documents_match_their_golden_files(name: str) -> None:
    # The fleet supplies GPU entities and serials, as it would for a run on ai-factory.
    fleet = load_topology("ai-factory")
    for file, text in render_nvvs(assemble(load_run(name), fleet, stamp=STAMP)).items():
        check_golden(f"{name}/{file}", text)


@pytest.mark.parametrize("name", GOLDEN_RUNS)
def test_html_matches_its_golden_file(name: str) -> None:
    # The page's layout (findings first, passing nodes folded) changes only on purpose.
    fleet = load_topology("ai-factory")
    check_golden(f"{name}/burn-in-report.html", render_html(assemble(load_run(name), fleet, STAMP)))
