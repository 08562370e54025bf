"""Server-side Table output, what kubectl get prints its columns from."""

from __future__ import annotations

from pathlib import Path

import httpx
import yaml

from tests.tools.k8s_standin.conftest import MERGE, NODES, RUNS, node_body, run_body
from tools.k8s_standin.tables import jsonpath, supported

REPO = Path(__file__).resolve().parents[3]
CRD_DIRS = (REPO / "deploy" / "crds", REPO / "deploy" / "crds-certify")
TRAINER = REPO.parent / "shared" / "schemas" / "kubeflow-trainer"

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


def test_negative_indexes_and_slices_read_from_the_end() -> None:
    obj = {"status": {"conditions": [{"type": "Created"}, {"type": "Running"}, {"type": "Done"}]}}
    assert jsonpath(obj, ".status.conditions[-1:].type") == ["Done"]
    assert jsonpath(obj, ".status.conditions[-1].type") == ["Done"]
    assert jsonpath(obj, ".status.conditions[0:2].type") == ["Created", "Running"]
    assert jsonpath(obj, ".status.conditions[1:].type") == ["Running", "Done"]
    assert jsonpath(obj, ".status.conditions[-4].type") == []
    assert jsonpath({"status": {"conditions": []}}, ".status.conditions[-1:].type") == []


def test_every_printer_column_of_our_crds_and_trainers_is_in_the_subset() -> None:
    found = 0
    for path in [*CRD_DIRS[0].glob("*.yaml"), *CRD_DIRS[1].glob("*.yaml"), *TRAINER.glob("*.y*ml")]:
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            for version in doc["spec"]["versions"]:
                for column in version.get("additionalPrinterColumns") or ():
                    found += 1
                    assert supported(column["jsonPath"]), (path.name, column["jsonPath"])
    assert found > 40
    assert not supported(".status.conditions[?(@.type=~/x/)]")  # a form the subset refuses
