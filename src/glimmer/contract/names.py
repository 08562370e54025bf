"""Metric names: the grammar, the unit read from a name's suffix, and how a raw stdout key
becomes a canonical lowerCamelCase name.

The registry is a closed list but the name space is open: any well-formed lowerCamelCase name
is legal, so third-party runners need no registration. Only a registered name is held to the
unit its registry row declares.
"""

from __future__ import annotations

import re
from functools import lru_cache

from glimmer.contract.kinds import kind_spec
from glimmer.contract.registry import REGISTRY, Unit

# Checked in this order so that the longer suffix wins where two could match.
UNIT_SUFFIXES: tuple[Unit, ...] = (
    Unit.GBPS,
    Unit.GBS,
    Unit.MBS,
    Unit.TFLOPS,
    Unit.MHZ,
    Unit.US,
    Unit.MS,
    Unit.PCT,
    Unit.C,
    Unit.W,
    Unit.S,
)

# ASCII only: no underscore, dash or dot, and a lower-case first letter.
_NAME = re.compile(r"[a-z][a-zA-Z0-9]*", re.ASCII)
_SEPARATORS = re.compile(r"[_-]")
# Every result of every pass asks the unit of the same few hundred names: the answers (a pure
# function of the name) are kept for at most this many names, as runner output is open-ended.
# validate_metric_name is not kept: it reads the registry, which a caller may extend.
NAMES_REMEMBERED = 4096


@lru_cache(maxsize=NAMES_REMEMBERED)
def unit_of(name: str) -> Unit:
    """The unit a name's suffix declares; NONE when no suffix applies.

    Works on unregistered names too. A name equal to a bare suffix (``tflops`` is not even
    upper-case, but ``C`` or ``S`` would be) carries no unit: the name must be longer.
    """
    for unit in UNIT_SUFFIXES:
        if len(name) > len(unit.value) and name.endswith(unit.value):
            return unit
    return Unit.NONE


def validate_metric_name(name: str) -> str | None:
    """Why ``name`` is not an acceptable canonical metric name, or None when it is."""
    if not name:
        return "metric name is empty"
    if _NAME.fullmatch(name) is None:
        return (
            f"metric name {name!r} must start with a lower-case letter a-z and contain only "
            "ASCII letters and digits (lowerCamelCase; no '_', '-' or '.')"
        )
    spec = REGISTRY.get(name)
    if spec is not None:
        suffix_unit = unit_of(name)
        if suffix_unit is not spec.unit:
            return (
                f"registered metric {name!r} declares unit {spec.unit.value or 'none'} but its "
                f"suffix reads {suffix_unit.value or 'none'}"
            )
    return None


def is_valid_metric_name(name: str) -> bool:
    return validate_metric_name(name) is None


def generic_canonical(key: str) -> str:
    """The kind-independent conversion of a raw key to lowerCamelCase.

    Split on ``_`` and ``-``; the first part is lower-cased, every later part lower-cased with its
    first letter raised. Empty parts contribute nothing, so ``_x`` becomes ``X`` and is then
    rejected rather than quietly accepted. Unit words are NOT recognised: ``gbs`` becomes
    ``Gbs``, ``mhz`` ``Mhz``, ``seconds`` ``Seconds`` (dimensionless names). That is the known
    casing trap; runners avoid it by printing canonical names or through a kind alias.
    """
    if "_" not in key and "-" not in key:
        return key
    parts = _SEPARATORS.split(key)
    head = parts[0].lower()
    tail = []
    for part in parts[1:]:
        low = part.lower()
        tail.append(low[:1].upper() + low[1:])
    return head + "".join(tail)


def canonical_name(kind: str, key: str) -> str:
    """The canonical metric name for raw ``key`` printed by a runner of ``kind``.

    The kind's alias table is consulted first with the exact raw key; otherwise the generic
    conversion applies. Unknown and custom kinds have no aliases.
    """
    spec = kind_spec(kind)
    if spec is not None:
        alias = spec.aliases.get(key)
        if alias is not None:
            return alias
    return generic_canonical(key)
