"""Results share one fields set per distinct set of names, and nothing they say changes."""

from __future__ import annotations

import pytest

from glimmer.api.dump import to_wire
from glimmer.api.result import TestResult
from glimmer.api.shared_fields import SharedFieldsSet, share_fields_set


def _result(node: str) -> TestResult:
    return TestResult.model_validate(
        {"name": "burn", "kind": "gpu-burn", "phase": "Passed", "nodes": [node], "message": "ok"}
    )


def test_results_given_the_same_fields_share_one_set() -> None:
    a, b = _result("n1"), _result("n2")
    share_fields_set(a)
    share_fields_set(b)
    assert a.__pydantic_fields_set__ is b.__pydantic_fields_set__
    assert type(a.__pydantic_fields_set__) is SharedFieldsSet


def test_sharing_changes_no_dump() -> None:
    a = _result("n1")
    before = to_wire(a)
    share_fields_set(a)
    assert to_wire(a) == before
    assert a.model_dump(exclude_unset=True) == _result("n1").model_dump(exclude_unset=True)


def test_a_copy_with_an_update_grows_its_own_set_and_leaves_the_shared_one() -> None:
    a = _result("n1")
    share_fields_set(a)
    shared = a.__pydantic_fields_set__
    names = set(shared)
    b = a.model_copy(update={"error_retries": 3})
    assert "error_retries" in b.model_fields_set
    assert set(shared) == names
    assert b.model_dump(exclude_unset=True)["errorRetries"] == 3
    assert "errorRetries" not in a.model_dump(exclude_unset=True)


def test_assigning_a_field_a_shared_model_lacked_is_refused() -> None:
    a, b = _result("n1"), _result("n2")
    share_fields_set(a)
    share_fields_set(b)
    with pytest.raises(TypeError, match="shared fields set cannot change"):
        a.error_retries = 1
    assert "error_retries" not in b.model_fields_set


def test_assigning_a_field_already_given_is_no_change() -> None:
    a = _result("n1")
    share_fields_set(a)
    a.message = "still ok"  # the name is in the set already: nothing shared changes
    assert a.message == "still ok"
