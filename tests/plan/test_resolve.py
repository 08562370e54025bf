import pytest

from glimmer.api.profile import BurnInProfile
from glimmer.api.test import BurnInTestSpec
from glimmer.plan.resolve import ResolveError, plan_tests

CLOCK = BurnInTestSpec.model_validate({"kind": "clockprobe", "durationSeconds": 30})


def _profile(*entries: dict[str, object]) -> BurnInProfile:
    return BurnInProfile.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInProfile",
            "metadata": {"name": "p"},
            "spec": {"tests": list(entries)},
        }
    )


def test_test_ref_entries_take_the_referenced_spec_and_name() -> None:
    planned = plan_tests(_profile({"testRef": "clock"}), {"clock": CLOCK})
    assert [(p.name, p.spec.kind, p.required) for p in planned] == [("clock", "clockprobe", True)]


def test_inline_entries_are_named_inline_index_kind() -> None:
    profile = _profile({"testRef": "clock"}, {"inline": {"kind": "host-health"}, "required": False})
    planned = plan_tests(profile, {"clock": CLOCK})
    assert [(p.name, p.required) for p in planned] == [
        ("clock", True),
        ("inline-1-host-health", False),
    ]


def test_unknown_test_ref_is_a_resolution_error_naming_the_field() -> None:
    with pytest.raises(ResolveError) as caught:
        plan_tests(_profile({"testRef": "clock"}, {"testRef": "missing"}), {"clock": CLOCK})
    assert caught.value.field == "spec.tests[1].testRef"
    assert '"missing"' in caught.value.message
