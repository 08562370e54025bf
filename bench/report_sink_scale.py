"""What a run writes and glimmer reads back, at 1,024 and 10,000 nodes (issue 9 item 5).

For each size: a ``smoke`` run on a generated HGX fleet through the installed ``glimmer`` (as a
user runs it), with ``--output json``, a ``file=`` sink and a ``dir=`` sink; then ``glimmer
report`` over the run JSON. Prints the sizes and times, bytes per result, and the 10k/1k ratio
of bytes per result, which stays near 1 when what the sinks store is linear in the run.

Sizes: ``GLIMMER_BENCH_NODES=1024,10000`` (the default) or node counts as arguments. It only
prints: a slow machine, or a ``glimmer report`` that refuses a large run, is a finding, not a
crash.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_NODES = (1024, 10_000)
GPUS_PER_NODE = 8  # the hgx shape of `glimmer fleet generate`
CONFIGMAP_BUDGET = 921_600  # what one object of the dir= sink may hold
TIMEOUT_S = 1_800  # per command: a hang is reported, never waited on for ever


@dataclass(frozen=True)
class Step:
    code: int | None  # None: timed out
    wall: float
    err: str  # the last line of stderr


@dataclass(frozen=True)
class Figures:
    nodes: int
    results: int
    run: Step
    run_json: int
    file_sink: int
    dir_sink: int
    dir_objects: int
    dir_largest: int
    report: Step
    report_bytes: int


def _glimmer() -> str:
    beside = Path(sys.executable).with_name("glimmer")
    return str(beside) if beside.exists() else (shutil.which("glimmer") or "glimmer")


def _call(args: list[str], cwd: Path, stdout: Path | None = None) -> Step:
    start = time.perf_counter()
    out = stdout.open("wb") if stdout is not None else subprocess.DEVNULL
    try:
        done = subprocess.run(
            [_glimmer(), *args], cwd=cwd, stdout=out, stderr=subprocess.PIPE, timeout=TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        return Step(None, time.perf_counter() - start, f"timed out after {TIMEOUT_S} s")
    finally:
        if stdout is not None and not isinstance(out, int):
            out.close()
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    return Step(done.returncode, time.perf_counter() - start, lines[-1] if lines else "")


def _bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def _objects(root: Path) -> list[int]:
    """What each object of a dir= sink holds, by the ConfigMap's measure (keys and values)."""
    if not root.is_dir():
        return []
    folders = [root, *sorted(p for p in root.iterdir() if p.is_dir())]
    return [
        sum(len(p.name) + p.stat().st_size for p in folder.iterdir() if p.is_file())
        for folder in folders
    ]


def _results(run_json: Path) -> int:
    try:
        status = json.loads(run_json.read_bytes()).get("status") or {}
    except (OSError, ValueError):
        return 0
    return len(status.get("results") or ())


def measure(nodes: int, work: Path) -> Figures:
    fleet = work / "fleet.yaml"
    _call(["fleet", "generate", "--gpus", str(nodes * GPUS_PER_NODE), "--out", str(fleet)], work)
    run_json = work / "run.json"
    run = _call(
        [
            "run", "--fleet", str(fleet), "--profile", "smoke", "--no-faults",
            "--sink", f"file={work / 'sink.jsonl'}", "--sink", f"dir={work / 'cm'}",
            "--sink-state", str(work / "outbox"), "--report", str(work / "run-report"),
            "--output", "json",
        ],
        work,
        stdout=run_json,
    )  # fmt: skip
    report = _call(["report", str(run_json), "--output-dir", str(work / "report")], work)
    objects = _objects(work / "cm")
    return Figures(
        nodes=nodes,
        results=_results(run_json),
        run=run,
        run_json=_bytes(run_json),
        file_sink=_bytes(work / "sink.jsonl"),
        dir_sink=sum(objects),
        dir_objects=len(objects),
        dir_largest=max(objects, default=0),
        report=report,
        report_bytes=_bytes(work / "report"),
    )


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def _per(n: int, results: int) -> str:
    return f"{n / results:.0f} B/result" if results else "n/a"


def _show(f: Figures) -> None:
    if f.run.code not in (0, 1):  # 0 Passed, 1 Failed: both are verdicts worth measuring
        print(f"{f.nodes} nodes: glimmer run gave exit {f.run.code}: {f.run.err}")
    print(
        f"{f.nodes} nodes, {f.results} results: run {f.run.wall:.1f} s; "
        f"--output json {_mb(f.run_json)} ({_per(f.run_json, f.results)}); "
        f"file= sink {_mb(f.file_sink)} ({_per(f.file_sink, f.results)}); "
        f"dir= sink {_mb(f.dir_sink)} in {f.dir_objects} objects "
        f"(largest {f.dir_largest} B, budget {CONFIGMAP_BUDGET} B)"
    )
    if f.report.code == 0:
        print(f"{f.nodes} nodes: glimmer report {f.report.wall:.1f} s, {_mb(f.report_bytes)}")
    else:
        print(
            f"{f.nodes} nodes: glimmer report REFUSED the run JSON (exit {f.report.code}, "
            f"{f.report.wall:.1f} s): {f.report.err}"
        )


def _ratios(small: Figures, large: Figures) -> None:
    if not (small.results and large.results):
        print("bytes per result: not comparable (a run gave no results)")
        return
    parts = []
    for label, a, b in (
        ("--output json", small.run_json, large.run_json),
        ("file= sink", small.file_sink, large.file_sink),
        ("dir= sink", small.dir_sink, large.dir_sink),
    ):
        ratio = (b / large.results) / (a / small.results) if a else float("nan")
        parts.append(f"{label} {ratio:.2f}")
    print(f"bytes per result {large.nodes}/{small.nodes} nodes (flat is 1.00): " + ", ".join(parts))


def _sizes(argv: list[str]) -> list[int]:
    given = argv or [s for s in os.environ.get("GLIMMER_BENCH_NODES", "").split(",") if s.strip()]
    return [int(s) for s in given] if given else list(DEFAULT_NODES)


def main(argv: list[str]) -> None:
    figures = []
    for nodes in _sizes(argv):
        with tempfile.TemporaryDirectory(prefix=f"glimmer-bench-{nodes}-") as tmp:
            figures.append(measure(nodes, Path(tmp)))
        _show(figures[-1])
    if len(figures) >= 2:
        _ratios(figures[0], figures[-1])


if __name__ == "__main__":
    main(sys.argv[1:])
