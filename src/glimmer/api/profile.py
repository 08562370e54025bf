"""BurnInProfile (``bip``): an ordered suite of tests and the policy of running them."""

from __future__ import annotations

import re
from typing import Annotated, ClassVar

from pydantic import AfterValidator, ConfigDict, Field, model_validator

from glimmer.api.base import ZERO, Bool, Int32, Int64, Wire
from glimmer.api.k8s import EnvVar
from glimmer.api.meta import Resource
from glimmer.api.test import BurnInTestSpec
from glimmer.api.threshold import Threshold

VARIANT_NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_VARIANT_NAME = re.compile(VARIANT_NAME_PATTERN)


def _variant_name(name: str) -> str:
    if not _VARIANT_NAME.match(name):
        raise ValueError(
            f"variant name {name!r} must be lower-case letters, digits and '-', starting and "
            "ending with a letter or digit (it becomes part of the planned test's name)"
        )
    return name


VariantName = Annotated[
    str,
    AfterValidator(_variant_name),
    Field(min_length=1, json_schema_extra={"pattern": VARIANT_NAME_PATTERN}),
]


class TestVariant(Wire):
    """One cell of a matrix, planned as ``<test>-<name>``. Set fields replace, unset inherit."""

    __test__: ClassVar[bool] = False  # not a pytest class, despite the name

    name: VariantName
    axes: dict[str, str] | None = None
    duration_seconds: Int32 | None = Field(None, ge=0)
    args: list[str] | None = None
    env: list[EnvVar] | None = None
    # Replaces the parent's list; an empty list (not null) means "no gates" for this cell.
    thresholds: list[Threshold] | None = None
    repeat_count: Int32 | None = Field(None, ge=1)


class ProfileTest(Wire):
    """One entry of a profile: a reference to a BurnInTest, or a whole test spec inline."""

    # The API server checks the same rule, so a bad entry is refused at apply time too.
    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "has(self.testRef) != has(self.inline)",
                    "message": "set exactly one of testRef and inline",
                }
            ]
        }
    )

    test_ref: str | None = Field(None, min_length=1)
    inline: BurnInTestSpec | None = None
    required: Bool = True
    variants: list[TestVariant] | None = None

    @model_validator(mode="after")
    def _ref_xor_inline(self) -> ProfileTest:
        if self.test_ref is not None and self.inline is not None:
            raise ValueError("set exactly one of testRef and inline, not both")
        if self.test_ref is None and self.inline is None:
            raise ValueError("set exactly one of testRef and inline (neither is set)")
        return self

    def entry_name(self, index: int) -> str:
        """The entry's name: the referenced test, or ``inline-<index>-<kind>`` (0-based)."""
        if self.test_ref is not None:
            return self.test_ref
        assert self.inline is not None  # guaranteed by validation
        return f"inline-{index}-{self.inline.kind}"


class BurnInProfileSpec(Wire):
    """The tests, in order, and what to do with their results."""

    tests: list[ProfileTest] = Field(min_length=1)
    fail_fast: Bool = Field(False, json_schema_extra=ZERO)
    sinks: list[str] | None = None


class BurnInProfileStatus(Wire):
    """Status of a BurnInProfile (declared; the controller does not write it)."""

    observed_generation: Int64 | None = None


class BurnInProfile(Resource):
    """An ordered suite of tests plus policy."""

    KIND: ClassVar[str] = "BurnInProfile"
    SHORT_NAME: ClassVar[str] = "bip"
    PLURAL: ClassVar[str] = "burninprofiles"

    spec: BurnInProfileSpec
    status: BurnInProfileStatus | None = None
