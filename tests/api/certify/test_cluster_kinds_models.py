"""The kinds the certification controllers write (Workflow, Job, GoodputMeasurement,
BandwidthMeasurement) load through the one loader, round-trip, hold what the catalog resolves,
and refuse a bad field by name."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

import glimmer.api.certify.kinds  # noqa: F401  (registers the kinds)
from glimmer.api.certify.job import OUTCOME_TEXT_LIMIT, Job, JobOutcome
from glimmer.api.certify.measurement import (
    BandwidthMeasurement,
    BandwidthResult,
    GoodputMeasurement,
    float_of,
)
from glimmer.api.certify.options import CategoryOptions, TestScale
from glimmer.api.certify.workflow import Workflow, WorkflowSpec
from glimmer.api.dump import to_wire
from glimmer.api.load import load_text
from glimmer.certify.catalog.build import build_workflow_spec
from glimmer.certify.catalog.entries import list_entries
from glimmer.certify.catalog.render import Context, build_config
from glimmer.errors import InputErrors
from tests.api.certify import cluster_kind_samples as samples

MODELS = {
    "Workflow": Workflow,
    "Job": Job,
    "GoodputMeasurement": GoodputMeasurement,
    "BandwidthMeasurement": BandwidthMeasurement,
}


def _errors(obj: dict[str, Any]) -> list[str]:
    with pytest.raises(InputErrors) as e:
        load_text(json.dumps(obj), "in.json", as_json=True)
    return [str(x) for x in e.value.errors]


def _set(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    *parents, last = path.split(".")
    node = obj
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    node[last] = value
    return obj


def test_every_kind_loads_as_its_model_and_round_trips() -> None:
    for doc in samples.every_kind():
        (item,) = load_text(yaml.safe_dump(doc), "in.yaml")
        assert type(item.obj) is MODELS[doc["kind"]]
        again = type(item.obj).model_validate(to_wire(item.obj))
        assert to_wire(again) == to_wire(item.obj)


@pytest.mark.parametrize("entry", list_entries(), ids=lambda e: e.ref)
def test_what_the_catalog_resolves_for_every_entry_is_a_valid_workflow(entry: Any) -> None:
    options = [CategoryOptions()]
    if entry.domain == "communication":
        options.append(CategoryOptions(test_scale=TestScale.DIAGNOSE))
    if entry.domain == "training":
        options.append(CategoryOptions(enable_checkpoint=True))
    for option in options:
        for platform, arch in (("onprem", "h100"), ("aws", "gb200")):
            cfg = build_config(entry, Context(platform, arch), option, None)
            spec, _ = build_workflow_spec(entry, cfg)
            assert WorkflowSpec.model_validate(spec).job_template.spec.workload.train_job


@pytest.mark.parametrize(
    ("make", "path", "value", "field"),
    [
        (samples.workflow, "spec.orchestration.iterations", 0, "spec.orchestration.iterations"),
        (samples.workflow, "spec.gangScheduler.schedulerName", "", "spec.gangScheduler"),
        (samples.job, "spec.workload", {}, "spec.workload"),
        (
            samples.job,
            "spec.nodeHealthMonitor.cel.expression",
            "",
            "spec.nodeHealthMonitor.cel.expression",
        ),
        (samples.job, "spec.stallMultiplier", 0, "spec.stallMultiplier"),
        (samples.job, "spec.thresholds", {"busBandwidthGBps": "value >"}, "spec.thresholds"),
        (samples.goodput, "spec.sampleInterval", "soon", "spec.sampleInterval"),
        (samples.bandwidth, "spec.logProfileRef", "", "spec.logProfileRef"),
        (
            samples.bandwidth,
            "status.results",
            [{"sizeBytes": 8, "algBW": "fast", "busBW": "1.0"}],
            "status.results[0].algBW",
        ),
    ],
)
def test_a_bad_field_is_refused_by_name(make: Any, path: str, value: Any, field: str) -> None:
    doc = make()
    kind, name = doc["kind"], doc["metadata"]["name"]
    (err,) = _errors(_set(doc, path, value))
    assert f"{kind}/{name}, field {field}" in err, err


def test_a_failed_node_reason_is_one_of_the_three() -> None:
    doc = samples.job()
    doc["status"] = {"failedNodes": [{"name": "n1", "reason": "Flaky"}]}
    (err,) = _errors(doc)
    assert "field status.failedNodes[0].reason" in err


def test_a_job_outcome_keeps_the_core_job_log_and_at_most_256_kib_of_text() -> None:
    outcome = JobOutcome.model_validate(
        {"text": "x" * OUTCOME_TEXT_LIMIT, "exitCode": 1, "crashedOn": ["n1"], "path": "nvlink"}
    )
    assert to_wire(outcome)["crashedOn"] == ["n1"]
    doc = samples.job()
    doc["status"] = {"outcome": {"text": "x" * (OUTCOME_TEXT_LIMIT + 1), "exitCode": 0}}
    (err,) = _errors(doc)
    assert "field status.outcome.text" in err


def test_measurement_floats_are_stored_as_decimal_strings() -> None:
    result = BandwidthResult.model_validate({"sizeBytes": 8, "algBW": 12.5, "busBW": "23.4375"})
    assert to_wire(result) == {"sizeBytes": 8, "algBW": "12.5", "busBW": "23.4375"}
    assert float_of(result.bus_bw) == 23.4375 and float_of(None) is None
