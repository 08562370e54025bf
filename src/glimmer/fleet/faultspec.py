"""The ``--fault MODE@TARGET[=INTENSITY]`` flag, shared by every command that injects faults.

Examples: ``gpu_fallen_off_bus@gpu:hgx-node-0001/3``, ``gpu_cooling_fault@rack:site-a/nvl-a=0.5``.
Which modes exist and which targets they accept is the simulator's table; this parser checks the
shape of the flag only, so its errors are about the text the user typed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime

from glimmer.api.fleet import Fault
from glimmer.errors import InputError, Location

_MODE = re.compile(r"^[a-z][a-z0-9_]*$")
_TARGET = re.compile(r"^[a-z][a-z0-9_]*:\S+$")
SYNTAX = "MODE@TARGET[=INTENSITY], e.g. gpu_xid_burst@gpu:hgx-node-0001/3=0.5"


@dataclass(frozen=True)
class FaultSpec:
    """One fault to inject: mode, target key, intensity in (0, 1], optional window."""

    mode: str
    target: str
    intensity: float = 1.0
    start: datetime | None = None
    end: datetime | None = None

    def render(self) -> str:
        """The flag text that parses back to this fault (window aside)."""
        return f"{self.mode}@{self.target}={self.intensity:g}"


def _fail(text: str, reason: str, flag: str) -> InputError:
    return InputError(f"{reason} in {text!r} (expected {SYNTAX})", Location(field=flag))


def parse_fault(text: str, flag: str = "--fault") -> FaultSpec:
    """Parse one ``--fault`` value; InputError naming the flag and the problem."""
    mode, at, rest = text.partition("@")
    if not at:
        raise _fail(text, "missing '@' between mode and target", flag)
    if not _MODE.match(mode):
        raise _fail(text, f"invalid fault mode {mode!r}", flag)
    target, eq, level = rest.partition("=")
    if not _TARGET.match(target):
        raise _fail(text, f"invalid target {target!r}: a key such as gpu:<host>/<slot>", flag)
    intensity = 1.0
    if eq:
        try:
            intensity = float(level)
        except ValueError:
            raise _fail(text, f"intensity {level!r} is not a number", flag) from None
        if not math.isfinite(intensity) or not 0 < intensity <= 1:
            raise _fail(text, f"intensity {level} must be within (0, 1]", flag)
    return FaultSpec(mode, target, intensity)


def parse_faults(texts: list[str], flag: str = "--fault") -> list[FaultSpec]:
    """Parse a repeatable flag, keeping the order given."""
    return [parse_fault(t, flag) for t in texts]


def from_declared(fault: Fault) -> FaultSpec:
    """A fault declared in a Fleet (``spec.faults[]``) as a FaultSpec."""
    return FaultSpec(
        fault.mode,
        fault.target,
        min(1.0, fault.intensity),
        fault.window.start,
        fault.window.end,
    )
