"""Certification (``cert``): catalog categories run in order over a target's nodes.

The whole spec is immutable after creation (the CRD says so with a CEL rule). Options inlined at
spec level are the global defaults; a category's own options win (``merged_options``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import ConfigDict, Field, model_validator

from glimmer.api.base import Wire, item_error
from glimmer.api.certify.catalog import CatalogView, catalog_view
from glimmer.api.certify.meta import CertifyResource
from glimmer.api.certify.options import CategoryOptions, merged_options
from glimmer.api.certify.types import (
    GangSchedulerSpec,
    TargetSpec,
    TypedLocalObjectReference,
    WorkflowRef,
)
from glimmer.api.k8s import Condition

IMMUTABLE: dict[str, Any] = {
    "rule": "self == oldSelf",
    "message": "spec is immutable after creation",
}
NAME_PART = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


class Category(Wire):
    """One catalog entry to run (``domain/variant``), with options of its own."""

    domain: str = Field(min_length=1, pattern=NAME_PART)
    variant: str = Field(min_length=1, pattern=NAME_PART)
    options: CategoryOptions | None = None

    @property
    def ref(self) -> str:
        """``domain/variant``."""
        return f"{self.domain}/{self.variant}"


class CertificationSpec(CategoryOptions):
    """Target, categories (run sequentially, every one runs) and global options."""

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-validations": [dict(IMMUTABLE)]})

    target: TargetSpec
    categories: list[Category] = Field(min_length=1, max_length=64)
    gang_scheduler: GangSchedulerSpec | None = None

    def options_for(self, index: int) -> CategoryOptions:
        """The effective options of one category (global ⊕ category)."""
        return merged_options(self, self.categories[index].options)

    @model_validator(mode="after")
    def _categories_in_catalog(self) -> CertificationSpec:
        view = catalog_view()
        if view is None:
            return self
        for i, category in enumerate(self.categories):
            if category.ref not in view:
                known = ", ".join(view)
                raise item_error(
                    f".categories[{i}].variant",
                    f"category {category.ref} is not in the catalog (known: {known})",
                )
            self._thresholds_measured(i, view)
        return self

    def _thresholds_measured(self, index: int, view: CatalogView) -> None:
        # §7.5: a key no measurement of the Job produces fails it with MeasurementTimeout, a
        # verdict about the nodes for what is a mistake in the file; refuse it here instead.
        category = self.categories[index]
        measured = view[category.ref]
        own = (category.options.thresholds if category.options else None) or {}
        for key in sorted(self.options_for(index).thresholds or {}):
            if key in measured:
                continue
            what = ", ".join(sorted(measured)) if measured else "no threshold key"
            if key in own:
                where = f".categories[{index}].options.thresholds.{key}"
                message = f"{category.ref} never measures {key} (it measures {what})"
            else:
                where = f".thresholds.{key}"
                message = (
                    f"a spec-level threshold applies to every category, and {category.ref} "
                    f"never measures {key} (it measures {what}); set it on the categories "
                    "that do"
                )
            raise item_error(where, message)


class CategoryPhase(StrEnum):
    """Where one category stands."""

    PENDING = "Pending"
    IN_PROGRESS = "InProgress"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"


class CategoryStatus(Wire):
    """One category's progress and where its node results are."""

    domain: str
    variant: str
    status: CategoryPhase = CategoryPhase.PENDING
    workflow_ref: WorkflowRef | None = None
    succeeded_nodes_ref: TypedLocalObjectReference | None = None
    failed_nodes_ref: TypedLocalObjectReference | None = None


class CertificationStatus(Wire):
    """Conditions (InProgress, Succeeded, Failed exclusive; ValidationFailed additive) and the
    status of each category."""

    conditions: list[Condition] | None = None
    category_statuses: list[CategoryStatus] | None = None


class Certification(CertifyResource):
    """A certification suite: catalog categories over topology-aware groups of a target."""

    KIND: ClassVar[str] = "Certification"
    SHORT_NAME: ClassVar[str] = "cert"
    PLURAL: ClassVar[str] = "certifications"

    spec: CertificationSpec
    status: CertificationStatus | None = None
