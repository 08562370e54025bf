"""The fingerprint digest: ``v1:`` and the sha256 of the identity's canonical JSON (sorted keys,
no spaces, UTF-8, unknown values as ``null``), the scheme named inside the hashed text too.

The scheme prefix lets the hashed form change later (v2) without that change ever reading as
drift: digests of different schemes are not compared.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

from glimmer.fingerprint.identity import Identity
from glimmer.fingerprint.keys import SCHEME


def canonical(identity: Identity) -> bytes:
    """The canonical JSON the digest is taken over."""
    document = {
        "scheme": SCHEME,
        "osImage": identity.os_image,
        "kernel": identity.kernel,
        "labels": dict(identity.labels),
        "gpus": [asdict(g) for g in identity.gpus],
        "nics": [asdict(n) for n in identity.nics],
    }
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def digest(identity: Identity) -> str:
    """``v1:<64 hex>``."""
    return f"{SCHEME}:{hashlib.sha256(canonical(identity)).hexdigest()}"


def scheme_of(value: str) -> str:
    """The scheme prefix of a digest (``v1``), or "" when it has none."""
    head, sep, _ = value.partition(":")
    return head if sep else ""
