"""Writing a bound as a short decimal, rounded toward the loose side.

A derived bound such as 95.61873 claims a precision the measurement never had, and the gate
reads badly in review. It is rounded to three significant digits, always in the direction that
loosens the gate (a floor down, a ceiling up), so rounding can never make a sample that was
inside the bound fall outside it. The text is what a threshold's ``value`` holds: a finite
decimal with no exponent in the usual range.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

SIGNIFICANT_DIGITS = 3


def _quantum(x: Decimal, digits: int) -> Decimal:
    # The place value of the last kept digit, from the magnitude of x.
    return Decimal(1).scaleb(x.adjusted() - digits + 1)


def _rounded(x: float, rounding: str, digits: int) -> Decimal:
    if not math.isfinite(x):
        raise ValueError(f"cannot write {x!r} as a bound")
    # The shortest decimal that reads back as x: rounding it outward and reading the result as
    # a float64 stays on the loose side of x, because reading decimals is monotonic.
    shortest = Decimal(repr(x))
    if shortest == 0:
        return Decimal(0)
    return shortest.quantize(_quantum(shortest, digits), rounding=rounding)


def _text(d: Decimal) -> str:
    if d == 0:
        return "0"
    # Plain notation for everyday magnitudes, an exponent only for the very small or large.
    if Decimal("1e-4") <= abs(d) < Decimal("1e15"):
        text = format(d, "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    mantissa, exponent = f"{d:e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa}e{int(exponent)}"


def _written(x: float, rounding: str, digits: int) -> str:
    text = _text(_rounded(x, rounding, digits))
    # Near the float64 limit rounding outward can leave the representable range; the exact
    # value is then the only bound that still reads back as a number.
    return text if math.isfinite(float(text)) else repr(x)


def round_down(x: float, digits: int = SIGNIFICANT_DIGITS) -> str:
    """``x`` rounded toward minus infinity to ``digits`` significant digits, as text."""
    return _written(x, ROUND_FLOOR, digits)


def round_up(x: float, digits: int = SIGNIFICANT_DIGITS) -> str:
    """``x`` rounded toward plus infinity to ``digits`` significant digits, as text."""
    return _written(x, ROUND_CEILING, digits)
