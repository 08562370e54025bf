"""Platform names (seed: Names, NamesList, ValidateFlag)."""

from __future__ import annotations

import pytest

from glimmer.certify.platform import PlatformError, names, names_list, validate_flag

ORDER = ["aws", "gcp", "azure", "oci", "onprem", "togetherai", "mistral", "forge", "nscale"]


def test_names_returns_every_platform_in_help_and_error_order() -> None:
    assert names() == ORDER


def test_names_list_joins_the_names_with_comma_space() -> None:
    assert names_list() == ", ".join(ORDER)


@pytest.mark.parametrize("name", ["", *ORDER])
def test_validate_flag_allows_empty_and_every_platform_name(name: str) -> None:
    validate_flag(name)


def test_validate_flag_error_text_derives_the_valid_names_from_names() -> None:
    with pytest.raises(PlatformError) as e:
        validate_flag("bluecloud")
    assert e.value.message == f'invalid --platform "bluecloud": must be one of {names_list()}'


def test_names_returns_a_fresh_list_each_call() -> None:
    names().append("mine")
    assert names() == ORDER


def test_label_and_annotation_keys_are_the_spec_names_in_our_group() -> None:
    from glimmer.certify.platform import vocab as n

    assert {
        n.CERTIFICATION_LABEL,
        n.CATEGORY_DOMAIN_LABEL,
        n.CATEGORY_VARIANT_LABEL,
        n.WORKLOAD_RUN_LABEL,
        n.WORKFLOW_LABEL,
        n.GROUP_LABEL,
        n.JOB_LABEL,
        n.DETECTED_PLATFORM_ANNOTATION,
        n.DETECTED_GPU_ANNOTATION,
        n.APPLIED_OVERRIDES_ANNOTATION,
    } == {
        f"certify.glimmer.ai/{k}"
        for k in (
            "certification",
            "category-domain",
            "category-variant",
            "workload-run",
            "workflow",
            "group",
            "job",
            "detected-platform",
            "detected-gpu-architecture",
            "applied-overrides",
        )
    }
    assert (n.MANAGED_BY_KEY, n.MANAGED_BY) == ("app.kubernetes.io/managed-by", "glimmer")
    assert (n.DEFAULT_QUEUE_LABEL_KEY, n.DEFAULT_QUEUE, n.KAI_SCHEDULER) == (
        "kai.scheduler/queue",
        "default-queue",
        "kai-scheduler",
    )
