"""Every figure of a training category in the report (card and JSON) is the one its verdict
read: each group its own, the gate that decided it with that gate's floor."""

from __future__ import annotations

import json

from glimmer.backends.sim.certify import certify
from glimmer.certify.report_card import render
from glimmer.certify.result import CertResult, from_doc, to_doc
from glimmer.certify.spec import from_text
from glimmer.fleet.load import load_topology
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim

TOPO = load_topology("ai-factory")


def _cert(product: str, options: str) -> str:
    return f"""\
apiVersion: certify.glimmer.ai/v1alpha1
kind: Certification
metadata: {{name: t, namespace: default}}
spec:
  target:
    nodeSelector: {{nvidia.com/gpu.product: {product}}}
  categories:
    - {{domain: training, variant: nemotron5-8b, options: {options}}}
"""


def _one_slow_hgx_node() -> CertResult:
    twin = FleetSim(TOPO, [Fault("gpu_low_pstate", "gpu:hgx-node-0001/3")])
    return certify(twin, from_text(_cert("NVIDIA-H100-80GB-HBM3", "{nodesPerJob: 1}")))


def test_each_training_group_reports_its_own_throughput_not_the_last_groups() -> None:
    doc = to_doc(_one_slow_hgx_node())
    (train,) = doc["categories"]
    tflops = {d["name"]: d["tflops"] for d in train["domains"]}
    assert tflops == {"group-0": 79.4, "group-1": 397.0}
    assert [g["figures"]["tflops"] for g in train["groups"]] == [79.4, 397.0]


def test_the_card_shows_the_failed_gates_figure_and_floor_on_the_failed_groups_line() -> None:
    card = render(_one_slow_hgx_node())
    (failed,) = [line for line in card.splitlines() if "FAIL  group-0" in line]
    assert "79.40 TFLOP/s (floor 247.20)" in failed and "(floor 0.90)" not in failed
    (passed,) = [line for line in card.splitlines() if "PASS  group-1" in line]
    assert "1.00 (floor 0.90)" in passed


def test_the_categorys_average_throughput_is_the_mean_of_its_jobs() -> None:
    (train,) = _one_slow_hgx_node().categories
    assert train.training["tflops"] == round((79.4 + 397.0) / 2, 1)
    assert "Avg TFLOPs/GPU: 238.2" in render(_one_slow_hgx_node())


def test_a_failed_own_throughput_threshold_shows_no_goodput_floor() -> None:
    r = certify(
        FleetSim(TOPO),
        from_text(_cert("NVIDIA-GB200", "{thresholds: {avgTFLOPsPerGPU: 'value >= 950'}}")),
    )
    (group,) = r.categories[0].groups
    assert (group.metric, group.measured, group.floor) == ("avgTFLOPsPerGPU", 911.0, None)
    (line,) = [line for line in render(r).splitlines() if "FAIL  group-0" in line]
    assert "911.00 TFLOP/s" in line and "floor" not in line


def test_a_saved_result_keeps_each_groups_figures() -> None:
    r = _one_slow_hgx_node()
    back = from_doc(json.loads(json.dumps(to_doc(r))))
    assert [g.figures for g in back.categories[0].groups] == [
        g.figures for g in r.categories[0].groups
    ]
    assert render(back) == render(r)
