"""Issue 17 end to end on a 16-node stand-in cluster (the Trainer stand-in over the simulated
``hgx-16`` fleet, the operator's whole registry under kopf): ``nccl-all-reduce`` at testScale
diagnose and ``dcgm-level1``, with one degraded backend NIC planted in the fleet and one Node
that turns GPUHealthy=False while its DCGM job runs. Each is named with its reason — the
isolation's WorkloadFailed for the NIC, HardwareFailureDetected for the condition — no healthy
node is accused, and each category's node-result ConfigMaps list exactly its failed and
succeeded nodes."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from tests.operator.certify.cluster_harness import (
    CERTS,
    NIC_NODE,
    SICK_NODE,
    assert_golden_report,
    certification_text,
    condition_catalog,
    dcgm_job_of,
    eventually,
    fleet,
    fleet_cluster,
    get,
    node_results,
    operator_in_thread,
    report,
    terminal,
    turn_unhealthy,
)

WORKFLOWS = "/apis/certify.glimmer.ai/v1alpha1/namespaces/default/workflows"
ALL = [f"hgx-su000-node-{i:04d}" for i in range(16)]
# A DCGM job's pods print for this long: the Node turns unhealthy while its job runs (the
# Job is seen as it is created; its pods start after), with time to spare on a busy machine.
DCGM_SECONDS = 0.3


def test_a_degraded_nic_and_a_node_turned_unhealthy_are_named_and_no_healthy_node_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = time.monotonic()
    with (
        condition_catalog(),
        fleet_cluster(tmp_path, fleet(seconds=DCGM_SECONDS)) as cluster,
        operator_in_thread(cluster, monkeypatch),
        httpx.Client(base_url=cluster.url, timeout=30) as http,
    ):
        made = http.post(CERTS, content=certification_text())
        assert made.status_code == 201, made.text
        job = eventually(lambda: dcgm_job_of(http, SICK_NODE), f"the DCGM Job of {SICK_NODE}")
        turn_unhealthy(http, SICK_NODE)
        assert not (job.get("status") or {}).get("outcome"), "the DCGM Job ended before the Node"
        body = eventually(lambda: terminal(http), "the certification finished")
        doc = report(http)
        statuses = body["status"]["categoryStatuses"]
        results = [node_results(http, s) for s in statuses]
        failed_messages = [
            next(c["message"] for c in w["status"]["conditions"] if c["type"] == "Failed")
            for w in (get(http, WORKFLOWS) or {})["items"]
        ]
    print(f"16-node certification: {time.monotonic() - started:.1f} s")
    assert doc["result"] == "FAILED"
    assert_golden_report(doc, "unkilled")
    nccl, dcgm = doc["categories"]
    assert [(f["name"], f["reason"]) for f in nccl["failedNodeReasons"]] == [
        (NIC_NODE, "WorkloadFailed")
    ]
    assert "busbw" in nccl["failedNodeReasons"][0]["message"]
    assert [(f["name"], f["reason"]) for f in dcgm["failedNodeReasons"]] == [
        (SICK_NODE, "HardwareFailureDetected")
    ]
    assert sorted(doc["failedNodes"]) == sorted([NIC_NODE, SICK_NODE])
    # Each Workflow's Failed message says what failed (§3.2, §7.4 step 7), never "0 groups".
    assert sorted(failed_messages) == sorted(
        [
            "Diagnosis complete: 1 faulty nodes confirmed",
            "1 groups failed across 1 iterations; hardware failures occurred on one or more "
            "nodes: 1 of 16 nodes failed DCGM level 1",
        ]
    ), failed_messages
    (nccl_failed, nccl_ok), (dcgm_failed, dcgm_ok) = results
    assert nccl_failed == [(NIC_NODE, "WorkloadFailed")]
    assert nccl_ok == [n for n in ALL if n != NIC_NODE]
    assert dcgm_failed == [(SICK_NODE, "HardwareFailureDetected")]
    assert dcgm_ok == [n for n in ALL if n != SICK_NODE]
