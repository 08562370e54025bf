"""Running a real runner program as a subprocess, and checking that what it printed is what the
engine accepts: the same ``glimmer.contract.parse`` call, no rejected name, only names the kind
is known to emit, and one final marker line whose word agrees with the exit code."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from glimmer.contract.emitted import emitted_metrics
from glimmer.contract.parse import parse
from glimmer.contract.vocab import ParsedResult
from glimmer.runners.report import prefix_of

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXIT_OF_WORD = {"PASS": 0, "OK": 0, "FAIL": 1, "FAULT": 1, "SKIP": 2, "ERROR": 3}


@dataclass(frozen=True)
class Ran:
    kind: str
    stdout: str
    stderr: str
    exit_code: int
    parsed: ParsedResult

    @property
    def marker(self) -> str:
        return self.stdout.rstrip("\n").split("\n")[-1]


def runner_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """A clean environment: PATH and the interpreter's own variables, no stray BURNIN_*."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("BURNIN_", "DISK_IO_"))}
    base.pop("FINGERPRINT_PROBE_SYSFS", None)
    base.update(env or {})
    return base


def argv_of(kind: str, python: str = sys.executable) -> list[str]:
    return [python, "-m", f"glimmer.runners.{kind.replace('-', '_')}"]


def finish(kind: str, stdout: str, stderr: str, code: int) -> Ran:
    return Ran(kind, stdout, stderr, code, parse(kind, stdout, code))


def run_runner(
    kind: str,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
    python: str = sys.executable,
) -> Ran:
    proc = subprocess.run(
        argv_of(kind, python),
        env=runner_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return finish(kind, proc.stdout, proc.stderr, proc.returncode)


def assert_contract(ran: Ran) -> None:
    """What the runner printed is exactly what the engine reads."""
    lines = ran.stdout.rstrip("\n").split("\n")
    prefix = prefix_of(ran.kind)
    found = re.fullmatch(rf"{prefix}_([A-Z]+)(?:: .+)?", lines[-1])
    assert found, f"last line is not a {prefix} marker: {lines[-1]!r}\n{ran.stdout}{ran.stderr}"
    assert EXIT_OF_WORD[found.group(1)] == ran.exit_code, ran.stdout
    for line in lines[:-1]:
        assert not re.match(r"^[A-Z][A-Z0-9_]*_(PASS|FAIL|SKIP|ERROR|OK|FAULT)\b", line), line
    assert ran.parsed.invalid_names == (), ran.parsed.invalid_names
    allowed = emitted_metrics(ran.kind)
    assert allowed is not None
    names = set(ran.parsed.metrics) | set(ran.parsed.unmeasurable)
    assert names <= allowed, f"{ran.kind} printed names it is not known to emit: {names - allowed}"
    assert ran.parsed.message == lines[-1].strip()[:1024]


@dataclass(frozen=True)
class Standalone:
    """A Python with nothing installed, and a PYTHONPATH holding only what a runner may use."""

    python: str
    pythonpath: str


def standalone(tmp_path: Path) -> Standalone:
    """A fresh venv (no pip, no packages) and copies of glimmer/contract and glimmer/runners
    alone, without even glimmer/__init__.py: a runner that needs more fails to import there."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    pkgs = tmp_path / "pkgs"
    for package in ("contract", "runners"):
        shutil.copytree(
            SRC / "glimmer" / package,
            pkgs / "glimmer" / package,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    return Standalone(str(venv / "bin" / "python"), str(pkgs))
