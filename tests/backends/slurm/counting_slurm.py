"""A Slurm that keeps every command it was asked to run, for the tests that count calls."""

from __future__ import annotations

import dataclasses
from typing import Any

from glimmer.backends.slurm.commands import Slurm


@dataclasses.dataclass(frozen=True)
class CountingSlurm(Slurm):
    """The cluster's Slurm, keeping every command it was asked to run."""

    calls: list[tuple[str, ...]] = dataclasses.field(default_factory=list)

    def call(self, *argv: str, input: str | None = None, check: bool = True) -> Any:
        self.calls.append(argv)
        return super().call(*argv, input=input, check=check)

    def asked(self, *start: str) -> list[tuple[str, ...]]:
        """The calls whose words begin with ``start``."""
        return [c for c in self.calls if c[: len(start)] == start]
