"""The certification core is substrate-neutral: no module under glimmer.certify imports the
simulator or a backend, and a certification runs on any substrate that answers the protocol."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

import glimmer.certify
from glimmer.certify.grouping import PRODUCT_LABEL, RACK_LABEL, NodeInfo
from glimmer.certify.jobs import DcgmJob, Job, JobLog
from glimmer.certify.run import certify
from glimmer.certify.spec import CertSpec, from_text
from glimmer.certify.substrate import Fabric, Substrate
from glimmer.errors import InputError

CERTIFY = Path(glimmer.certify.__file__).parent
FORBIDDEN = ("glimmer.sim", "glimmer.backends")


def _imports(path: Path) -> list[str]:
    """Every module an import statement in ``path`` names, at any depth (functions, TYPE_CHECKING
    blocks), as absolute names."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                package = path.relative_to(CERTIFY.parent.parent).parent.parts
                base = ".".join(package[: len(package) - node.level + 1])
                names.append(f"{base}.{node.module}" if node.module else base)
            else:
                names.append(node.module or "")
    return names


def test_no_certify_module_imports_the_simulator_or_a_backend() -> None:
    modules = sorted(CERTIFY.rglob("*.py"))
    seen = {p: _imports(p) for p in modules}
    # The walk reads the real package (not an empty folder) and sees its imports.
    assert len(modules) > 30 and any("glimmer.certify.grouping" in n for n in seen.values())
    bad = [
        f"{p.relative_to(CERTIFY)}: {name}"
        for p, names in seen.items()
        for name in names
        if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)
    ]
    assert bad == []


def test_the_import_check_catches_a_forbidden_import(tmp_path: Path) -> None:
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text(
        "def f():\n    from glimmer.sim.twin import FleetSim\n    import glimmer.backends\n"
    )
    assert _imports(sneaky) == ["glimmer.sim.twin", "glimmer.backends"]


H100 = "NVIDIA-H100-80GB-HBM3"


@dataclass
class Canned:
    """A substrate that is no simulator: two labelled nodes, and DCGM logs it was handed."""

    logs: dict[str, JobLog]
    ran: list[Job] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "lab"

    @property
    def platform(self) -> str:
        return "canned"

    @property
    def taint_note(self) -> str:
        return "lab nodes carry no taints at all"

    def nodes(self) -> list[NodeInfo]:
        return [NodeInfo(n, {PRODUCT_LABEL: H100, RACK_LABEL: "r1"}) for n in ("lab-a", "lab-b")]

    def fabric(self, nodes: tuple[str, ...]) -> Fabric | None:
        return None

    def run(self, job: Job) -> JobLog:
        self.ran.append(job)
        assert isinstance(job, DcgmJob)
        return self.logs[job.node]


def _spec(target: dict[str, object] | None = None) -> CertSpec:
    return from_text(
        yaml.safe_dump(
            {
                "apiVersion": "certify.glimmer.ai/v1alpha1",
                "kind": "Certification",
                "metadata": {"name": "lab-cert"},
                "spec": {
                    "target": target or {},
                    "categories": [{"domain": "diagnostics", "variant": "dcgm-level2"}],
                },
            }
        )
    )


def test_a_certification_runs_on_a_substrate_that_is_not_the_simulator() -> None:
    lab = Canned(
        {
            "lab-a": JobLog("DCGM diag level 2\nPASS\n", 0, elapsed_s=300.0),
            "lab-b": JobLog("DCGM diag level 2\nFAIL: 1 subtest(s) failed: memory\n", 1),
        }
    )
    substrate: Substrate = lab
    r = certify(substrate, _spec(), seed=5)
    assert lab.ran == [DcgmJob("lab-a", 2, 5), DcgmJob("lab-b", 2, 5)]
    assert (r.platform, r.fleet, r.gpu, r.seed, r.faults) == ("canned", "lab", "h100", 5, ())
    assert r.failed_nodes == ["lab-b"] and r.result == "FAILED"
    (cat,) = r.categories
    assert cat.runtime_s == 300.0
    assert cat.failed_nodes[0].message == "dcgmi diag --run 2: 1 subtest(s) failed: memory"


def test_an_empty_taint_selection_names_what_the_substrate_says_of_its_taints() -> None:
    spec = _spec({"taintSelectors": [{"key": "example.com/dedicated"}]})
    with pytest.raises(InputError) as e:
        certify(Canned({}), spec)
    assert "fleet 'lab'" in e.value.message
    assert e.value.message.endswith("; lab nodes carry no taints at all")
