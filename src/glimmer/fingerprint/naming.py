"""The NodeFingerprint object name of a node (specs/burnin.md §1.6).

The node's own name when it is a valid DNS-1123 subdomain; otherwise a sanitised form cut to 190
characters plus ``-`` and 16 hex characters of the sha256 of the real name, so two nodes whose
names sanitise alike still get different objects (``node-<16 hex>`` when nothing survives).
"""

from __future__ import annotations

import hashlib
import re

_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_NOT_ALLOWED = re.compile(r"[^a-z0-9.-]+")
MAX_NAME = 253
SANITISED_MAX = 190


def valid_name(name: str) -> bool:
    return len(name) <= MAX_NAME and bool(_SUBDOMAIN.match(name))


def _sanitise(node: str) -> str:
    text = _NOT_ALLOWED.sub("-", node.lower())
    labels = [part.strip("-") for part in text.split(".")]
    text = ".".join(part for part in labels if part)[:SANITISED_MAX]
    return text.rstrip("-.")


def fingerprint_name(node: str) -> str:
    """The object name for ``node``."""
    if valid_name(node):
        return node
    tag = hashlib.sha256(node.encode("utf-8")).hexdigest()[:16]
    base = _sanitise(node)
    return f"{base}-{tag}" if base else f"node-{tag}"
