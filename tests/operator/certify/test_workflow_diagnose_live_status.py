"""§2.3/§7.4 on the 16-node stand-in cluster: while a diagnose Workflow isolates the planted
degraded NIC, its status says where the isolation is — the stage (in §7.4 order, never going
back), the completed rounds, the current stage's groups, currentIteration bumped per stage — and
it ends at ``complete`` with the isolation's own figures."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from glimmer.certify.isolate_types import Stage
from glimmer.certify.report_names import result_name
from glimmer.operator.certify.workflow_diagnose import stage_of
from tests.operator.certify.cluster_harness import (
    CERTS,
    CONFIGMAPS,
    JOBS,
    NIC_NODE,
    NS,
    certification_text,
    fleet,
    fleet_cluster,
    get,
    operator_in_thread,
    terminal,
)

WORKFLOWS = f"/apis/certify.glimmer.ai/v1alpha1/namespaces/{NS}/workflows"
DIAGNOSE = {
    "domain": "communication",
    "variant": "nccl-all-reduce",
    "options": {"testScale": "diagnose"},
}
ALL = [f"hgx-su000-node-{i:04d}" for i in range(16)]
ORDER = [*(str(s) for s in Stage), "complete"]


def _sample(http: httpx.Client, seen: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The Workflow's orchestration status, kept when it differs from the last one seen."""
    items = (get(http, WORKFLOWS) or {}).get("items") or [{}]
    orch = (items[0].get("status") or {}).get("orchestration") or {}
    if orch.get("diagnose") and (not seen or seen[-1] != orch):
        seen.append(orch)
    return terminal(http)


def test_a_running_diagnosis_shows_its_stages_in_order_and_ends_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[str, Any]] = []
    with (
        fleet_cluster(tmp_path, fleet()) as cluster,
        operator_in_thread(cluster, monkeypatch),
        httpx.Client(base_url=cluster.url, timeout=30) as http,
    ):
        made = http.post(CERTS, content=certification_text(categories=[DIAGNOSE]))
        assert made.status_code == 201, made.text
        # Sampled as fast as the API answers; the deadline only bounds a broken run.
        deadline = time.monotonic() + 300
        while not _sample(http, seen):
            assert time.monotonic() < deadline, "the certification never finished"
        (workflow,) = (get(http, WORKFLOWS) or {})["items"]
        final = workflow["status"]
        result = get(http, f"{CONFIGMAPS}/{result_name(workflow['metadata']['name'])}")
        jobs = (get(http, JOBS) or {})["items"]
    assert result is not None
    category = json.loads(result["data"]["category.json"])
    running = [o for o in seen if o["diagnose"]["stage"] != "complete"]
    assert seen[: len(running)] == running, "a sample after complete was still running"
    last = final["orchestration"]
    assert running, "no status was written while the diagnosis ran"
    stages = [o["diagnose"]["stage"] for o in running]
    # Never backwards: each sample's stage is at or after the one before, in §7.4 order.
    assert [ORDER.index(s) for s in stages] == sorted(ORDER.index(s) for s in stages), stages
    assert {"intra-screening", "bisection", "confirmation"} <= set(stages), stages
    for before, after in itertools.pairwise(running):
        assert after["diagnose"]["round"] >= before["diagnose"]["round"], (before, after)
        if after["diagnose"]["stage"] != before["diagnose"]["stage"]:
            assert after["currentIteration"] > before["currentIteration"], (before, after)
    for o in running:
        assert o["currentIteration"] == o["completedIterations"] + 1, o
        # groups: the current stage's, and only its.
        assert o["groups"], o
        assert {str(stage_of(g["name"])) for g in o["groups"]} == {o["diagnose"]["stage"]}, o
        assert o["diagnose"]["round"] < category["isolation"]["rounds"], o
    # The end: complete, the isolation's own figures, every stage run counted as done.
    diagnose = last["diagnose"]
    assert diagnose["stage"] == "complete"
    assert diagnose["round"] == category["isolation"]["rounds"] == 5
    assert diagnose["confirmedFaultyNodes"] == [NIC_NODE]
    assert diagnose["healthyNodes"] == [n for n in ALL if n != NIC_NODE]
    assert last["currentIteration"] == last["completedIterations"] == len(set(stages))
    assert {str(stage_of(g["name"])) for g in last["groups"]} == {"confirmation"}
    assert len(jobs) == category["isolation"]["jobs"] == 9  # one Job per probe, none twice
