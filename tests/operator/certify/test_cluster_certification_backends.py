"""``glimmer certify run --backend kubernetes`` (the operator and the Trainer stand-in over the
simulated ``hgx-16`` fleet) and ``glimmer certify run --backend sim`` (the same fleet file and
faults) name the same nodes with the same reasons and messages: one core, two substrates.

The documents are equal but for what :data:`DIFFERENT` lists. What a job measured: the
simulator's noise is seeded per job by its name, and a job on the cluster is named by its Job
object (``<workflow>-<group>-iter-<n>``), not by the core's group (``screen-0``), so a measured
bandwidth in a message and the NCCL runtime differ by that noise (messages are compared with
their decimal figures masked). The DCGM runtime: the cluster reads the pods' own elapsed time
(the stand-in's seconds per job), the simulator the diagnostic's modelled duration. And where
it ran: ``fleet`` (the cluster's namespace against the fleet's name), ``platform`` (detected
``onprem`` against ``simulator``), ``faults`` (planted on the simulator only)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.operator.certify.cluster_harness import (
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
FIGURE = re.compile(r"\d+\.\d+")
DIFFERENT = frozenset({"runtime", "runtimeSeconds", "duration", "fleet", "platform", "faults"})


def _masked(failed: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    return [(cat, name, reason, FIGURE.sub("#", message)) for cat, name, reason, message in failed]


def _comparable(doc: Any) -> Any:
    """``doc`` without the :data:`DIFFERENT` fields, its decimal figures masked."""
    if isinstance(doc, dict):
        return {k: _comparable(v) for k, v in doc.items() if k not in DIFFERENT}
    if isinstance(doc, list):
        return [_comparable(v) for v in doc]
    return FIGURE.sub("#", doc) if isinstance(doc, str) else doc


def _doc(done: subprocess.CompletedProcess[str], backend: str) -> dict[str, Any]:
    assert done.returncode == 1, (backend, done.returncode, done.stderr[-2000:])  # not certified
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def test_both_backends_name_the_same_nodes_with_the_same_reasons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "certification.json"
    spec.write_text(certification_text())
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
    cluster_doc = _doc(on_cluster, "kubernetes")["result"]
    sim_doc = _doc(on_sim, "sim")
    expected = [
        ("nccl-all-reduce", NIC_NODE, "WorkloadFailed"),
        ("dcgm-level1", GPU_NODE, "WorkloadFailed"),
    ]
    assert [f[:3] for f in failed_of(cluster_doc)] == expected
    assert _masked(failed_of(cluster_doc)) == _masked(failed_of(sim_doc))
    assert "slot 1" in failed_of(cluster_doc)[1][3]
    assert cluster_doc["failedNodes"] == sim_doc["failedNodes"] == sorted([NIC_NODE, GPU_NODE])
    assert cluster_doc["result"] == sim_doc["result"] == "FAILED"
    assert cluster_doc["totalNodes"] == sim_doc["totalNodes"] == 16
    for on_k8s, simulated in zip(cluster_doc["categories"], sim_doc["categories"], strict=True):
        assert on_k8s["jobs"] == simulated["jobs"], on_k8s["variant"]
        assert on_k8s["isolation"] == simulated["isolation"], on_k8s["variant"]
    assert cluster_doc["platform"] == "onprem" and sim_doc["platform"] == "simulator"
    assert _comparable(cluster_doc) == _comparable(sim_doc)
