"""The pinned plan: the document a run freezes at start and stores in its ``burnin.glimmer.ai/plan``
annotation, so that editing a profile or a test mid-run changes nothing about that run.

The annotation holds raw JSON when it fits in 128 KiB, otherwise gzip (best compression) + base64;
a plan that does not fit even then is refused. Reading sniffs the form: a value starting with
``{`` is JSON, anything else base64-gzip, decompressed to at most 4 MiB.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import zlib
from typing import Literal

from pydantic import Field, ValidationError

from glimmer.api.base import Bool, Wire
from glimmer.api.profile import ProfileTest
from glimmer.api.test import BurnInTestSpec
from glimmer.errors import GlimmerError

PLAN_ANNOTATION = "burnin.glimmer.ai/plan"
MAX_ANNOTATION_BYTES = 128 * 1024
MAX_DECOMPRESSED_BYTES = 4 * 1024 * 1024


class PlanError(GlimmerError):
    """A plan that cannot be stored (too large) or read back (corrupt annotation)."""


class PlannedTest(Wire):
    """One planned test: a profile entry, or one variant cell of it (``parent`` names the entry)."""

    name: str = Field(min_length=1)
    required: Bool
    spec: BurnInTestSpec
    axes: dict[str, str] | None = None
    parent: str | None = None


class PlanDocument(Wire):
    """Everything pinned at start: targets, sinks, policy and every test's full spec."""

    version: Literal[1] = 1
    targets: list[str]
    sinks: list[str] | None = None
    fail_fast: Bool = False
    baseline: Bool = False
    profile_entries: list[ProfileTest]
    tests: list[PlannedTest]

    def to_json(self) -> str:
        """Compact JSON with every field written out, defaults included: a pinned plan must not
        change meaning if a later version changes a default."""
        return self.model_dump_json(by_alias=True, exclude_none=True)


def encode_plan(plan: PlanDocument) -> str:
    """The annotation value for a plan. Raises PlanError when even compressed it is too large."""
    raw = plan.to_json()
    if len(raw.encode()) <= MAX_ANNOTATION_BYTES:
        return raw
    # mtime=0 keeps the value identical for an identical plan.
    packed = base64.b64encode(gzip.compress(raw.encode(), compresslevel=9, mtime=0)).decode()
    if len(packed) > MAX_ANNOTATION_BYTES:
        raise PlanError(
            f"the pinned plan is {len(packed)} bytes compressed, over the "
            f"{MAX_ANNOTATION_BYTES}-byte annotation limit; split the profile"
        )
    return packed


def _gunzip_capped(data: bytes) -> bytes:
    inflater = zlib.decompressobj(wbits=zlib.MAX_WBITS | 16)
    out = inflater.decompress(data, MAX_DECOMPRESSED_BYTES + 1)
    if len(out) > MAX_DECOMPRESSED_BYTES or inflater.unconsumed_tail:
        raise PlanError(f"the pinned plan decompresses past {MAX_DECOMPRESSED_BYTES} bytes")
    if not inflater.eof:
        raise PlanError("the pinned plan annotation is truncated")
    return out


def decode_plan(value: str) -> PlanDocument:
    """The plan stored in an annotation value (either form). Raises PlanError if unreadable."""
    if value.lstrip().startswith("{"):
        text = value
    else:
        try:
            text = _gunzip_capped(base64.b64decode(value, validate=True)).decode()
        except (binascii.Error, zlib.error, UnicodeDecodeError) as e:
            raise PlanError(f"the pinned plan annotation is not base64-gzip JSON: {e}") from None
    try:
        return PlanDocument.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError) as e:
        raise PlanError(f"the pinned plan annotation does not hold a plan: {e}") from None
