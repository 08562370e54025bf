"""Kubernetes types the burn-in resources carry: env vars, resources, probes, tolerations,
secret selectors, object references and conditions.

The carried ones are light: the fields glimmer reads are typed, everything else rides along
untouched (and the CRD marks them ``x-kubernetes-preserve-unknown-fields``). Conditions are
written by glimmer itself, so they are a strict model of ``metav1.Condition``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, WithJsonSchema

from glimmer.api.base import Bool, Carried, Int64, Wire


def _quantity(value: Any) -> Any:
    # bool is an int in Python but never a quantity; refuse it here so the error reads clearly.
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError('a quantity is a string or a number, such as "1" or "500Mi"')
    return value


# A resource quantity as written: "1", 2, "500Mi". Kept exactly as given (no normalisation).
Quantity = Annotated[
    int | float | str,
    BeforeValidator(_quantity),
    WithJsonSchema({"x-kubernetes-int-or-string": True}),
]

# A Kubernetes object we pass through whole (a Probe, an EnvVarSource): any mapping.
Passthrough = Annotated[
    dict[str, Any],
    WithJsonSchema({"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
]


class ResourceRequirements(Carried):
    """Container resources, copied verbatim onto the runner container."""

    limits: dict[str, Quantity] | None = None
    requests: dict[str, Quantity] | None = None
    claims: list[Passthrough] | None = None


class EnvVar(Carried):
    """A container environment variable, ``valueFrom`` included."""

    name: str = Field(min_length=1)
    value: str | None = None
    value_from: Passthrough | None = None


class Toleration(Carried):
    """A pod toleration, added to every runner pod of a run."""

    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: Int64 | None = None


class SecretKeySelector(Carried):
    """One key of a Secret in the object's namespace."""

    name: str | None = None
    key: str = Field(min_length=1)
    optional: Bool | None = None


class ObjectReference(Carried):
    """A reference to another object (for example a schedule's active runs)."""

    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    field_path: str | None = None


class Condition(Wire):
    """A ``metav1.Condition``: one observed aspect of an object's state."""

    type: str = Field(min_length=1, max_length=316)
    status: Literal["True", "False", "Unknown"]
    observed_generation: Int64 | None = Field(None, ge=0)
    last_transition_time: datetime
    reason: str = Field(min_length=1, max_length=1024)
    message: str = Field(max_length=32768)
