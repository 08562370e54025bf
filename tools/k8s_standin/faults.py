"""Faults the stand-in injects on purpose, to prove a client copes with a real API server's
behaviour under contention."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ConflictEvery:
    """Answer every ``every``-th write (POST, PUT, PATCH, DELETE of a resource) with 409
    Conflict, without effect — the issue's "409 to every tenth write". ``None`` disables it."""

    every: int | None = None
    writes: int = 0

    def strikes(self) -> bool:
        if not self.every:
            return False
        self.writes += 1
        return self.writes % self.every == 0
