"""``glimmer certify run --backend kubernetes`` (the operator and the Trainer stand-in over the
simulated ``hgx-16`` fleet) and ``glimmer certify run --backend sim --seed 0`` (the same fleet
file and faults) write the same report: one core, two substrates, the same figures.

The Trainer stand-in runs a TrainJob's job under the core's job name (the TrainJob's
``certify.glimmer.ai/group`` label, from its Job) with the certification's seed (0 on a
cluster), as the simulator's substrate names and seeds it, so every measured bandwidth, every
message and the NCCL category's runtime are equal, unmasked. What still differs, and why:

* the DCGM category's ``runtime``/``runtimeSeconds`` and its iteration's ``duration``: the
  cluster reads the pods' own elapsed time (the stand-in's seconds per job), the simulator
  the diagnostic's modelled duration;
* ``fleet`` (the cluster's namespace against the fleet's name), ``platform`` (detected
  ``onprem`` against ``simulator``) and ``faults`` (planted on the simulator only): where it
  ran.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.operator.certify.cluster_harness import (
    CATEGORIES,
    FLEET,
    NIC_FAULT,
    NIC_NODE,
    certification_text,
    failed_of,
    fleet,
    fleet_cluster,
    operator_in_thread,
)

GLIMMER = str(Path(sys.executable).parent / "glimmer")
GPU_NODE = "hgx-su000-node-0012"
GPU_FAULT = f"gpu_fallen_off_bus@gpu:{GPU_NODE}/1"
FAULTS = (NIC_FAULT, GPU_FAULT)
DIFFERENT = frozenset({"fleet", "platform", "faults"})
PODS_TIMED = "dcgm-level1"  # the category whose runtime is the pods' on a cluster
TIMING = frozenset({"runtime", "runtimeSeconds", "duration"})


def _untimed(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _untimed(v) for k, v in doc.items() if k not in TIMING}
    if isinstance(doc, list):
        return [_untimed(v) for v in doc]
    return doc


def _comparable(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` without the :data:`DIFFERENT` fields, and the :data:`PODS_TIMED` category
    without its timing."""
    out = {k: v for k, v in doc.items() if k not in DIFFERENT}
    out["categories"] = [
        _untimed(c) if c.get("variant") == PODS_TIMED else c for c in doc["categories"]
    ]
    return out


def _doc(done: subprocess.CompletedProcess[str], backend: str) -> dict[str, Any]:
    assert done.returncode == 1, (backend, done.returncode, done.stderr[-2000:])  # not certified
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def _both(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    categories: list[dict[str, Any]],
    target: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The reports of ``categories`` over ``target`` on the cluster and on the simulator, run
    side by side."""
    spec = tmp_path / "certification.json"
    spec.write_text(certification_text(categories=categories, target=target))
    started = time.monotonic()
    flags = [flag for f in FAULTS for flag in ("--fault", f)]
    sim = subprocess.Popen(
        [GLIMMER, "certify", "run", "-f", str(spec), "--fleet", str(FLEET), *flags,
         "--seed", "0", "-o", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    with (
        fleet_cluster(tmp_path / "cluster", fleet(FAULTS)) as cluster,
        operator_in_thread(cluster, monkeypatch),
    ):
        on_cluster = subprocess.run(
            [GLIMMER, "certify", "run", "-f", str(spec), "--backend", "kubernetes",
             "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--timeout", "4m"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    out, err = sim.communicate(timeout=240)
    on_sim = subprocess.CompletedProcess(sim.args, sim.returncode, out, err)
    print(f"both backends: {time.monotonic() - started:.1f} s")
    return _doc(on_cluster, "kubernetes")["result"], _doc(on_sim, "sim")


def test_both_backends_name_the_same_nodes_with_the_same_reasons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster_doc, sim_doc = _both(tmp_path, monkeypatch, CATEGORIES)
    expected = [
        ("nccl-all-reduce", NIC_NODE, "WorkloadFailed"),
        ("dcgm-level1", GPU_NODE, "WorkloadFailed"),
    ]
    assert [f[:3] for f in failed_of(cluster_doc)] == expected
    assert failed_of(cluster_doc) == failed_of(sim_doc)  # figures in the messages too
    assert "slot 1" in failed_of(cluster_doc)[1][3]
    assert cluster_doc["failedNodes"] == sim_doc["failedNodes"] == sorted([NIC_NODE, GPU_NODE])
    assert cluster_doc["result"] == sim_doc["result"] == "FAILED"
    assert cluster_doc["totalNodes"] == sim_doc["totalNodes"] == 16
    for on_k8s, simulated in zip(cluster_doc["categories"], sim_doc["categories"], strict=True):
        assert on_k8s["jobs"] == simulated["jobs"], on_k8s["variant"]
        assert on_k8s["isolation"] == simulated["isolation"], on_k8s["variant"]
    assert cluster_doc["platform"] == "onprem" and sim_doc["platform"] == "simulator"
    nccl = cluster_doc["categories"][0]
    assert nccl["runtimeSeconds"] == sim_doc["categories"][0]["runtimeSeconds"]
    assert _comparable(cluster_doc) == _comparable(sim_doc)


def test_both_backends_run_every_iteration_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """repeatCount 2 of the DCGM category over four nodes, one of them with the GPU fallen off
    the bus: the same two iterations, jobs and named node on both."""
    categories = [
        {"domain": "diagnostics", "variant": "dcgm-level1", "options": {"repeatCount": 2}}
    ]
    nodes = [GPU_NODE, *(f"hgx-su000-node-{i:04d}" for i in (1, 2, 3))]
    cluster_doc, sim_doc = _both(tmp_path, monkeypatch, categories, {"nodeNames": nodes})
    for doc in (cluster_doc, sim_doc):
        (cat,) = doc["categories"]
        assert [(i["number"], i["status"]) for i in cat["iterations"]] == [
            (1, "Failed"), (2, "Failed"),
        ]  # fmt: skip
        assert cat["jobs"] == 4 and doc["totalNodes"] == 4
    assert [f[:3] for f in failed_of(cluster_doc)] == [("dcgm-level1", GPU_NODE, "WorkloadFailed")]
    assert failed_of(cluster_doc) == failed_of(sim_doc)
    assert _comparable(cluster_doc) == _comparable(sim_doc)
