"""CategoryOptions: the knobs of one certification category (specs/certify.md §2.2).

A Certification carries them twice: inlined at spec level as global defaults, and per category.
A per-category value that is set wins; maps, lists and structs replace wholesale, except
``workloadMetadata.labels``, which merge per key (:func:`merged_options`).
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, model_validator

from glimmer.api.base import Bool, Int32, Wire
from glimmer.api.certify.threshold import Thresholds
from glimmer.api.certify.types import WorkloadMetadata
from glimmer.api.k8s import EnvVar, Quantity

DURATION_PATTERN = r"^([0-9]+(h|m|s|ms))+$"
QUANTITY_PATTERN = r"^[0-9]+(\.[0-9]+)?([eE][0-9]+|[KMGTPE]i?|m|k)?$"
SOURCE_REPO_PATTERN = r"^(https|ssh)://[A-Za-z0-9._~:/@%+-]+$"
NIC_RESOURCE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)"
    r"/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)

_SUFFIX: dict[str, float] = {
    "m": 1e-3, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}  # fmt: skip
_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([eE][0-9]+|[A-Za-z]{0,2})$")


def quantity_value(q: Any) -> float | None:
    """A Kubernetes quantity as a number, or None when it cannot be read."""
    if isinstance(q, int | float) and not isinstance(q, bool):
        return float(q)
    m = _QUANTITY.match(str(q))
    if not m:
        return None
    number, suffix = float(m.group(1)), m.group(2)
    if suffix[:1] in ("e", "E"):
        return number * 10.0 ** int(suffix[1:])
    if not suffix:
        return number
    scale = _SUFFIX.get(suffix)
    return None if scale is None else number * scale


def _nic_resource(name: str) -> str:
    if not re.match(NIC_RESOURCE_PATTERN, name):
        raise ValueError(
            f"{name!r} is not an extended resource name: write <vendor domain>/<name>, "
            "e.g. nvidia.com/hostdev or rdma/ib"
        )
    domain = name.split("/", 1)[0]
    if domain in ("kubernetes.io", "k8s.io") or domain.endswith((".kubernetes.io", ".k8s.io")):
        raise ValueError(f"{name!r}: the kubernetes.io and k8s.io domains are reserved")
    return name


# An extended resource name (``nvidia.com/hostdev``): pods asking for a malformed one never
# schedule, so the Job would time out and read as a failure of the nodes.
NicResourceName = Annotated[
    str, AfterValidator(_nic_resource), Field(json_schema_extra={"pattern": NIC_RESOURCE_PATTERN})
]


class TestScale(StrEnum):
    """How widely a communication category spreads its jobs."""

    __test__ = False  # not a pytest class, despite the name

    INTRA_NODE = "intra-node"
    INTRA_RACK = "intra-rack"
    DIAGNOSE = "diagnose"
    FULL_SCALE = "full-scale"


class TrainingResources(Wire):
    """CPU and memory of the training container; a request may not exceed its limit."""

    limits: dict[str, Quantity] | None = None
    requests: dict[str, Quantity] | None = None

    @model_validator(mode="after")
    def _request_within_limit(self) -> TrainingResources:
        for name, want in (self.requests or {}).items():
            cap = (self.limits or {}).get(name)
            if cap is None:
                continue
            a, b = quantity_value(want), quantity_value(cap)
            if a is not None and b is not None and a > b:
                raise ValueError(f"requests.{name} ({want}) exceeds limits.{name} ({cap})")
        return self


class LocalObjectReference(Wire):
    """A named object in the same namespace (an image pull Secret)."""

    name: str = Field(min_length=1)


class CategoryOptions(Wire):
    """Per-category options; unset means the catalog's or the controller's default."""

    nodes_per_job: Int32 | None = Field(None, ge=1)
    enable_checkpoint: Bool | None = None
    max_steps: Int32 | None = Field(None, ge=-1)
    exit_duration_mins: Int32 | None = None
    startup_stall_timeout_seconds: Int32 | None = Field(None, ge=0)
    gpus_per_node: Int32 | None = Field(None, ge=0)
    mlnx_per_node: Int32 | None = Field(None, ge=0)
    nic_resource_name: NicResourceName | None = None
    resources: TrainingResources | None = None
    enable_mnnvl: Bool | None = Field(None, alias="enableMNNVL")
    image: str | None = Field(None, min_length=1, max_length=512)
    image_pull_secrets: list[LocalObjectReference] | None = None
    storage_class_name: str | None = None
    save_interval: Int32 | None = Field(None, ge=1)
    save_retain_interval: Int32 | None = Field(None, ge=1)
    save_top_k: Int32 | None = Field(None, alias="saveTopK")
    storage_size: str | None = Field(None, pattern=QUANTITY_PATTERN)
    max_restarts: Int32 | None = Field(None, ge=0)
    repeat_count: Int32 | None = Field(None, ge=1)
    test_scale: TestScale | None = None
    max_bytes: str | None = Field(None, pattern=r"^[0-9]+(K|M|G|T)?$")
    num_iterations: Int32 | None = Field(None, ge=1)
    num_cycles: Int32 | None = Field(None, ge=1)
    thresholds: Thresholds | None = None
    max_concurrent: Int32 | None = Field(None, ge=0)
    min_group_size: Int32 | None = Field(None, ge=1)
    timeout_per_job: str | None = Field(None, pattern=DURATION_PATTERN)
    measurement_timeout: str | None = Field(None, pattern=DURATION_PATTERN)
    source_repo: str | None = Field(None, max_length=2048, pattern=SOURCE_REPO_PATTERN)
    env: list[EnvVar] | None = None
    workload_metadata: WorkloadMetadata | None = None


OPTION_FIELDS: tuple[str, ...] = tuple(CategoryOptions.model_fields)


def merged_options(global_: BaseModel, category: CategoryOptions | None) -> CategoryOptions:
    """Global options overlaid by a category's: set values win and replace wholesale; workload
    labels merge per key (a category may change or add a label, never remove one)."""
    values = {name: getattr(global_, name) for name in OPTION_FIELDS}
    if category is not None:
        for name in category.model_fields_set & set(OPTION_FIELDS):
            value = getattr(category, name)
            if value is not None:
                values[name] = value
        outer = getattr(global_, "workload_metadata", None)
        inner = category.workload_metadata
        if outer is not None and inner is not None:
            labels = {**(outer.labels or {}), **(inner.labels or {})}
            values["workload_metadata"] = WorkloadMetadata(labels=labels or None)
    return CategoryOptions.model_validate({k: v for k, v in values.items() if v is not None})
