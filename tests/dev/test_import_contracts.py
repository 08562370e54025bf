"""The import-linter contracts of pyproject.toml hold on the tree, and each one fails when the
import it forbids is planted in a copy of the package: a contract that cannot fail holds nothing.

One copy, one planted import per contract, one lint-imports run; every contract must then be
reported broken, and the tree itself must be clean.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")

# Contract name (as in pyproject.toml) -> (module file in the copy, the import planted there).
PLANTS: dict[str, tuple[str, str]] = {
    "Layers of DESIGN.md: imports point down only": (
        "glimmer/contract/names.py",
        "import glimmer.api.meta",
    ),
    "The engine, the plan, the verdict rules and certification know no substrate": (
        "glimmer/certify/grouping.py",
        "import glimmer.sim.twin",
    ),
    "The engine and the plan know no fleet topology (a substrate lists nodes)": (
        "glimmer/plan/targets.py",
        "import glimmer.fleet.topology",
    ),
    "Substrates are independent of each other": (
        "glimmer/backends/kubernetes/podspec.py",
        "import glimmer.backends.sim.backend",
    ),
    "The shared parts of the substrates depend on no substrate, the registry aside": (
        "glimmer/backends/common/delivery.py",
        "import glimmer.backends.sim.backend",
    ),
    "The CLI reaches a substrate only through the registry": (
        "glimmer/cli/layout.py",
        "import glimmer.backends.sim.backend",
    ),
    "Cluster libraries only in the Kubernetes substrate and the operator": (
        "glimmer/sinks/sinkset.py",
        "import kopf",
    ),
    "The core imports no Kubernetes, HTTP or GPU library": (
        "glimmer/api/meta.py",
        "import requests",
    ),
    "Runners import only the contract": ("glimmer/runners/__init__.py", "import glimmer.api"),
}


def _lint(root: Path, src: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [str(LINT), "--no-cache", str(root / "pyproject.toml")],
        cwd=root, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


def _contracts() -> list[str]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = text.split("[tool.importlinter]", 1)[1].split("\n[tool.", 1)[0]
    return [
        line.split("=", 1)[1].strip().strip('"')
        for line in section.splitlines()
        if line.startswith("name = ")
    ]


def test_every_contract_has_a_planted_import_that_breaks_it() -> None:
    assert sorted(_contracts()) == sorted(PLANTS)


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("contracts")
    shutil.copytree(ROOT / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    for module, line in PLANTS.values():
        path = root / "src" / module
        text = path.read_text(encoding="utf-8")
        # After the module docstring and the __future__ import, where imports may stand.
        head, sep, rest = text.partition("from __future__ import annotations\n")
        path.write_text(f"{head}{sep}{line}  # planted\n{rest}" if sep else f"{line}\n{text}")
    done = _lint(root, root / "src")
    assert done.returncode != 0, done.stdout
    return done.stdout


@pytest.mark.parametrize("contract", sorted(PLANTS))
def test_a_planted_forbidden_import_breaks_its_contract(planted: str, contract: str) -> None:
    assert f"{contract} BROKEN" in planted, planted[-3000:]


def test_the_tree_keeps_every_contract() -> None:
    done = _lint(ROOT, ROOT / "src")
    assert done.returncode == 0, done.stdout[-3000:]
    assert f"Contracts: {len(PLANTS)} kept, 0 broken." in done.stdout
