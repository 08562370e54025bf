"""Server-side Table output, what kubectl get prints its columns from."""

from __future__ import annotations

import httpx

from tests.tools.k8s_standin.conftest import MERGE, NODES, RUNS, node_body, run_body
from tools.k8s_standin.tables import jsonpath

TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}


def test_a_burninrun_table_has_the_crd_printer_columns(http: httpx.Client) -> None:
    http.post(RUNS, json=run_body())
    http.patch(
        f"{RUNS}/smoke/status",
        json={"status": {"phase": "Running", "passed": 2, "failed": 0}},
        headers=MERGE,
    )
    table = http.get(RUNS, headers=TABLE).json()
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Profile",
        "Phase",
        "Baseline",
        "Passed",
        "Failed",
        "Age",
    ]
    cells = table["rows"][0]["cells"]
    assert cells[:6] == ["smoke", "host", "Running", False, 2, 0]  # baseline: its default
    assert cells[6].endswith("s")
    assert table["rows"][0]["object"]["metadata"]["name"] == "smoke"


def test_a_single_object_can_be_asked_for_as_a_table(http: httpx.Client) -> None:
    http.post(NODES, json=node_body("n1"))
    http.patch(f"{NODES}/n1", json={"spec": {"unschedulable": True}}, headers=MERGE)
    table = http.get(f"{NODES}/n1", headers=TABLE).json()
    assert table["rows"][0]["cells"][:2] == ["n1", "NotReady,SchedulingDisabled"]


def test_the_jsonpath_subset_reaches_lists_and_filters() -> None:
    obj = {
        "spec": {"tests": [{"testRef": "a"}, {"testRef": "b"}]},
        "status": {
            "conditions": [
                {"type": "Ready", "status": "False"},
                {"type": "Succeeded", "status": "True"},
            ]
        },
    }
    assert jsonpath(obj, ".spec.tests[*].testRef") == ["a", "b"]
    assert jsonpath(obj, ".spec.tests[1].testRef") == ["b"]
    assert jsonpath(obj, '.status.conditions[?(@.type=="Succeeded")].status') == ["True"]
    assert jsonpath(obj, ".status.missing") == []
