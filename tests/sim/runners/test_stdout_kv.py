"""Stdout.kv spells every value as the runners print it, whichever way it tells the type."""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from glimmer.sim.runners.emit import Stdout


class _Level(IntEnum):
    HIGH = 3


def test_every_kind_of_value_is_spelled_as_before() -> None:
    out = Stdout("X")
    out.kv("f", 1.23456)
    out.kv("f0", 1.5, 0)
    out.kv("i", 17)
    out.kv("s", "none")
    out.kv("t", True)
    out.kv("b", False)
    out.kv("np", np.float64(2.71828), 3)  # a float subclass: a fixed-point float
    out.kv("e", _Level.HIGH)  # an int subclass: its str()
    assert out.lines == [
        "f=1.23", "f0=2", "i=17", "s=none", "t=true", "b=false", "np=2.718", f"e={_Level.HIGH}",
    ]  # fmt: skip
