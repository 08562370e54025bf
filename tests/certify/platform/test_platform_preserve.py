"""PreserveSchedulingFields: preserve, never repair."""

from __future__ import annotations

import json
from typing import Any

from trainer_shapes import jobs, pod, torch_runtime

from glimmer.certify.platform import (
    apply_gang_scheduler_to_dependencies,
    preserve_scheduling_fields,
)

Obj = dict[str, Any]
GS = {"schedulerName": "kai-scheduler", "queue": "train-runtime"}  # a queue named like the runtime


def _original() -> Obj:
    (rt,) = apply_gang_scheduler_to_dependencies([torch_runtime()], GS)
    return rt


def _bytes(obj: Obj) -> bytes:
    return json.dumps(obj).encode()


def _renamed(obj: Obj) -> Obj:
    # Per-job renaming rewrites every quoted occurrence of the dependency name.
    text = json.dumps(obj).replace('"train-runtime"', '"train-runtime-ab12c-job"')
    renamed: Obj = json.loads(text)
    return renamed


def test_preserve_copies_the_queue_label_back_after_renaming_hit_it() -> None:
    original = _original()
    out = json.loads(preserve_scheduling_fields(_bytes(original), _bytes(_renamed(original)), GS))
    node = jobs(out)[0]
    assert node["template"]["metadata"]["labels"]["kai.scheduler/queue"] == "train-runtime"
    pod_labels = node["template"]["spec"]["template"]["metadata"]["labels"]
    assert pod_labels["kai.scheduler/queue"] == "train-runtime"
    assert out["metadata"]["name"] == "train-runtime-ab12c-job"


def test_preserve_restores_a_scheduler_name_the_renaming_hit() -> None:
    gs = {"schedulerName": "train-runtime"}
    (original,) = apply_gang_scheduler_to_dependencies([torch_runtime()], gs)
    out = json.loads(preserve_scheduling_fields(_bytes(original), _bytes(_renamed(original)), gs))
    assert pod(jobs(out)[0])["schedulerName"] == "train-runtime"


def test_preserve_inserts_nothing_a_field_absent_from_original_stays_absent() -> None:
    original = torch_runtime()  # no queue label, no scheduler
    renamed = _bytes(_renamed(original))
    assert preserve_scheduling_fields(_bytes(original), renamed, GS) == renamed


def test_preserve_carries_an_overridden_value_through_unchanged() -> None:
    original = _original()
    jobs(original)[0]["template"]["metadata"]["labels"]["kai.scheduler/queue"] = "other"
    renamed = _renamed(original)
    out = json.loads(preserve_scheduling_fields(_bytes(original), _bytes(renamed), GS))
    assert jobs(out)[0]["template"]["metadata"]["labels"]["kai.scheduler/queue"] == "other"


def test_preserve_is_a_no_op_when_gs_configures_nothing() -> None:
    original = _original()
    renamed = _bytes(_renamed(original))
    assert preserve_scheduling_fields(_bytes(original), renamed, None) is renamed
    assert preserve_scheduling_fields(_bytes(original), renamed, {"schedulerName": ""}) is renamed


def test_preserve_returns_the_same_bytes_when_nothing_changed() -> None:
    text = _bytes(_original())
    assert preserve_scheduling_fields(text, text, GS) is text


def test_preserve_skips_other_kinds_and_mismatched_job_counts() -> None:
    cm = _bytes({"kind": "ConfigMap", "data": {"q": "train-runtime"}})
    assert preserve_scheduling_fields(cm, cm, GS) is cm
    original = _original()
    fewer = _renamed(original)
    fewer["spec"]["template"]["spec"]["replicatedJobs"] = []
    assert preserve_scheduling_fields(_bytes(original), _bytes(fewer), GS) == _bytes(fewer)
