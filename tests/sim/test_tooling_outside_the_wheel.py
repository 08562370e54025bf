"""The coverage-sweep tooling lives in tools/, outside the wheel, and nothing in the product
imports it (DESIGN.md, Layout: tooling that is not part of the product stays out of it)."""

from __future__ import annotations

import ast
import importlib.util
import tomllib
from pathlib import Path

import glimmer

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(glimmer.__file__).parent


def _imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_no_product_module_imports_the_tooling() -> None:
    found = {
        f"{p.relative_to(SRC)}: {name}"
        for p in sorted(SRC.rglob("*.py"))
        for name in _imported(p)
        if name == "tools" or name.startswith("tools.")
    }
    assert found == set()


def test_the_sweep_and_its_second_settlement_path_left_the_package() -> None:
    for gone in (
        "glimmer.backends.sim_coverage",
        "glimmer.sim.runners.coverage",
        "glimmer.sim.runners.coverage_doc",
        "glimmer.sim.runners.detectors",
        "glimmer.sim.runners.harness",
    ):
        assert importlib.util.find_spec(gone) is None, gone
    assert importlib.util.find_spec("tools.coverage.harness") is not None


def test_the_wheel_packages_only_glimmer() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["src/glimmer"]
    assert not (SRC / "tools").exists()
