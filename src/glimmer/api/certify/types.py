"""Small types the certification resources share (specs/certify.md §2.1): targets, gang
scheduling, workload metadata, dependencies and overrides with their ``when`` guards.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from glimmer.api.base import Bool, Carried, Int32, Wire, item_error
from glimmer.api.certify.labels import (
    LABEL_VALUE_PATTERN,
    MANAGED_BY_KEY,
    RESERVED_LABEL_PREFIX,
    label_problem,
    label_value_ok,
    qualified_name_problem,
)
from glimmer.api.k8s import Passthrough
from glimmer.api.meta import ObjectMeta


class TaintSelector(Wire):
    """A taint a target node must carry; an unset value or effect matches any. The effect is
    one of the three Kubernetes knows: a misspelt one would match no node, ever."""

    key: str = Field(min_length=1)
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None


class NodeSelectorRequirement(Wire):
    """A label requirement: In, NotIn, Exists or DoesNotExist. As in Kubernetes, In and NotIn
    need values and Exists and DoesNotExist take none (the API server refuses the rest)."""

    key: str = Field(min_length=1)
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[str] | None = None

    @model_validator(mode="after")
    def _values_fit_the_operator(self) -> NodeSelectorRequirement:
        if self.operator in ("In", "NotIn") and not self.values:
            raise item_error(".values", f"{self.operator} needs at least one value")
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise item_error(".values", f"{self.operator} takes no values")
        return self


class TargetSpec(Wire):
    """Which nodes: a label selector (AND), label requirements (all must match), explicit names
    (a filter) and taints the node must carry (all of them)."""

    node_selector: dict[str, str] | None = None
    match_expressions: list[NodeSelectorRequirement] | None = None
    node_names: list[str] | None = None
    taint_selectors: list[TaintSelector] | None = None
    include_unschedulable: Bool | None = None

    @field_validator("node_selector")
    @classmethod
    def _labels(cls, selector: dict[str, str] | None) -> dict[str, str] | None:
        # A key or value no Node can carry (a space in "NVIDIA GB200") selects nothing, and
        # the run would only find that out against the cluster.
        labels = selector or {}
        for key in sorted(labels):
            problem = qualified_name_problem(key)
            if problem:
                raise item_error(f".{key}", f"{key!r} is not a label key: {problem}")
            if not label_value_ok(labels[key]):
                raise item_error(
                    f".{key}",
                    f"{labels[key]!r} is not a label value: at most 63 characters of letters, "
                    "digits, '-', '_' and '.', starting and ending with a letter or digit",
                )
        return selector


def _queue_label_key(key: str) -> str:
    problem = qualified_name_problem(key)
    if problem:
        raise ValueError(f"{key!r} is not a qualified label key: {problem}")
    if key == MANAGED_BY_KEY or key.startswith(RESERVED_LABEL_PREFIX):
        raise ValueError(f"{key!r} is reserved for glimmer")
    return key


class GangSchedulerSpec(Wire):
    """Run every replicated job under a gang scheduler (KAI by default keys; Run:ai:
    ``runai-scheduler`` + ``runai/queue``)."""

    scheduler_name: str = Field(min_length=1)
    queue: str | None = Field(None, max_length=63, pattern=LABEL_VALUE_PATTERN)
    queue_label_key: str | None = Field(None, max_length=317)

    @field_validator("queue_label_key")
    @classmethod
    def _key(cls, key: str | None) -> str | None:
        return None if key is None else _queue_label_key(key)


class WorkloadMetadata(Wire):
    """Labels for the workload object (the TrainJob), not its pods. At most 32 after every merge
    and after the queue label is inserted; reserved keys refused."""

    labels: dict[str, str] | None = None

    @field_validator("labels")
    @classmethod
    def _labels(cls, labels: dict[str, str] | None) -> dict[str, str] | None:
        found = label_problem(labels or {})
        if found:
            key, message = found
            # Located at the offending key, so the error names its line.
            raise item_error(f".{key}" if key else "", message)
        return labels


class StringMatchSpec(Wire):
    """``equals``, ``in``, ``notIn``: all given must hold."""

    model_config = ConfigDict(populate_by_name=True)

    equals: str | None = None
    in_: list[str] | None = Field(None, alias="in")
    not_in: list[str] | None = None


class IntMatchSpec(Wire):
    """``equals``, ``greaterThan``, ``lessThan``: all given must hold."""

    equals: Int32 | None = None
    greater_than: Int32 | None = None
    less_than: Int32 | None = None


class TopologyMatchSpec(Wire):
    """The topology an override applies to."""

    mode: Literal["simple", "topology"] | None = None
    domain_count: IntMatchSpec | None = None


class WhenSpec(Wire):
    """All present criteria must match; an empty guard always matches."""

    gpu_architecture: StringMatchSpec | None = None
    platform: StringMatchSpec | None = None
    workload_kind: str | None = None
    topology: TopologyMatchSpec | None = None
    config: Passthrough | None = None
    expression: str | None = None

    @field_validator("expression")
    @classmethod
    def _no_cel(cls, expression: str | None) -> str | None:
        # glimmer's renderer has no CEL; a guard it cannot read is refused now, not at render.
        if expression is not None:
            raise ValueError(
                "CEL is not supported by glimmer's renderer; write the guard with "
                "gpuArchitecture, platform, workloadKind, topology or config"
            )
        return expression


class DependencySpec(Carried):
    """An embedded Kubernetes object the Workflow creates (unknown fields kept), with an
    optional ``when`` guard."""

    api_version: str = Field(min_length=1)
    kind: str = Field(min_length=1)
    metadata: ObjectMeta
    when: WhenSpec | None = None


class TopologySpec(Wire):
    """How nodes are grouped: by a topology label, optionally never mixing domains."""

    topology_key: str = Field(min_length=1)
    strict_domain: Bool | None = None


class ExecutionSpec(Wire):
    """How Jobs run: concurrency, per-job timeout, retries of failed groups."""

    max_concurrent: Int32 | None = Field(None, ge=0)
    timeout_per_job: str | None = Field(None, pattern=r"^([0-9]+(h|m|s|ms))+$")
    retry_failed_groups: Int32 | None = Field(None, ge=0)


class OrchestrationOverrideSpec(Wire):
    """Each part set replaces the base value."""

    target: TargetSpec | None = None
    topology: TopologySpec | None = None
    execution: ExecutionSpec | None = None
    iterations: Int32 | None = Field(None, ge=1)


def _patch_array(value: Any) -> Any:
    # Accepted as the array or as a JSON string holding it; kept as the array.
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as e:
            raise ValueError(f"jobTemplatePatch is not a JSON array: {e}") from None
    return value


# The RFC 6902 operations the renderer applies, and whether each carries a value.
PATCH_OPS: dict[str, bool] = {"add": True, "remove": False, "replace": True, "test": True}


def _patch_op_problem(op: dict[str, Any]) -> tuple[str, str] | None:
    """The first problem of one RFC 6902 operation as (subfield, message), or None. Whether
    its path exists is known only once the template renders; its shape is known now."""
    kind = op.get("op")
    if kind not in PATCH_OPS:
        return ".op", f"unsupported op {kind!r} (one of {', '.join(PATCH_OPS)})"
    path = op.get("path")
    if not isinstance(path, str):
        return ".path", "path is a JSON pointer string such as /spec/template"
    if path and not path.startswith("/"):
        return ".path", f"path {path!r} must start with '/'"
    if PATCH_OPS[kind] and "value" not in op:
        return ".value", f"{kind} needs a value"
    return None


def _patch_ops(ops: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    for index, op in enumerate(ops or []):
        found = _patch_op_problem(op)
        if found:
            raise item_error(f"[{index}]{found[0]}", found[1])
    return ops


class OverrideSpec(Wire):
    """A guarded patch: ``jobTemplate`` (strategic merge), ``jobTemplatePatch`` (RFC 6902,
    after it), ``dependencies`` (merge-or-append), ``orchestration`` (parts replace)."""

    when: WhenSpec
    job_template: Passthrough | None = None
    job_template_patch: Annotated[
        list[Passthrough] | None, BeforeValidator(_patch_array), AfterValidator(_patch_ops)
    ] = None
    dependencies: list[DependencySpec] | None = None
    orchestration: OrchestrationOverrideSpec | None = None


class TypedLocalObjectReference(Wire):
    """A reference to an object in the same namespace."""

    api_group: str | None = None
    kind: str = Field(min_length=1)
    name: str = Field(min_length=1)


class WorkflowRef(Wire):
    """The Workflow an owner created."""

    name: str
    namespace: str | None = None


class LogProfileRef(Wire):
    """Where a measurement reads its log recipe and how often."""

    log_profile_ref: str = Field(min_length=1)
    sample_interval: str | None = Field(None, pattern=r"^([0-9]+(h|m|s|ms))+$")
    test_type: str | None = None
