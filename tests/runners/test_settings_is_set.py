"""Settings.is_set: whether a variable is in the environment at all, the one read where set but
empty differs from unset (BURNIN_RESOURCE_LIMITS, §3.5)."""

from __future__ import annotations

import pytest

from glimmer.runners import devices as dv
from glimmer.runners.outcome import ConfigError
from glimmer.runners.settings import Settings


def test_set_but_empty_is_set_while_raw_reads_it_as_unset() -> None:
    settings = Settings({"A": "", "B": "  ", "C": "1"})
    assert [settings.is_set(n) for n in ("A", "B", "C", "D")] == [True, True, True, False]
    assert settings.raw("A") is None and settings.raw("B") is None


def test_the_process_environment_is_read_when_none_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GLIMMER_TEST_IS_SET", "")
    monkeypatch.delenv("GLIMMER_TEST_IS_UNSET", raising=False)
    settings = Settings()
    assert settings.is_set("GLIMMER_TEST_IS_SET")
    assert not settings.is_set("GLIMMER_TEST_IS_UNSET")


def test_the_budget_refuses_resource_limits_set_but_empty_and_ignores_them_unset() -> None:
    with pytest.raises(ConfigError, match="set but empty"):
        dv.budget(Settings({dv.RESOURCE_LIMITS: ""}))
    assert dv.budget(Settings({})) is None
