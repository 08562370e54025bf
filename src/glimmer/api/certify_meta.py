"""The envelope of the ``certify.glimmer.ai/v1alpha1`` resources (Certification, WorkloadRun,
LogProfile): the certification API of specs/certify.md §2 with its names moved to our group.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import model_validator

from glimmer.api.base import Wire
from glimmer.api.certify_labels import CERTIFY_GROUP
from glimmer.api.meta import ObjectMeta

API_GROUP = CERTIFY_GROUP
API_VERSION = f"{API_GROUP}/v1alpha1"


class CertifyResource(Wire):
    """The envelope of every certification resource. Subclasses pin ``kind``."""

    KIND: ClassVar[str] = ""
    SHORT_NAME: ClassVar[str] = ""
    PLURAL: ClassVar[str] = ""
    NAMESPACED: ClassVar[bool] = True

    api_version: str
    kind: str
    metadata: ObjectMeta

    @model_validator(mode="after")
    def _envelope(self) -> CertifyResource:
        if self.api_version != API_VERSION:
            raise ValueError(f"apiVersion must be {API_VERSION}")
        if self.kind != self.KIND:
            raise ValueError(f"kind must be {self.KIND}")
        return self

    @property
    def name(self) -> str:
        """The object's name ("" when only generateName is set)."""
        return self.metadata.name or ""
