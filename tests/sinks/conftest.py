"""Helpers for sink tests: a fake clock that never sleeps, a real HTTP receiver, and the engine
test world (tests/engine/engine_world.py) importable from here."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_ENGINE_TESTS = str(Path(__file__).resolve().parent.parent / "engine")
if _ENGINE_TESTS not in sys.path:
    sys.path.insert(0, _ENGINE_TESTS)
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from receiver import Receiver  # noqa: E402
from sink_doubles import FakeClock  # noqa: E402


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    try:
        yield r
    finally:
        r.stop()
