"""Performance thresholds of a certification (specs/certify.md §7.5), judged against values.

The expression language and its load-time checks live with the API models
(:mod:`glimmer.api.certify.threshold`), so a file that cannot be judged is refused before it
runs; this module judges measured values against expressions that loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from glimmer.api.certify.threshold import REGISTRY, Expr, ThresholdError, evaluate, parse

__all__ = ["REGISTRY", "ThresholdError", "Violation", "holds", "unknown_keys", "violations"]


@dataclass(frozen=True)
class Violation:
    key: str
    value: float
    expression: str

    @property
    def message(self) -> str:
        # The §7.5 wording, kept literally.
        return (
            f'Threshold "{self.key}" violated: measured {self.value:.4f}, '
            f"expression: {self.expression}"
        )


@lru_cache(maxsize=256)
def _tree(expression: str) -> Expr:
    # Compiled once per expression, as the controller caches its CEL programs.
    return parse(expression)


def holds(expression: str, value: float) -> bool:
    """Whether ``value`` satisfies ``expression``; ThresholdError when it is not a valid
    boolean expression over ``value``. A non-finite value never satisfies a gate (fail closed)."""
    return evaluate(_tree(expression), value)


def unknown_keys(thresholds: Mapping[str, str]) -> list[str]:
    """Keys outside the registry, sorted (§7.5 UnknownThresholdKey)."""
    return sorted(k for k in thresholds if k not in REGISTRY)


def violations(thresholds: Mapping[str, str], measured: Mapping[str, float]) -> list[Violation]:
    """Every violated threshold, sorted by key; keys without a measurement are skipped."""
    out = []
    for key in sorted(thresholds):
        if key in measured and not holds(thresholds[key], measured[key]):
            out.append(Violation(key, measured[key], thresholds[key]))
    return out
