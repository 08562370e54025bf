"""Every metric name a runner program prints is declared in contract/emitted.py for a kind
that runs that code, read from the runner sources themselves.

The linter flags a gate on a name the kind's emitted set lacks, so a printed name missing
there makes a sound gate look unsound. The runs in tests/runners check what one run printed
(real_runner.assert_contract); this reads every call that prints a metric
(``Report.metric``, ``Report.unmeasurable``, ``DeviceResult.put``) in every module a kind's
runner imports, so a name on a path no test run reaches is checked too. A literal name is
converted as the parser converts it (the kind's aliases, then the generic rule); an f-string
name is a family, declared when some declared name fits it (clockprobe's ``{reason}Samples``).
A name held in a variable is left to the runs.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from glimmer.contract.emitted import emitted_metrics
from glimmer.contract.kinds import BUILT_IN
from glimmer.contract.names import canonical_name

RUNNERS = Path(__file__).resolve().parents[2] / "src" / "glimmer" / "runners"
PACKAGE = "glimmer.runners"
PRINTING = {"metric", "unmeasurable", "put"}
PLACEHOLDER = "zqz"  # stands for an f-string's field while the name is converted


def _module(name: str) -> Path:
    return RUNNERS / f"{name}.py"


@cache
def _tree(name: str) -> ast.Module:
    return ast.parse(_module(name).read_text())


@cache
def _imports(name: str) -> frozenset[str]:
    found: set[str] = set()
    for node in ast.walk(_tree(name)):
        if isinstance(node, ast.ImportFrom) and node.module == PACKAGE:
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE + "."):
            found.add((node.module or "").rsplit(".", 1)[1])
        elif isinstance(node, ast.Import):
            named = [a.name for a in node.names if a.name.startswith(PACKAGE + ".")]
            found |= {n.rsplit(".", 1)[1] for n in named}
    return frozenset(m for m in found if _module(m).is_file())


@cache
def _reached(kind: str) -> frozenset[str]:
    """The runner modules a kind's program imports, its own included (asked for every printed
    name of every module: walked once per kind, not once per name, which was 2 minutes)."""
    seen: set[str] = set()
    todo = [kind.replace("-", "_")]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(_imports(name))
    return frozenset(seen)


def _printed(module: str) -> list[ast.expr]:
    """The name argument of every call that prints a metric."""
    return [
        node.args[0]
        for node in ast.walk(_tree(module))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in PRINTING
        and node.args
    ]


def _family(kind: str, name: ast.JoinedStr) -> re.Pattern[str]:
    """The canonical names an f-string name can produce under ``kind``."""
    raw = "".join(v.value if isinstance(v, ast.Constant) else PLACEHOLDER for v in name.values)
    canonical = canonical_name(kind, raw)
    parts = re.split(PLACEHOLDER, canonical, flags=re.IGNORECASE)
    return re.compile("[A-Za-z0-9]+".join(re.escape(p) for p in parts))


def _declared(kind: str, name: ast.expr) -> bool | None:
    """Whether ``kind`` declares what ``name`` prints; None for a name held in a variable."""
    emitted = emitted_metrics(kind) or frozenset()
    if isinstance(name, ast.Constant) and isinstance(name.value, str):
        return canonical_name(kind, name.value) in emitted
    if isinstance(name, ast.JoinedStr):
        family = _family(kind, name)
        return any(family.fullmatch(e) for e in emitted)
    return None


RUNNER_KINDS = sorted(k for k in BUILT_IN if _module(k.replace("-", "_")).is_file())
MODULES = sorted({m for k in RUNNER_KINDS for m in _reached(k)})


def _kinds_reaching(module: str) -> list[str]:
    return [k for k in RUNNER_KINDS if module in _reached(k)]


def test_every_built_in_kind_with_a_program_is_read() -> None:
    assert "clockprobe" in RUNNER_KINDS and len(RUNNER_KINDS) == len(BUILT_IN)
    assert "nvml_sampler" in _reached("clockprobe") and "devices" in _reached("gemm-sweep")


@pytest.mark.parametrize("module", MODULES)
def test_every_name_a_runner_prints_is_declared_for_a_kind_that_runs_it(module: str) -> None:
    undeclared = []
    for name in _printed(module):
        verdicts = [_declared(k, name) for k in _kinds_reaching(module)]
        if None not in verdicts and not any(verdicts):
            undeclared.append(ast.unparse(name))
    assert undeclared == [], f"{module} prints names no kind declares: {undeclared}"


def test_a_family_name_is_read_the_way_the_parser_converts_it() -> None:
    (samples,) = [n for n in _printed("clockprobe") if isinstance(n, ast.JoinedStr)]
    family = _family("clockprobe", samples)
    assert family.fullmatch("swPowerCapSamples") and not family.fullmatch("swPowerCap")
    (aer,) = [n for n in _printed("host_health") if isinstance(n, ast.JoinedStr)]
    assert _family("host-health", aer).fullmatch("pcieAerFatal")


def test_an_undeclared_literal_is_found() -> None:
    # The P-state clockprobe names in its Fail message is no metric of clockprobe's.
    assert _declared("clockprobe", ast.Constant("pstate")) is False
    assert _declared("clockprobe", ast.Constant("sm_clock_mhz")) is True  # by its alias
