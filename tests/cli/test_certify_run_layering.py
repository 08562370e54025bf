"""``glimmer certify run`` builds its twin and runs the certification through the registry's
simulator entry (which offers glimmer.backends.sim.certify), never by importing the simulator."""

from __future__ import annotations

import ast
from pathlib import Path

import glimmer.cli.certify_run as certify_run


def test_certify_run_imports_nothing_from_the_simulator() -> None:
    tree = ast.parse(Path(certify_run.__file__).read_text(encoding="utf-8"))
    modules = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)] + [
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    ]
    assert "glimmer.backends.common.registry" in modules
    assert [m for m in modules if m.startswith("glimmer.backends.sim")] == []
    assert [m for m in modules if m == "glimmer.sim" or m.startswith("glimmer.sim.")] == []
