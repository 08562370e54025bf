"""Reading and writing numbers exactly the way the original Go implementation did.

Metric values and threshold values are strings until a rule needs a number. The rules compare
exactly, so the reading must agree with Go's ``strconv.ParseFloat`` on what is a number at all:
Python's ``float()`` is more lenient (it trims whitespace, reads ``nan`` with a sign, reads
``infinity`` spelled any way) and would quietly turn evidence into a verdict. Writing follows
Go's ``%g`` (messages) and ``strconv.FormatFloat(x, 'f', -1, 64)`` (folded sums).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal

# Go accepts underscores between digits (Go literal syntax); the digit groups are checked below.
_DEC = re.compile(r"[+-]?(?:[0-9_]+(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][+-]?[0-9_]+)?")
# Hex floats need a binary exponent ("p"), as in Go.
_HEX = re.compile(
    r"[+-]?0[xX](?:[0-9a-fA-F_]+(?:\.[0-9a-fA-F_]*)?|\.[0-9a-fA-F_]+)[pP][+-]?[0-9_]+"
)
_INF = re.compile(r"[+-]?(?:inf|infinity)", re.IGNORECASE)
_NAN = re.compile(r"nan", re.IGNORECASE)
# What runners print and thresholds say almost always: plain decimals, read as _DEC reads them
# without its checks (every gate of every attempt reads two numbers; at 1,024 nodes the checks
# were half of a verdict's evaluation).
_PLAIN = re.compile(r"-?[0-9]+(?:\.[0-9]+)?", re.ASCII)


@dataclass(frozen=True)
class Reading:
    """The outcome of reading one string as a float64.

    ``value`` is None when the string is not a number (Go: a syntax or range error). A string
    that reads as NaN or an infinity has a value that is not finite.
    """

    value: float | None

    @property
    def numeric(self) -> bool:
        return self.value is not None

    @property
    def finite(self) -> bool:
        return self.value is not None and math.isfinite(self.value)


def _underscores_ok(text: str) -> bool:
    """Go's rule: an underscore must sit between two digits (a base prefix counts as one)."""
    body = text.lstrip("+-")
    hex_digits = body[:2].lower() == "0x"
    saw = "0" if hex_digits else "^"
    start = 2 if hex_digits else 0
    for ch in body[start:]:
        is_digit = ch.isdigit() or (hex_digits and ch.lower() in "abcdef")
        if is_digit:
            saw = "0"
        elif ch == "_":
            if saw != "0":
                return False
            saw = "_"
        else:
            if saw == "_":
                return False
            saw = "!"
    return saw != "_"


def read_float(text: str) -> Reading:
    """Read ``text`` as Go's ``strconv.ParseFloat(text, 64)`` would.

    Accepted: decimal and hexadecimal float syntax, ``NaN`` and a signed ``Inf``/``Infinity``
    in any case. Refused (not numeric): surrounding whitespace, a signed NaN, words, an empty
    string, and a finite spelling too large for a float64 (Go reports a range error there).
    Total: it never raises, whatever ``text`` holds.
    """
    if _PLAIN.fullmatch(text):
        value = float(text)
        return Reading(None if math.isinf(value) else value)
    return _read_by_rules(text)


def _read_by_rules(text: str) -> Reading:
    """:func:`read_float` of any text, by Go's rules one by one."""
    if not text.isascii():
        return Reading(None)
    if _NAN.fullmatch(text):
        return Reading(math.nan)
    if _INF.fullmatch(text):
        return Reading(-math.inf if text.startswith("-") else math.inf)
    if _DEC.fullmatch(text):
        if "_" in text and not _underscores_ok(text):
            return Reading(None)
        digits = text.replace("_", "")
        if not any(c.isdigit() for c in digits.split("e")[0].split("E")[0]):
            return Reading(None)
        value = float(digits)
    elif _HEX.fullmatch(text):
        if "_" in text and not _underscores_ok(text):
            return Reading(None)
        try:
            value = float.fromhex(text.replace("_", ""))
        except OverflowError:
            # Go: ErrRange. Python raises where Go returns an error, and a raise here once
            # wedged a run: a runner printing ``0x1p1024`` must fail its gate, not the engine.
            return Reading(None)
    else:
        return Reading(None)
    if math.isinf(value):
        return Reading(None)  # Go: ErrRange; the string named a number, not an infinity
    return Reading(value)


def _shortest_digits(x: float) -> tuple[str, int]:
    """Shortest round-trip digits of a finite, non-zero, non-negative ``x``.

    Returns (digits, point) meaning 0.<digits> x 10**point, with no leading or trailing zeros.
    """
    _, digit_tuple, exponent = Decimal(repr(x)).as_tuple()
    assert isinstance(exponent, int)
    raw = "".join(str(d) for d in digit_tuple)
    digits = raw.lstrip("0")
    point = len(digits) + exponent
    return digits.rstrip("0"), point


def format_fixed(x: float) -> str:
    """Go's ``strconv.FormatFloat(x, 'f', -1, 64)``: shortest digits, never an exponent.

    3.0 gives ``3``; 0.1 + 0.2 gives ``0.30000000000000004``; infinities give ``+Inf``/``-Inf``.
    """
    special = _special(x)
    if special is not None:
        return special
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0:
        return sign + "0"
    digits, point = _shortest_digits(abs(x))
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def format_g(x: float) -> str:
    """Go's ``%g`` for a float64: shortest digits, exponent form below 1e-4 or from 1e6 up.

    For the shortest form Go decides on precision 6: 123456 prints as is, 1234567 as
    ``1.234567e+06``, 0.00001 as ``1e-05`` (at least two exponent digits).
    """
    special = _special(x)
    if special is not None:
        return special
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0:
        return sign + "0"
    digits, point = _shortest_digits(abs(x))
    exp = point - 1
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        exp_sign = "-" if exp < 0 else "+"
        return f"{sign}{mantissa}e{exp_sign}{abs(exp):02d}"
    return format_fixed(x)


def _special(x: float) -> str | None:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return None
