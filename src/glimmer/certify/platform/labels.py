"""Workload-object labels: merging, the insert/same/conflict rule, and validation.

These are the labels of the TrainJob itself (``workloadMetadata.labels``), not of its pods.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from glimmer.certify.platform.errors import PlatformError
from glimmer.certify.platform.names import MANAGED_BY_KEY, RESERVED_LABEL_PREFIX

MAX_LABELS = 32
LABELS_PATH = "spec.jobTemplate.spec.workloadMetadata.labels"

_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


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


def qualified_name_problem(key: str) -> str | None:
    """Why ``key`` is not a Kubernetes qualified name, or None when it is one."""
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _PREFIX.match(prefix)):
        return "the prefix must be a DNS subdomain of at most 253 characters"
    if not name or len(name) > 63 or not _NAME.match(name):
        return (
            "the name must be at most 63 characters of letters, digits, '-', '_' and '.', "
            "starting and ending with a letter or digit"
        )
    return None


def reserved(key: str) -> bool:
    """Keys glimmer owns on a workload object."""
    return key == MANAGED_BY_KEY or key.startswith(RESERVED_LABEL_PREFIX)


def validate_labels(labels: Mapping[str, str] | None, path: str = LABELS_PATH) -> None:
    """At most 32 entries, no reserved key, qualified-name keys, label values.

    Keys are checked in sorted order so the same error always wins.
    """
    if not labels:
        return
    if len(labels) > MAX_LABELS:
        raise PlatformError(f"{path}: {len(labels)} labels, at most {MAX_LABELS} are allowed")
    for key in sorted(labels):
        if reserved(key):
            raise PlatformError(f'{path}["{key}"]: the key is reserved for glimmer')
        problem = qualified_name_problem(key)
        if problem:
            raise PlatformError(f'{path}["{key}"]: invalid key: {problem}')
        value = labels[key]
        if not isinstance(value, str) or len(value) > 63 or not _VALUE.match(value):
            raise PlatformError(
                f'{path}["{key}"]: invalid value {value!r}: at most 63 characters of letters, '
                "digits, '-', '_' and '.', starting and ending with a letter or digit"
            )
