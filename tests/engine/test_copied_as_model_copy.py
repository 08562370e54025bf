"""The engine's copy of a result, an attempt or a status (issue 12) is the copy pydantic's
``model_copy(update=...)`` makes: the same values, the same names set (what ``exclude_unset``
dumps read), no extras or private attributes; a model that allows extras takes model_copy."""

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TypeVar

from pydantic import BaseModel

from glimmer.api.meta import ObjectMeta
from glimmer.api.result import TestAttempt, TestResult
from glimmer.api.run import BurnInRunStatus
from glimmer.api.shared_fields import share_fields_set
from glimmer.contract.vocab import Phase
from glimmer.engine.copied import copied

AT = datetime(2026, 10, 2, 1, 2, 3, tzinfo=UTC)
M = TypeVar("M", bound=BaseModel)


def _same_copy(model: M, update: Mapping[str, object]) -> M:
    ours, theirs = copied(model, update), model.model_copy(update=dict(update))
    assert type(ours) is type(theirs)
    assert ours.__dict__ == theirs.__dict__
    assert list(ours.__dict__) == list(theirs.__dict__)
    assert ours.__pydantic_fields_set__ == theirs.__pydantic_fields_set__
    assert ours.__pydantic_extra__ == theirs.__pydantic_extra__
    assert ours.__pydantic_private__ == theirs.__pydantic_private__
    assert ours.model_dump_json(exclude_unset=True) == theirs.model_dump_json(exclude_unset=True)
    assert ours == theirs
    return ours


def test_a_result_copied_with_changes_is_model_copys() -> None:
    attempt = TestAttempt(attempt=1, trigger="Initial", node="n1", phase=Phase.RUNNING)
    result = TestResult(name="burn", kind="gpu-burn", phase=Phase.RUNNING, attempts=[attempt])
    done = _same_copy(result, {"phase": Phase.PASSED, "finished_at": AT, "metrics": {"a": "1"}})
    assert done.phase is Phase.PASSED and result.phase is Phase.RUNNING  # the original kept
    _same_copy(attempt, {"exit_code": 0, "message": "ok"})
    _same_copy(BurnInRunStatus(), {"results": [result], "passed": 1})


def test_a_copy_of_a_model_with_a_shared_fields_set_can_grow() -> None:
    result = TestResult(name="burn", kind="gpu-burn", phase=Phase.RUNNING)
    share_fields_set(result)
    done = _same_copy(result, {"message": "late"})
    assert "message" in done.__pydantic_fields_set__
    assert "message" not in result.__pydantic_fields_set__


def test_a_model_that_keeps_unknown_fields_is_copied_by_model_copy() -> None:
    meta = ObjectMeta.model_validate({"name": "a", "futureField": "kept"})
    ours = copied(meta, {"name": "b", "otherField": 1})
    assert ours == meta.model_copy(update={"name": "b", "otherField": 1})
    assert ours.__pydantic_extra__ == {"futureField": "kept", "otherField": 1}
    assert (
        ours.name == "b" and meta.name == "a" and meta.__pydantic_extra__ == {"futureField": "kept"}
    )
