"""The HTML report in a real browser: headless Chromium renders it, takes a screenshot, and the
rendered DOM still holds the verdict table and the SVG charts.

Chromium comes from Debian's ``chromium`` (tests/tools/ensure_chromium.sh installs it when
missing). Under CI=true a missing browser fails the test; elsewhere it skips.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from png import pixels, read_png

from conftest import STAMP, ensure_tool, load_run
from glimmer.fleet.load import load_topology
from glimmer.reports import write_reports


def _chromium(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            # Each run its own profile, so parallel test workers never share a lock.
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html")
    run = load_run("acceptance-failed")
    [path] = write_reports(run, out, ["html"], load_topology("ai-factory"), stamp=STAMP)
    return path


def test_chromium_renders_a_non_trivial_screenshot(page: Path, tmp_path: Path) -> None:
    chromium = ensure_tool("chromium", "ensure_chromium.sh")
    shot = tmp_path / "report.png"
    done = _chromium(
        chromium,
        tmp_path / "profile",
        f"--screenshot={shot}",
        "--window-size=1400,2000",
        page.as_uri(),
    )
    assert shot.exists(), done.stderr[-2000:]
    data = shot.read_bytes()
    assert len(data) > 20_000  # a blank 1400x2000 page compresses to a few kB
    image = read_png(data, max_rows=320)
    assert (image.width, image.height) == (1400, 2000)
    colours = pixels(image)
    distinct = set(colours)
    assert len(distinct) > 16, "the screenshot is (nearly) one colour"
    white = bytes((255, 255, 255))
    inked = sum(1 for c in colours if c != white) / len(colours)
    assert inked > 0.01
    # The FAIL banner (#cf222e) is among the first rows drawn.
    assert any(abs(c[0] - 0xCF) < 12 and c[1] < 0x40 and c[2] < 0x50 for c in distinct)


def test_the_rendered_dom_holds_the_verdict_table_and_the_charts(
    page: Path, tmp_path: Path
) -> None:
    chromium = ensure_tool("chromium", "ensure_chromium.sh")
    done = _chromium(chromium, tmp_path / "profile", "--dump-dom", page.as_uri())
    dom = done.stdout
    assert 'id="verdict-table"' in dom, done.stderr[-2000:]
    assert dom.count("<svg") >= 2
    assert 'id="rack-map"' in dom and "Gated metrics across units" in dom
    assert "<script" not in dom


def test_the_rendered_page_leads_with_the_findings_and_folds_passing_nodes(
    page: Path, tmp_path: Path
) -> None:
    chromium = ensure_tool("chromium", "ensure_chromium.sh")
    done = _chromium(chromium, tmp_path / "profile", "--dump-dom", page.as_uri())
    dom = done.stdout
    assert '<h2 id="findings">Findings</h2>' in dom, done.stderr[-2000:]
    first_heading = dom.index("<h2")
    assert first_heading == dom.index('<h2 id="findings">')
    assert dom.index('class="findings"') < dom.index('id="verdict-table"')
    assert '<details class="passing" id="passing-detail">' in dom
    assert dom.count('<details class="node" open="">') == 2  # the two failed nodes, open
