"""A BurnInRun applied directly may name a target twice (``nodeNames`` is taken verbatim). The
run, its progress and every report then count the same units: one per distinct node for each
Node test (issue 11: the run settled 6 results while the NVVS files said the plan asked for 9)."""

from __future__ import annotations

import json

from glimmer.api.run import BurnInRun
from glimmer.backends.sim.driver import run_to_completion
from glimmer.backends.sim.fleet import fleet_backend
from glimmer.contract.vocab import Phase
from glimmer.engine.progress import progress_of
from glimmer.engine.reconciler import Engine
from glimmer.fleet.load import load_topology
from glimmer.plan.builtin import builtin_profile, builtin_tests
from glimmer.reports.assemble import assemble
from glimmer.reports.nvvs import render_nvvs
from glimmer.sim.twin import FleetSim

API = "burnin.glimmer.ai/v1alpha1"
TWICE = ["hgx-node-0001", "hgx-node-0001", "hgx-node-0002"]


def _smoke_run_naming_a_node_twice() -> BurnInRun:
    profile = builtin_profile("smoke")
    assert profile is not None
    backend = fleet_backend(
        FleetSim(load_topology("ai-factory")),
        seed=7,
        profiles={"smoke": profile},
        tests=builtin_tests(),
    )
    run = BurnInRun.model_validate(
        {
            "apiVersion": API,
            "kind": "BurnInRun",
            "metadata": {"name": "twice", "namespace": "default"},
            "spec": {"profileRef": "smoke", "target": {"nodeNames": TWICE}},
        }
    )
    return run_to_completion(backend, Engine(backend), run)


def test_a_node_named_twice_is_one_unit_for_the_run_its_progress_and_its_reports() -> None:
    run = _smoke_run_naming_a_node_twice()
    assert run.status is not None and run.status.phase is Phase.PASSED
    results = run.status.results or []
    assert len(results) == 6  # 3 Node tests x 2 distinct nodes
    progress = progress_of(run)
    assert (progress.total, progress.settled) == (6, 6)
    report = assemble(run)
    assert report.planned_units == 6
    documents = render_nvvs(report)
    assert sorted(documents) == ["diag-hgx-node-0001.json", "diag-hgx-node-0002.json"]
    for text in documents.values():
        doc = json.loads(text)
        assert doc["Overall Result"] == "Pass"
        assert "subset" not in doc.get("Warning", "")
