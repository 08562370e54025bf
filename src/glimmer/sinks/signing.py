"""HMAC-SHA256 signatures of webhook bodies: ``X-Glimmer-Signature: sha256=<hex>``.

A receiver that holds the same secret recomputes the HMAC over the raw body it received and
compares in constant time; a body changed on the way (or sent by someone else) does not verify.
The secret is read from a file or an environment variable, never from the command line (which
other users of the host can read in the process list).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass
from pathlib import Path

from glimmer.api.budget import check_size
from glimmer.errors import InputError, Location

SIGNATURE_HEADER = "X-Glimmer-Signature"
PREFIX = "sha256="


@dataclass(frozen=True)
class SigningSecret:
    """The key of the signature, and where it came from (for messages; never the value)."""

    key: bytes
    source: str

    def __repr__(self) -> str:
        return f"SigningSecret(source={self.source!r})"

    @classmethod
    def from_file(cls, path: Path) -> SigningSecret:
        """The file's content, a trailing newline stripped (as ``echo`` leaves one)."""
        check_size(path, "secret")  # a secret is bytes, not megabytes: refused before reading
        try:
            raw = path.read_bytes()
        except OSError as e:
            raise InputError(
                f"cannot read the signing secret: {e.strerror}", Location(file=str(path))
            ) from e
        key = raw.rstrip(b"\r\n")
        if not key:
            raise InputError("the signing secret file is empty", Location(file=str(path)))
        return cls(key, f"file {path}")

    @classmethod
    def from_env(cls, name: str) -> SigningSecret:
        value = os.environ.get(name, "")
        if not value:
            raise InputError(f"environment variable {name} is unset or empty")
        return cls(value.encode(), f"environment variable {name}")


def secret_from(file: Path | None, env: str | None) -> SigningSecret | None:
    """The secret named by ``--sink-secret-file`` or ``--sink-secret-env`` (None for neither);
    both at once is refused, as it would be a guess which one the user meant."""
    if file is not None and env is not None:
        raise InputError("--sink-secret-file and --sink-secret-env contradict each other; give one")
    if file is not None:
        return SigningSecret.from_file(file)
    if env is not None:
        return SigningSecret.from_env(env)
    return None


def sign(body: bytes, secret: SigningSecret) -> str:
    """The header value for ``body``."""
    return PREFIX + hmac.new(secret.key, body, hashlib.sha256).hexdigest()


def verify(body: bytes, header: str, secret: SigningSecret) -> bool:
    """True when ``header`` is the signature of ``body`` under ``secret``."""
    return hmac.compare_digest(sign(body, secret), header.strip())
