"""The controllers keep no state that matters (§1): an operator that dies after any one of its
writes and starts again (fresh controllers, the cluster as it was left) ends with the same
report as one that never died, and creates no Job twice. The "death" is the k-th write of the
Certification and Workflow controllers raising after it reached the API."""

from __future__ import annotations

import json
from typing import Any

import pytest

from glimmer.operator.certify.certification import CertificationController
from glimmer.operator.certify.workflow import WorkflowController
from glimmer.operator.certify.workflow_cluster import Cluster, Kind
from glimmer.operator.certify.workloadrun import WorkloadRunController
from tests.operator.certify.conftest import (
    CertClock,
    Controllers,
    add_nodes,
    certification,
    h100_nodes,
    run_certification,
)
from tools.k8s_standin.journal import read

CATEGORIES = [
    {"domain": "diagnostics", "variant": "dcgm-level1"},
    {"domain": "diagnostics", "variant": "dcgm-level2"},
]


class Died(Exception):
    """The operator process ended here."""


class DyingCluster(Cluster):
    """A Cluster whose ``at``-th write (create, replace, status, delete) dies after it is made."""

    def __init__(self, client: Any, at: int) -> None:
        super().__init__(client)
        self.at, self.writes = at, 0

    def _count(self) -> None:
        self.writes += 1
        if self.writes == self.at:
            raise Died(f"write {self.at}")

    def create(self, kind: Kind, body: Any, namespace: str | None) -> dict[str, Any]:
        out = super().create(kind, body, namespace)
        self._count()
        return out

    def replace(self, kind: Kind, body: Any) -> dict[str, Any]:
        out = super().replace(kind, body)
        self._count()
        return out

    def write_status(self, kind: Kind, body: Any) -> dict[str, Any]:
        out = super().write_status(kind, body)
        self._count()
        return out


def outcome(job: dict[str, Any]) -> dict[str, Any]:
    nodes = job["metadata"]["annotations"]["certify.glimmer.ai/group-nodes"]
    level2 = job["metadata"]["labels"]["certify.glimmer.ai/workflow"].endswith("level2")
    if nodes == "gpu-02" and level2:
        return {"exit_code": 1, "text": "FAIL: 1 subtest(s) failed: Memory"}
    return {}


def controllers_over(base: Controllers, cluster: Cluster, clock: CertClock) -> Controllers:
    return Controllers(
        base.api,
        clock,
        CertificationController(cluster, clock.now, poll=0.0),
        WorkflowController(cluster, clock.now, poll=0.0),
        WorkloadRunController(cluster, clock.now, poll=0.0),
    )


def _report(ctl: Controllers, name: str) -> dict[str, Any]:
    """The report, without the Certification's own name (the runs compared have two)."""
    found = ctl.api.configmap(f"{name}-report")
    assert found is not None
    doc: dict[str, Any] = json.loads(found["data"]["result.json"])
    doc.pop("name")
    return doc


@pytest.fixture
def reference(controllers: Controllers) -> tuple[dict[str, Any], int]:
    """The report of a run that never dies, and how many writes it made."""
    add_nodes(controllers.api, h100_nodes(3))
    counting = DyingCluster(controllers.api.client, at=0)
    ctl = controllers_over(controllers, counting, controllers.clock)
    controllers.api.create("certifications", certification("ref", CATEGORIES))
    run_certification(ctl, "ref", outcome)
    return _report(ctl, "ref"), counting.writes


@pytest.mark.parametrize("fraction", [0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95])
def test_a_death_after_any_write_changes_neither_the_report_nor_the_jobs(
    controllers: Controllers, reference: tuple[dict[str, Any], int], fraction: float
) -> None:
    expected, writes = reference
    at = max(1, round(writes * fraction))
    api = controllers.api
    start = len(read(api.root / "journal.jsonl"))
    api.create("certifications", certification("crash", CATEGORIES))
    dying = controllers_over(controllers, DyingCluster(api.client, at), controllers.clock)
    with pytest.raises(Died):
        run_certification(dying, "crash", outcome)
    again = controllers_over(controllers, Cluster(api.client), controllers.clock)
    run_certification(again, "crash", outcome)
    assert _report(again, "crash") == expected
    created = [
        e["path"]
        for e in read(api.root / "journal.jsonl")[start:]
        if e["method"] == "POST" and e["path"].endswith("/jobs") and e.get("status") == 201
    ]
    mine = [
        j
        for j in api.items("jobs")
        if j["metadata"]["labels"]["certify.glimmer.ai/workflow"].startswith("crash-")
    ]
    assert len(created) == len(mine) == 6  # 3 nodes x 2 categories, each created once
