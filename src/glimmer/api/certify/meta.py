"""The envelope of the ``certify.glimmer.ai/v1alpha1`` resources (Certification, WorkloadRun,
LogProfile): the certification API of specs/certify.md §2 with its names moved to our group.
"""

from __future__ import annotations

from typing import ClassVar

from glimmer.api.certify.labels import CERTIFY_GROUP
from glimmer.api.meta import Resource

API_GROUP = CERTIFY_GROUP
API_VERSION = f"{API_GROUP}/v1alpha1"


class CertifyResource(Resource):
    """The envelope of every certification resource (the burn-in envelope, in this group).
    Subclasses pin ``kind``; LogProfile is cluster-scoped."""

    API_VERSION: ClassVar[str] = API_VERSION
