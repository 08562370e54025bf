"""The error of the platform package: a rendered object breaks a rule the package promises.

It is an :class:`~glimmer.errors.InputError` because every such failure traces back to what a
user wrote (a Certification, a WorkloadRun, an override), so the CLI reports it in one line.
"""

from __future__ import annotations

import re

from glimmer.api.load import Loaded
from glimmer.errors import InputError


class PlatformError(InputError):
    """A render or validation rule of the platform package was broken."""


def owned_by(error: InputError, field: str) -> InputError:
    """``error`` blamed on ``field`` of the owner's file. A field it already names (a path in
    the rendered Workflow, or one relative to an override) is not a path of that file, so it
    moves into the message rather than being lost."""
    part = error.location.field
    if part and part != field:
        error.message = f"{part}: {error.message}"
    error.location.field = field
    return error


def line_key(field: str) -> str:
    """A field path as a loaded file's line map spells it: a map key in brackets
    (``labels["a.b/c"]``) joins with a dot instead (``labels.a.b/c``)."""
    return re.sub(r'\["([^"]*)"\]', r".\1", field)


def locate(error: InputError, loaded: Loaded) -> InputError:
    """``error`` placed in the loaded object's file: its file, document, object and the line of
    its field (or of the nearest written ancestor; the object's first line without a field)."""
    field = error.location.field
    where = loaded.locate(field)
    if field:
        where.line = loaded.line_of(line_key(field))
    error.location = where
    return error
