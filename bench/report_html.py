"""The HTML report at fleet size: a failed ``acceptance`` run over 128 and 1,024 HGX nodes.

For each size it generates a Fleet (``glimmer fleet generate --shape hgx``), plants a few faults
(a GPU pinned in a low P-state on the first nodes, a NIC link that goes down on another), runs
the built-in ``acceptance`` profile to its verdict on the simulator, renders the HTML report and
prints its size (the target is under 3 MB at 1,024 nodes) and how long headless Chromium takes
to load it and dump its DOM, beside the same for an empty page (Chromium's own start-up). The
target for the 1,024-node page is under 5 s. It only prints: a slow machine is a finding.

    .venv/bin/python bench/report_html.py            # 128 and 1024
    .venv/bin/python bench/report_html.py 1024       # one size
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from glimmer.api.run import BurnInRun
from glimmer.backends.sim.driver import drive
from glimmer.backends.sim.fleet import fleet_backend
from glimmer.engine.reconciler import Engine
from glimmer.fleet.generate import generate, to_yaml
from glimmer.fleet.load import load_topology
from glimmer.reports.assemble import assemble
from glimmer.reports.html import render_html
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim

GPUS_PER_HGX = 8
SIZE_TARGET_BYTES = 3_000_000
OPEN_TARGET_S = 5.0


def _run(targets: list[str]) -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "bench-acceptance", "namespace": "default"},
            "spec": {
                "profileRef": "acceptance",
                "target": {"nodeNames": targets},
                "maxConcurrentNodes": 64,
            },
        }
    )


def failed_run(nodes: int, work: Path) -> tuple[BurnInRun, Path]:
    """A settled acceptance run over ``nodes`` generated HGX nodes with faults planted."""
    fleet_file = work / f"hgx-{nodes}.yaml"
    fleet_file.write_text(to_yaml(generate(nodes * GPUS_PER_HGX, "hgx")), encoding="utf-8")
    topo = load_topology(str(fleet_file))
    names = [n.hostname for n in topo.nodes][:nodes]
    faults = [Fault("gpu_low_pstate", f"gpu:{names[i]}/3") for i in range(0, nodes, 97)]
    twin = FleetSim(topo, faults)
    backend = fleet_backend(twin, seed=7)
    backend.submit(_run(names))
    return drive(backend, Engine(backend), "default", "bench-acceptance").run, fleet_file


def chromium_seconds(page: Path, profile: Path, *how: str) -> float | None:
    """Wall seconds for headless Chromium to load ``page`` and do ``how`` (``--dump-dom``, or
    ``--screenshot=…``: laid out and painted); None when there is no browser."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        return None
    start = time.perf_counter()
    subprocess.run(
        [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--user-data-dir={profile}",
            *how,
            page.as_uri(),
        ],
        capture_output=True,
        check=False,
        timeout=300,
    )
    return time.perf_counter() - start


def bench(nodes: int, work: Path) -> None:
    start = time.perf_counter()
    run, fleet_file = failed_run(nodes, work)
    ran = time.perf_counter() - start
    topo = load_topology(str(fleet_file))
    start = time.perf_counter()
    text = render_html(assemble(run, topo))
    rendered = time.perf_counter() - start
    page = work / f"report-{nodes}.html"
    page.write_text(text, encoding="utf-8")
    size = page.stat().st_size
    phase = run.status.phase.value if run.status else "?"
    verdict = "under" if size < SIZE_TARGET_BYTES else "OVER"
    print(
        f"{nodes} nodes ({phase}): run {ran:.1f} s, render {rendered:.2f} s, "
        f"HTML {size:,} bytes ({size / 1e6:.2f} MB, {verdict} the 3 MB target)"
    )
    empty = work / "empty.html"
    empty.write_text("<!DOCTYPE html><title>empty</title>", encoding="utf-8")
    for what, how in (
        ("load + dump-dom", ("--dump-dom",)),
        ("load + screenshot", (f"--screenshot={work / 'shot.png'}", "--window-size=1400,2000")),
    ):
        blank = chromium_seconds(empty, work / f"profile-empty-{nodes}", *how)
        opened = chromium_seconds(page, work / f"profile-{nodes}", *how)
        if opened is None or blank is None:
            print("  headless Chromium: not installed, open time not measured")
            return
        print(
            f"  headless Chromium {what}: {opened:.2f} s "
            f"(an empty page: {blank:.2f} s; target < {OPEN_TARGET_S:.0f} s)"
        )


if __name__ == "__main__":
    sizes = [int(a) for a in sys.argv[1:]] or [128, 1024]
    with tempfile.TemporaryDirectory(prefix="glimmer-bench-") as tmp:
        for n in sizes:
            bench(n, Path(tmp))
