"""Performance thresholds of a certification (specs/certify.md §7.5).

Thresholds map a registry key to a CEL expression over one double, ``value``. We read the part
of CEL that thresholds use — numbers, ``value``, ``true``/``false``, arithmetic, comparisons,
``!``, ``&&``, ``||`` and parentheses — and refuse the rest with a message, rather than pull in
a CEL engine for one variable.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

# §7.5 registry: what each key measures.
REGISTRY: dict[str, str] = {
    "busBandwidthGBps": "max busbw over message sizes (GB/s)",
    "algBandwidthGBps": "max algbw over message sizes (GB/s)",
    "goodputRatio": "goodput of the training run (0..1)",
    "avgTFLOPsPerGPU": "mean TFLOP/s per GPU over non-warmup steps",
    "avgStepTimeSec": "mean step time over non-warmup steps (s)",
}

_TOKEN = re.compile(
    r"\s*(?:(\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)|(&&|\|\||[<>!=]=|[-+*/()<>!])|([A-Za-z_]\w*))"
)


class ThresholdError(ValueError):
    """An expression we cannot evaluate (§7.5 InvalidThresholdExpression)."""


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


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ThresholdError(f"unexpected text at {text[pos:]!r}")
        out.append(m.group(1) or m.group(2) or m.group(3))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str, value: float) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.value = value

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise ThresholdError("expression ends too early")
        self.i += 1
        return tok

    def parse(self) -> float | bool:
        got = self.or_()
        if self.peek() is not None:
            raise ThresholdError(f"unexpected {self.peek()!r}")
        return got

    def or_(self) -> float | bool:
        left = self.and_()
        while self.peek() == "||":
            self.take()
            right = self.and_()
            left = _bool(left) or _bool(right)
        return left

    def and_(self) -> float | bool:
        left = self.cmp()
        while self.peek() == "&&":
            self.take()
            right = self.cmp()
            left = _bool(left) and _bool(right)
        return left

    def cmp(self) -> float | bool:
        left = self.sum()
        op = self.peek()
        if op in ("<", "<=", ">", ">=", "==", "!="):
            self.take()
            a, b = _num(left), _num(self.sum())
            return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[
                op
            ]
        return left

    def sum(self) -> float | bool:
        left = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            right = _num(self.term())
            left = _num(left) + right if op == "+" else _num(left) - right
        return left

    def term(self) -> float | bool:
        left = self.unary()
        while self.peek() in ("*", "/"):
            op = self.take()
            right = _num(self.unary())
            if op == "/" and right == 0:
                raise ThresholdError("division by zero")
            left = _num(left) * right if op == "*" else _num(left) / right
        return left

    def unary(self) -> float | bool:
        tok = self.peek()
        if tok == "-":
            self.take()
            return -_num(self.unary())
        if tok == "!":
            self.take()
            return not _bool(self.unary())
        return self.atom()

    def atom(self) -> float | bool:
        tok = self.take()
        if tok == "(":
            got = self.or_()
            if self.take() != ")":
                raise ThresholdError("missing ')'")
            return got
        if tok == "value":
            return self.value
        if tok in ("true", "false"):
            return tok == "true"
        if tok[0].isdigit() or tok[0] == ".":
            return float(tok)
        raise ThresholdError(f"unknown name {tok!r} (only 'value' is defined)")


def _num(v: float | bool) -> float:
    if isinstance(v, bool):
        raise ThresholdError("a number was expected, got a bool")
    return v


def _bool(v: float | bool) -> bool:
    if not isinstance(v, bool):
        raise ThresholdError("a bool was expected, got a number")
    return v


def holds(expression: str, value: float) -> bool:
    """Whether ``value`` satisfies ``expression``; ThresholdError when it is not a valid
    boolean expression. A non-finite value never satisfies a gate (fail closed)."""
    got = _Parser(expression, value).parse()
    if not isinstance(got, bool):
        raise ThresholdError("expression must return a bool")
    return got and math.isfinite(value)


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
