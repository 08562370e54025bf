"""Label rules of the ``certify.glimmer.ai`` group, shared by the API models (at load) and the
platform package (after overrides resolve), so both refuse the same labels with the same words.
"""

from __future__ import annotations

import re

CERTIFY_GROUP = "certify.glimmer.ai"
RESERVED_LABEL_PREFIX = f"{CERTIFY_GROUP}/"
MANAGED_BY_KEY = "app.kubernetes.io/managed-by"
MAX_LABELS = 32

LABEL_VALUE_PATTERN = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_VALUE = re.compile(LABEL_VALUE_PATTERN)


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


def label_value_ok(value: object) -> bool:
    """Whether ``value`` is a valid label value (63 characters at most, may be empty)."""
    return isinstance(value, str) and len(value) <= 63 and bool(_VALUE.match(value))


def reserved_label(key: str) -> bool:
    """Keys glimmer owns on the objects it creates."""
    return key == MANAGED_BY_KEY or key.startswith(RESERVED_LABEL_PREFIX)


def label_problem(labels: dict[str, str]) -> tuple[str, str] | None:
    """The first problem of a workload label map as (key or "", message); keys in sorted order
    so the same error always wins."""
    if len(labels) > MAX_LABELS:
        return "", f"{len(labels)} labels, at most {MAX_LABELS} are allowed"
    for key in sorted(labels):
        if reserved_label(key):
            return key, "the key is reserved for glimmer"
        problem = qualified_name_problem(key)
        if problem:
            return key, f"invalid key: {problem}"
        if not label_value_ok(labels[key]):
            return key, (
                f"invalid value {labels[key]!r}: at most 63 characters of letters, digits, "
                "'-', '_' and '.', starting and ending with a letter or digit"
            )
    return None
