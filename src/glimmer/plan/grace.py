"""How a start that could not resolve is classified (§2.1): wait, retry, or settle.

A *configuration* error (something missing or invalid in what the user applied) on a run
younger than the resolve grace is retried every 15 s, because ``kubectl apply -f dir/`` creates
objects in file order and the run may simply have arrived before its profile. After the grace
the run settles ``Error`` with a ``resolve`` result. A *transient* error (the API or transport
failing) is never a verdict: the pass returns it and is retried with back-off.
"""

from __future__ import annotations

from datetime import datetime, timedelta

RESOLVE_GRACE = timedelta(minutes=2)
RESOLVE_RETRY = timedelta(seconds=15)
# Words of a transport or server failure, as the original matched them in error texts.
TRANSIENT_MARKERS = (
    "connection refused",
    "context deadline exceeded",
    "TLS handshake timeout",
    "unavailable",
)


def is_transient(message: str) -> bool:
    """True when an error text reads as a transport or server failure, not a bad spec."""
    return any(marker in message for marker in TRANSIENT_MARKERS)


def within_resolve_grace(created: datetime | None, now: datetime) -> bool:
    """True while a run created at ``created`` may still wait for what it names to appear."""
    return created is not None and now - created < RESOLVE_GRACE
