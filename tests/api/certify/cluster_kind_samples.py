"""A valid object of each kind the controllers write (Workflow, Job, GoodputMeasurement,
BandwidthMeasurement), the Workflow and Job built from a real catalog entry the way a
Certification's controller resolves them."""

from __future__ import annotations

import copy
from typing import Any

from glimmer.api.certify.meta import API_VERSION
from glimmer.api.certify.options import CategoryOptions
from glimmer.certify.catalog.build import build_workflow_spec
from glimmer.certify.catalog.entries import get_entry
from glimmer.certify.catalog.render import Context, build_config

Obj = dict[str, Any]
GANG = {"schedulerName": "kai-scheduler", "queue": "default-queue"}


def _obj(kind: str, name: str, spec: Obj) -> Obj:
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": {"name": name}, "spec": spec}


def workflow_spec(domain: str = "communication", variant: str = "nccl-all-reduce") -> Obj:
    entry = get_entry(domain, variant)
    cfg = build_config(entry, Context("onprem", "h100"), CategoryOptions(nodes_per_job=2), None)
    spec, _ = build_workflow_spec(entry, cfg)
    return spec


def workflow(name: str = "c-communication-nccl-all", gang: bool = True) -> Obj:
    spec = workflow_spec()
    if gang:
        spec["gangScheduler"] = dict(GANG)
    return _obj("Workflow", name, spec)


def job(name: str = "c-communication-nccl-all-job") -> Obj:
    spec = copy.deepcopy(workflow_spec()["jobTemplate"]["spec"])
    return _obj("Job", name, spec)


def _job_ref(name: str) -> Obj:
    return {"apiGroup": API_VERSION.split("/")[0], "kind": "Job", "name": name}


def goodput(name: str = "j-goodput") -> Obj:
    spec = {"jobRef": _job_ref("j"), "logProfileRef": "megatron-training", "sampleInterval": "10s"}
    return _obj("GoodputMeasurement", name, spec)


def bandwidth(name: str = "j-bandwidth") -> Obj:
    spec = {"jobRef": _job_ref("j"), "logProfileRef": "nccl-bandwidth", "testType": "all_reduce"}
    return _obj("BandwidthMeasurement", name, spec)


def every_kind() -> list[Obj]:
    """One valid object of each of the four kinds."""
    return [workflow(), job(), goodput(), bandwidth()]
