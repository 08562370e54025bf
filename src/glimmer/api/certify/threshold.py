"""The threshold expressions of a certification (specs/certify.md §7.5), read when the file loads.

A threshold maps a registry key to a CEL expression over one double, ``value``. We read the part
of CEL that thresholds use — numbers, ``value``, ``true``/``false``, arithmetic, comparisons,
``!``, ``&&``, ``||`` and parentheses — into a small tree, and check that tree before anything
runs: it must be true or false, read ``value``, hold only finite numbers, and never divide by a
constant zero. An expression that fails here would otherwise fail every Job it gates, which
reads as a hardware verdict when it is an authoring error. :func:`evaluate` then judges one
measured value against a checked tree.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Annotated, Literal

from pydantic import AfterValidator

from glimmer.api.base import item_error

# §7.5 registry: what each key measures.
REGISTRY: dict[str, str] = {
    "busBandwidthGBps": "max busbw over message sizes (GB/s)",
    "algBandwidthGBps": "max algbw over message sizes (GB/s)",
    "goodputRatio": "goodput of the training run (0..1)",
    "avgTFLOPsPerGPU": "mean TFLOP/s per GPU over non-warmup steps",
    "avgStepTimeSec": "mean step time over non-warmup steps (s)",
}
# Which measurement produces which keys: a key no measurement of a Job produces is never
# available, and §7.5 fails such a Job with MeasurementTimeout.
BANDWIDTH_KEYS = frozenset({"busBandwidthGBps", "algBandwidthGBps"})
GOODPUT_KEYS = frozenset({"goodputRatio", "avgTFLOPsPerGPU", "avgStepTimeSec"})
MEASUREMENT_KEYS: dict[str, frozenset[str]] = {
    "bandwidthMeasurement": BANDWIDTH_KEYS,
    "goodputMeasurement": GOODPUT_KEYS,
}

Type = Literal["number", "bool"]
_COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
# Spellings of other languages that CEL does not have, and what was meant.
_MISSPELT = {"=>": ">=", "=<": "<=", "=": "==", "<>": "!=", "and": "&&", "or": "||", "not": "!"}
_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)"
    r"|(?P<op>&&|\|\||[<>!=]=|[-+*/()<>!])|(?P<name>[A-Za-z_]\w*))"
)


class ThresholdError(ValueError):
    """An expression that cannot gate a value (§7.5 InvalidThresholdExpression)."""


@dataclass(frozen=True)
class Num:
    value: float


@dataclass(frozen=True)
class Value:
    """The measured ``value``."""


@dataclass(frozen=True)
class Bool:
    value: bool


@dataclass(frozen=True)
class Unary:
    op: str  # "-" or "!"
    operand: Expr


@dataclass(frozen=True)
class Binary:
    op: str
    left: Expr
    right: Expr


Expr = Num | Value | Bool | Unary | Binary


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            rest = text[pos:].lstrip()
            if out and out[-1] in _COMPARISONS and rest[:1] in "<>=":
                doubled = out[-1] + rest[0]
                raise ThresholdError(f"{doubled!r} is not an operator; write {out[-1]!r}")
            raise ThresholdError(f"unexpected text at {rest!r}{_hint(rest)}")
        out.append(m.group("num") or m.group("op") or m.group("name"))
        pos = m.end()
    if not out:
        raise ThresholdError("the expression is empty")
    return out


def _hint(rest: str) -> str:
    for wrong in sorted(_MISSPELT, key=len, reverse=True):
        if rest.startswith(wrong):
            return f" ({wrong!r} is not CEL; write {_MISSPELT[wrong]!r})"
    return ""


class _Parser:
    """Precedence climbing, loosest first: ``||``, ``&&``, one comparison, ``+ -``, ``* /``,
    unary ``- !``, atoms."""

    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise ThresholdError("expression ends too early")
        self.i += 1
        return tok

    def parse(self) -> Expr:
        got = self.or_()
        tok = self.peek()
        if tok in _COMPARISONS:
            raise ThresholdError(
                f"unexpected {tok!r}: comparisons do not chain in CEL; join them with && "
                "(e.g. 'value >= 300 && value <= 500')"
            )
        if tok is not None:
            raise ThresholdError(f"unexpected {tok!r}{_hint(tok)}")
        return got

    def or_(self) -> Expr:
        left = self.and_()
        while self.peek() == "||":
            self.take()
            left = Binary("||", left, self.and_())
        return left

    def and_(self) -> Expr:
        left = self.cmp()
        while self.peek() == "&&":
            self.take()
            left = Binary("&&", left, self.cmp())
        return left

    def cmp(self) -> Expr:
        left = self.sum()
        op = self.peek()
        if op in _COMPARISONS:
            self.take()
            right = self.sum()
            return Binary(op, left, right)
        return left

    def sum(self) -> Expr:
        left = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            left = Binary(op, left, self.term())
        return left

    def term(self) -> Expr:
        left = self.unary()
        while self.peek() in ("*", "/"):
            op = self.take()
            left = Binary(op, left, self.unary())
        return left

    def unary(self) -> Expr:
        tok = self.peek()
        if tok in ("-", "!"):
            self.take()
            return Unary(tok, self.unary())
        return self.atom()

    def atom(self) -> Expr:
        tok = self.take()
        if tok == "(":
            got = self.or_()
            if self.peek() is None:
                raise ThresholdError("expression ends too early: missing ')'")
            if self.take() != ")":
                raise ThresholdError("missing ')'")
            return got
        if tok == "value":
            return Value()
        if tok in ("true", "false"):
            return Bool(tok == "true")
        if tok[0].isdigit() or tok[0] == ".":
            number = float(tok)
            if not math.isfinite(number):
                raise ThresholdError(f"the number {tok} is too large for a double")
            return Num(number)
        if tok in _MISSPELT or not (tok[0].isalpha() or tok[0] == "_"):
            raise ThresholdError(
                f"unexpected {tok!r}{_hint(tok)}: a number, 'value' or '(' was expected"
            )
        raise ThresholdError(f"unknown name {tok!r} (only 'value' is defined)")


def _type(e: Expr) -> Type:
    """The type of a tree; ThresholdError where an operator gets the wrong kind of operand."""
    if isinstance(e, Num | Value):
        return "number"
    if isinstance(e, Bool):
        return "bool"
    if isinstance(e, Unary):
        want: Type = "number" if e.op == "-" else "bool"
        _expect(e.operand, want, e.op)
        return want
    if e.op in ("&&", "||"):
        _expect(e.left, "bool", e.op)
        _expect(e.right, "bool", e.op)
        return "bool"
    _expect(e.left, "number", e.op)
    _expect(e.right, "number", e.op)
    return "bool" if e.op in _COMPARISONS else "number"


def _expect(e: Expr, want: Type, op: str) -> None:
    got = _type(e)
    if got != want:
        other = "number" if want == "bool" else "bool"
        raise ThresholdError(f"{op!r} takes a {want}: a {want} was expected, got a {other}")


def _reads_value(e: Expr) -> bool:
    if isinstance(e, Value):
        return True
    if isinstance(e, Unary):
        return _reads_value(e.operand)
    if isinstance(e, Binary):
        return _reads_value(e.left) or _reads_value(e.right)
    return False


def _constants_finite(e: Expr) -> None:
    """Every part that does not read ``value`` is a constant: it must be finite, and a divisor
    must not be zero (that Job could never be judged)."""
    if isinstance(e, Unary):
        _constants_finite(e.operand)
    elif isinstance(e, Binary):
        _constants_finite(e.left)
        _constants_finite(e.right)
        if e.op == "/" and not _reads_value(e.right) and _fold(e.right) == 0:
            raise ThresholdError("division by zero")
        if e.op in ("+", "-", "*", "/") and not _reads_value(e):
            folded = _fold(e)
            if isinstance(folded, float) and not math.isfinite(folded):
                raise ThresholdError("a constant part overflows a double")


def _fold(e: Expr) -> float | bool:
    return _eval(e, math.nan)


def parse(expression: str) -> Expr:
    """The checked tree of one expression; ThresholdError saying why it cannot gate a value."""
    tree = _Parser(expression).parse()
    if _type(tree) != "bool":
        raise ThresholdError(
            "the expression must return a bool (true or false), e.g. 'value >= 400', not a number"
        )
    _constants_finite(tree)
    if not _reads_value(tree):
        raise ThresholdError("the expression never reads 'value', so it judges nothing")
    return tree


def _eval(e: Expr, value: float) -> float | bool:
    if isinstance(e, Num | Bool):
        return e.value
    if isinstance(e, Value):
        return value
    if isinstance(e, Unary):
        inner = _eval(e.operand, value)
        return -float(inner) if e.op == "-" else not inner
    if e.op == "&&":
        return bool(_eval(e.left, value)) and bool(_eval(e.right, value))
    if e.op == "||":
        return bool(_eval(e.left, value)) or bool(_eval(e.right, value))
    a, b = float(_eval(e.left, value)), float(_eval(e.right, value))
    if e.op == "/":
        if b == 0:
            raise ThresholdError("division by zero")
        return a / b
    arithmetic = {"+": a + b, "-": a - b, "*": a * b}
    if e.op in arithmetic:
        return arithmetic[e.op]
    compared = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}
    return compared[e.op]


def evaluate(tree: Expr, value: float) -> bool:
    """Whether ``value`` satisfies a checked tree. A non-finite value never satisfies a gate
    (fail closed); ThresholdError only when ``value`` makes a divisor zero."""
    return bool(_eval(tree, value)) and math.isfinite(value)


def key_problem(key: str) -> str | None:
    """Why ``key`` is not a registry key (with the nearest one), or None when it is."""
    if key in REGISTRY:
        return None
    near = get_close_matches(key, REGISTRY, n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    return f"unknown threshold key {key!r} (known: {', '.join(REGISTRY)}){hint}"


def threshold_problems(thresholds: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """``(key, why)`` for every key or expression of a thresholds map that cannot gate a Job,
    in key order."""
    for key in sorted(thresholds):
        problem = key_problem(key)
        if problem:
            yield key, problem
            continue
        try:
            parse(thresholds[key])
        except ThresholdError as e:
            yield key, f"invalid expression {thresholds[key]!r}: {e}"


def _checked(thresholds: dict[str, str]) -> dict[str, str]:
    for key, why in threshold_problems(thresholds):
        # Located at the key, so the error names the line the user wrote it on.
        raise item_error(f".{key}", why)
    return thresholds


# The ``thresholds`` field of Certification options and of a WorkloadRun: checked as it loads.
Thresholds = Annotated[dict[str, str], AfterValidator(_checked)]
