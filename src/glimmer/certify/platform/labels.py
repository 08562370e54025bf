"""Workload-object labels: merging, the insert/same/conflict rule, and validation.

These are the labels of the TrainJob itself (``workloadMetadata.labels``), not of its pods.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from glimmer.api.certify.labels import label_problem
from glimmer.certify.platform.errors import PlatformError

LABELS_PATH = "spec.jobTemplate.spec.workloadMetadata.labels"
# The errors below name the label in their message (§9.2 scenario 12 fixes the text), so a
# caller that blames a field of its own file finds the key with this.
_LABEL_MESSAGE = re.compile(r'^spec\.jobTemplate\.spec\.workloadMetadata\.labels\["([^"]*)"\]: ')


def label_path(path: str, key: str) -> str:
    """``path["key"]``: one label of a label map, as field paths name it."""
    return f'{path}["{key}"]'


def label_key(error: PlatformError) -> str | None:
    """The workload label a :func:`insert_consistent_label` or :func:`validate_labels` error
    (at the default path) is about; None for any other error."""
    m = _LABEL_MESSAGE.match(error.message)
    return m.group(1) if m else None


def merge_labels(
    base: Mapping[str, str] | None, overlay: Mapping[str, str] | None
) -> dict[str, str] | None:
    """A new map of ``base`` overlaid by ``overlay`` (overlay wins); None when both are empty.
    An empty string is a real value: there is no deletion syntax."""
    merged = {**(base or {}), **(overlay or {})}
    return merged or None


def insert_consistent_label(
    labels: Mapping[str, str] | None, key: str, value: str, path: str = LABELS_PATH
) -> dict[str, str]:
    """``labels`` with ``key=value``: inserted when missing, accepted when equal, refused when the
    map already holds a different value."""
    out = dict(labels or {})
    got = out.get(key)
    if got is not None and got != value:
        raise PlatformError(f'{path}["{key}"]: conflicting label value "{got}", expected "{value}"')
    out[key] = value
    return out


def validate_labels(labels: Mapping[str, str] | None, path: str = LABELS_PATH) -> None:
    """At most 32 entries, no reserved key, qualified-name keys, label values.

    Keys are checked in sorted order so the same error always wins.
    """
    if not labels:
        return
    found = label_problem(dict(labels))
    if found is None:
        return
    key, message = found
    raise PlatformError(f'{path}["{key}"]: {message}' if key else f"{path}: {message}")
