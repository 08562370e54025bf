"""Kubernetes resource quantities in canonical form (``1000m`` → ``1``, ``1024Mi`` → ``1Gi``),
as the runner's ``BURNIN_RESOURCE_LIMITS`` states them.

The rules follow the API machinery's ``Quantity.String()``: a binary suffix stays binary when
the value is a whole number of at least 1024 in magnitude; otherwise the value is written as an
integer mantissa with a decimal exponent that is a multiple of three (an SI suffix, or ``eN``
when it was written in exponent form). Precision finer than ``1n`` rounds up (away from zero).
"""

from __future__ import annotations

import re
from decimal import ROUND_UP, Decimal, localcontext

_NUMBER = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)$")
_EXPONENT = re.compile(r"^[eE]([+-]?[0-9]+)$")

BINARY: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
DECIMAL: dict[str, int] = {
    "n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}  # fmt: skip
_DECIMAL_BY_EXPONENT = {exponent: suffix for suffix, exponent in DECIMAL.items()}
_BINARY_BY_POWER = {power: suffix for suffix, power in BINARY.items()}
_NANO = Decimal("1e-9")


def _parse(text: str) -> tuple[Decimal, str] | None:
    """The value and its format (``binary``, ``decimal`` or ``exponent``), or None."""
    match = _NUMBER.match(text.strip())
    if match is None:
        return None
    number, suffix = Decimal(match.group(1)), match.group(2)
    with localcontext() as ctx:
        ctx.prec = 100
        if suffix in BINARY:
            return number * (Decimal(2) ** BINARY[suffix]), "binary"
        if suffix in DECIMAL:
            return number.scaleb(DECIMAL[suffix]), "decimal"
        exponent = _EXPONENT.match(suffix)
        if exponent is not None:
            return number.scaleb(int(exponent.group(1))), "exponent"
    return None


def _decimal_form(value: Decimal, form: str) -> str:
    sign, digits, raw_exponent = value.normalize().as_tuple()
    assert isinstance(raw_exponent, int)  # a parsed quantity is finite
    exponent: int = raw_exponent
    mantissa = int("".join(map(str, digits)))
    # Move the exponent down to a multiple of three, growing the mantissa to match.
    while exponent % 3 != 0:
        mantissa *= 10
        exponent -= 1
    if form == "decimal" and exponent > max(DECIMAL.values()):
        mantissa *= 10 ** (exponent - max(DECIMAL.values()))
        exponent = max(DECIMAL.values())
    suffix = (
        _DECIMAL_BY_EXPONENT[exponent]
        if form == "decimal"
        else ("" if exponent == 0 else f"e{exponent}")
    )
    return f"{'-' if sign else ''}{mantissa}{suffix}"


def _binary_form(value: int) -> str:
    magnitude, power = abs(value), 0
    while magnitude % 1024 == 0 and power < max(BINARY.values()):
        magnitude //= 1024
        power += 10
    suffix = _BINARY_BY_POWER.get(power, "")
    return f"{'-' if value < 0 else ''}{magnitude}{suffix}"


def canonical_quantity(quantity: int | float | str) -> str:
    """The canonical string of a quantity; one that does not parse is returned as written."""
    text = str(quantity).strip() if not isinstance(quantity, str) else quantity.strip()
    parsed = _parse(text)
    if parsed is None:
        return text
    value, form = parsed
    with localcontext() as ctx:
        ctx.prec = 100
        exponent = value.as_tuple().exponent
        if isinstance(exponent, int) and exponent < -9:
            value = value.quantize(_NANO, rounding=ROUND_UP)
    if value == 0:
        return "0"
    if form == "binary":
        if abs(value) >= 1024 and value == value.to_integral_value():
            return _binary_form(int(value))
        form = "decimal"
    return _decimal_form(value, form)
