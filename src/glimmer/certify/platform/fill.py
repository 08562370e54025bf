"""Filling ``${name}`` placeholders in data files (catalog entries, override files).

A string that is exactly one placeholder takes the value's own type (``${gpusPerNode}`` becomes
the integer 8), so numeric fields stay numbers; a placeholder inside a longer string, or written
``${name|str}``, is written as text. An unknown name is an error rather than an empty string: a
silent blank in an mpirun argument list would only show up on the cluster. Names are letters and
digits only, so a shell variable such as ``${TRAIN_ITERS}`` in an embedded script passes through.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from glimmer.certify.platform.errors import PlatformError

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z][A-Za-z0-9]*)(\|str)?\}")


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def fill(data: Any, values: Mapping[str, Any], where: str = "") -> Any:
    """``data`` (any YAML value) with every placeholder replaced from ``values``."""
    if isinstance(data, dict):
        return {fill(k, values, where): fill(v, values, where) for k, v in data.items()}
    if isinstance(data, list):
        return [fill(v, values, where) for v in data]
    if not isinstance(data, str) or "${" not in data:
        return data

    def lookup(name: str) -> Any:
        if name not in values:
            raise PlatformError(f"{where or 'template'}: unknown placeholder ${{{name}}}")
        return values[name]

    whole = _PLACEHOLDER.fullmatch(data)
    if whole and not whole.group(2):
        return lookup(whole.group(1))
    return _PLACEHOLDER.sub(lambda m: _text(lookup(m.group(1))), data)
